"""`gateway selftest`: the adversarial suite's probes played on a scratch copy of the person's own config and
manifest, filled with invented items, through a real `gateway serve` spoken to with the MCP SDK's client.

What is copied: the config's `[gateway]`, `[access]` and `[profiles]` tables, and of each plugin's table only what
cannot name a source (its switches and numbers, and the core's `prefix`, `disabled_tools`, `refresh`): every
path, address, account, server and password is left behind, so each plugin reads its defaults, which the scratch
home (HOME and the XDG folders pointed into it) holds. The manifest is copied with the person's project ids and
routes; a `paths` route written as an absolute path is moved under the scratch home (`~/...` for one under the
person's home, `~/root/...` for one elsewhere), so it takes the invented files there and nothing of the person's.
The person's data is never read, and nothing is written outside the scratch folder, which is removed at the end.

The invented items are written in the standard formats the built-in mail plugin reads (a Maildir message, a
Markdown note, a vdir task, event and card), one per route of each project, each holding that project's canary
word: a message from each `senders` address (authenticated by the scratch account's server), with each
`subjects` route in its subject, in each `folders` folder and each `accounts` account; a note under each `paths`
route; a task in each `lists` list, an event in each `calendars` calendar, a card in each `addressbooks` book.
`apps` and `urls` routes (the timeline's) get no item yet. A manifest with no closed project gets one of its own,
`selftest-closed`, with a path and a sender route.

The probes: the gateway is served twice. First with every project opened (in the copy only): each closed
project's canary must reach some answer, else its items prove nothing (said, not failed), and a card number
planted in a note must be found by no search of its digits and shown whole by no answer. Then with the manifest
as the person wrote it: every reading tool (called with no arguments when it needs none, with each canary as its
`query`, with each address given in the first round as its single required argument), every resource listed
or given in the first round, and every prompt: no closed project's canary in any of them. Then the manifest is
emptied while calls are in flight: nothing of any project is given (the gate closes, never opens). Last, each
tool taking a `query` is given one of 100,000 characters: it must be refused with a sentence. Tools that may
reach out of the computer (`openWorldHint`) and tools that write are never called.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import formatdate
from pathlib import Path
from typing import Any

import anyio
import attrs
import tomli_w

from gateway.access import Project
from gateway.config import CORE_PLUGIN_KEYS, Snapshot

OWN_SERVER = "mx.selftest.example.org"
CARD = "4111 1111 1111 1111"  # passes Luhn's check: the masks must hide it
CARD_MARK = "plumtreecardnote"
CARD_SEARCHES = ("4111111111111111", "4111 1111 1111 1111", "411111111111")
CARD_WHOLE = re.compile(r"4111[\s-]?1111[\s-]?1111[\s-]?1111")
OVERSIZED = 100_000
SCRATCH_CLOSED = "selftest-closed"
MAX_ADDRESSES = 40
ADDRESS_ARGUMENTS = ("address", "uri", "id", "message_id", "path", "name")


@attrs.frozen
class Outcome:
    """One probe's verdict: `held` or not, and a sentence saying what was tried and found."""

    probe: str
    held: bool
    detail: str

    def line(self) -> str:
        return f"{'held  ' if self.held else 'FAILED'}  {self.probe}: {self.detail}"


def canary_of(project_id: str) -> str:
    """A word that no real text holds, made from the project's id (letters only, so every index keeps it whole)."""
    letters = "".join(chr(ord("a") + b % 26) for b in hashlib.sha256(project_id.encode()).digest()[:8])
    return f"selftest{letters}canary"


# -- the scratch copy -------------------------------------------------------------------------------------


def scratch_table(table: dict[str, Any]) -> dict[str, Any]:
    """A plugin's table with everything that could name a source left out: switches and numbers stay."""
    kept = {}
    for key, value in table.items():
        if key in CORE_PLUGIN_KEYS or (isinstance(value, bool | int | float)):
            kept[key] = value
    return kept


def scratch_path_route(route: str, real_home: Path) -> str:
    """A `paths` route as it reads in the scratch home: `~` and `$HOME` as they are (the scratch home's), an
    absolute path under the person's home made relative to `~`, any other absolute one moved under `~/root`.
    Wildcards are kept: the invented file is written where a plain name stands in for them."""
    if route.startswith(("~", "$HOME")) or not route.startswith("/"):
        return route
    path = Path(route)
    with contextlib.suppress(ValueError):
        return "~/" + str(path.relative_to(real_home))
    return "~/root" + route


def _concrete(route: str) -> str:
    """A route's wildcards replaced by a plain name, so that a file can be written where it points."""
    return re.sub(r"\[[^\]]*\]", "x", route).replace("**", "selftest").replace("*", "selftest").replace("?", "x")


def _expanded(route: str, home: Path) -> Path:
    route = _concrete(route)
    if route.startswith("$HOME"):
        route = "~" + route[len("$HOME"):]
    return home / route[2:] if route.startswith("~/") else home if route == "~" else Path(route)


@attrs.define
class Scratch:
    """The scratch home and what was planted in it."""

    root: Path
    home: Path
    projects: list[Project]
    canaries: dict[str, str]  # closed project id: its canary
    opened_canaries: dict[str, str]  # open project id: its canary
    planted: dict[str, list[str]] = attrs.field(factory=dict)  # project id: what was planted for it
    unplanted: list[str] = attrs.field(factory=list)  # route kinds that got no item
    manifest: Path = Path()
    manifest_text: str = ""

    def folders(self, which: str) -> Path:
        """The XDG folders of one of the two scratch gateways (`opened`, `closed`): each its own config, stores
        and audit log; both read the invented items of the one scratch home."""
        return self.root / which

    def env(self, which: str) -> dict[str, str]:
        """The environment of a scratch `gateway serve`: the scratch home, and nothing of the person's but how to
        find Python and the installed plugins."""
        passed = {key: os.environ[key] for key in ("PATH", "PYTHONPATH", "VIRTUAL_ENV", "LANG", "TZ")
                  if key in os.environ}
        folders = self.folders(which)
        return {**passed, "HOME": str(self.home), "XDG_CONFIG_HOME": str(folders / "config"),
                "XDG_DATA_HOME": str(folders / "data"), "XDG_STATE_HOME": str(folders / "state"),
                "XDG_CACHE_HOME": str(folders / "cache")}


def make_scratch(snapshot: Snapshot, config_text: str | None, lock_file: Path | None) -> Scratch:
    """The scratch home: the config and manifest copied (sources left behind), invented items planted."""
    root = Path(tempfile.mkdtemp(prefix="gateway-selftest-")).resolve()
    home = root / "home"
    home.mkdir(mode=0o700)
    real_home = Path.home()
    raw = tomllib.loads(config_text) if config_text else {}
    config: dict[str, Any] = {}
    if isinstance(raw.get("gateway"), dict):
        config["gateway"] = dict(raw["gateway"])
    access = dict(raw.get("access") or {}) if isinstance(raw.get("access"), dict) else {}
    access["projects"] = "projects.toml"
    config["access"] = access
    if isinstance(raw.get("profiles"), dict):
        config["profiles"] = raw["profiles"]
    plugins = {name: scratch_table(table) for name, table in (raw.get("plugins") or {}).items()
               if isinstance(table, dict)}
    projects = [attrs.evolve(p, paths=tuple(scratch_path_route(r, real_home) for r in p.paths))
                for p in snapshot.gate.projects]
    if not any(not p.ai for p in projects):
        projects.append(Project(SCRATCH_CLOSED, "Closed by the selftest", False, paths=("~/selftest-closed",),
                                senders=("@closed.selftest.example.net",)))
    scratch = Scratch(root, home, projects, {p.id: canary_of(p.id) for p in projects if not p.ai},
                      {p.id: canary_of(p.id) for p in projects if p.ai})
    mail = plugins.setdefault("mail", {})
    mail.update(_plant(scratch))
    config["plugins"] = plugins
    scratch.manifest_text = manifest_toml(projects)
    for which, manifest in (("opened", manifest_toml(projects, opened=True)), ("closed", scratch.manifest_text)):
        folder = scratch.folders(which) / "config" / "gateway"
        folder.mkdir(parents=True)
        (folder / "config.toml").write_text(tomli_w.dumps(config))
        (folder / "projects.toml").write_text(manifest)
        if lock_file is not None and lock_file.is_file():
            shutil.copyfile(lock_file, folder / lock_file.name)
    scratch.manifest = scratch.folders("closed") / "config" / "gateway" / "projects.toml"
    return scratch


def manifest_toml(projects: Iterable[Project], opened: bool = False) -> str:
    entries = []
    for project in projects:
        entry: dict[str, Any] = {"id": project.id, "name": project.name or project.id, "ai": opened or project.ai}
        if project.client:
            entry["client"] = project.client
        entry.update({kind: list(routes) for kind, routes in project.routes.items()})
        entries.append(entry)
    return tomli_w.dumps({"project": entries})


def _plant(scratch: Scratch) -> dict[str, Any]:
    """Write an invented item for each route of each project; the mail plugin's table that reads them."""
    home, now = scratch.home, time.time()
    mail_root, vdir = home / "Mail", home / ".local" / "share" / "vdirsyncer"
    accounts: dict[str, Path] = {"selftest": mail_root / "selftest"}
    counter = iter(range(1, 10**6))

    def deliver(account: str, folder: str, message: EmailMessage) -> None:
        root = accounts.setdefault(account, mail_root / re.sub(r"[^\w.-]", "_", account))
        target = root.joinpath(*[part for part in folder.split("/") if part not in ("", ".", "..")])
        for sub in ("cur", "new", "tmp"):
            (target / sub).mkdir(parents=True, exist_ok=True)
        (target / "cur" / f"{int(now)}.M{next(counter)}P1.selftest:2,S").write_bytes(bytes(message))

    def message(canary: str, sender: str = "Sel Test <sel@outside.selftest.example.com>",
                subject: str = "") -> EmailMessage:
        mail = EmailMessage()
        domain = sender.rpartition("@")[2].rstrip(">")
        mail["From"] = sender
        mail["To"] = "Pat Selftest <pat@selftest.example.org>"
        mail["Subject"] = f"{subject} {canary}".strip()
        mail["Date"] = formatdate(now - 600)
        mail["Message-ID"] = f"<m{next(counter)}@selftest.example.org>"  # no canary: a refusal may echo it
        mail["Authentication-Results"] = (f"{OWN_SERVER}; spf=pass smtp.mailfrom={domain}; dkim=pass header.d={domain}; "
                                          f"dmarc=pass header.from={domain}")
        mail.set_content(f"Hello Pat,\n\nThe {canary} plan for this week.\n")
        return mail

    def ics(kind: str, list_folder: Path, canary: str, extra: list[str]) -> None:
        list_folder.mkdir(parents=True, exist_ok=True)
        uid = f"selftest-{next(counter)}"
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//gateway selftest//EN", f"BEGIN:{kind}", f"UID:{uid}",
                 f"DTSTAMP:{stamp}", f"SUMMARY:The {canary} {kind.lower()}", *extra, f"END:{kind}", "END:VCALENDAR"]
        (list_folder / f"{uid}.ics").write_text("\r\n".join(lines) + "\r\n")

    tomorrow = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y%m%d")
    for project in scratch.projects:
        canary = canary_of(project.id)
        planted = scratch.planted.setdefault(project.id, [])
        for route in project.paths:
            note = _expanded(route, home) / f"Selftest {project.id}.md"
            note.parent.mkdir(parents=True, exist_ok=True)
            note.write_text(f"# Selftest {canary}\n\nThe {canary} note.\n")
            planted.append(f"a note under {route}")
            session = f"5e1f7e57-0000-4000-8000-{next(counter):012d}"
            transcript = home / ".claude" / "projects" / f"-selftest-{project.id}" / f"{session}.jsonl"
            transcript.parent.mkdir(parents=True, exist_ok=True)
            transcript.write_text(_transcript(session, canary, str(note.parent)))
            planted.append(f"an agent session (Claude Code's) working under {route}")
        for route in project.senders:
            if "@" not in route:
                continue  # a phone number: the texts plugin's, no item yet
            address = f"someone{route}" if route.startswith("@") else route
            deliver("selftest", "INBOX", message(canary, f"Someone <{address}>"))
            planted.append(f"a message from {address}")
        for route in project.subjects:
            deliver("selftest", "INBOX", message(canary, subject=_concrete(route)))
            planted.append(f"a message about {route!r}")
        for route in project.folders:
            account, _slash, folder = route.partition("/") if "/" in route else ("selftest", "", route)
            deliver(account, folder or "INBOX", message(canary))
            planted.append(f"a message in {route}")
        for route in project.accounts:
            deliver(route, "INBOX", message(canary))
            planted.append(f"a message of the account {route}")
        for route in project.lists:
            ics("VTODO", vdir / "tasks" / route, canary, ["STATUS:NEEDS-ACTION"])
            planted.append(f"a task in the list {route}")
        for route in project.calendars:
            ics("VEVENT", vdir / "calendars" / route, canary,
                [f"DTSTART:{tomorrow}T090000Z", f"DTEND:{tomorrow}T100000Z"])
            planted.append(f"an event in the calendar {route}")
        for route in project.addressbooks:
            book = vdir / "contacts" / route
            book.mkdir(parents=True, exist_ok=True)
            (book / f"selftest-{next(counter)}.vcf").write_text(
                f"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:selftest-{next(counter)}\r\nFN:Sam {canary}\r\nN:{canary};Sam;;;\r\n"
                f"EMAIL:sam@card.selftest.example.com\r\nNOTE:The {canary} card\r\nEND:VCARD\r\n")
            planted.append(f"a card in the address book {route}")
        for kind in ("apps", "urls"):
            if getattr(project, kind):
                scratch.unplanted.append(kind)
        if project.senders and any("@" not in r for r in project.senders):
            scratch.unplanted.append("senders (phone numbers)")
    # Outside every project: a note holding a card number, for the masked-digits probe.
    notes = home / "Notes"
    notes.mkdir(exist_ok=True)
    (notes / "Selftest card.md").write_text(f"# Card {CARD_MARK}\n\nThe {CARD_MARK} card is {CARD}.\n")
    deliver("selftest", "Drafts", message("draftsfolder"))
    for sub in ("tasks", "calendars", "contacts"):
        (vdir / sub).mkdir(parents=True, exist_ok=True)
    return {
        "accounts": [{"name": name, "maildir": str(root), "addresses": ["pat@selftest.example.org"],
                      "authserv_id": OWN_SERVER, "drafts": "Drafts"} for name, root in accounts.items()],
        "notes": str(home), "tasks": str(vdir / "tasks"), "calendars": str(vdir / "calendars"),
        "contacts": str(vdir / "contacts"),
    }


def _transcript(session: str, canary: str, cwd: str) -> str:
    """A short agent session in the JSON lines Claude Code writes (~/.claude/projects), its folder `cwd`."""
    when = datetime.now(UTC) - timedelta(minutes=10)
    lines = []
    for n, (role, text) in enumerate((("user", f"Plan the {canary} work"), ("assistant", f"The {canary} plan."))):
        lines.append({"type": role, "uuid": f"{session}-{n}", "sessionId": session, "cwd": cwd,
                      "timestamp": (when + timedelta(seconds=n)).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                      "message": {"role": role, "content": text,
                                  **({"id": f"msg-{session}-{n}"} if role == "assistant" else {})}})
    return "".join(json.dumps(line) + "\n" for line in lines)


# -- the probes -------------------------------------------------------------------------------------------


def _text(result: Any) -> str:
    try:
        return json.dumps(result.model_dump(mode="json"), ensure_ascii=False)
    except AttributeError:
        return str(result)


@attrs.define
class Served:
    """One scratch `gateway serve`, asked as a host asks; every answer kept as (label, text)."""

    client: Any
    answers: list[tuple[str, str]] = attrs.field(factory=list)
    tools: list[Any] = attrs.field(factory=list)

    async def ask(self, label: str, call: Any) -> str:
        try:
            text = _text(await call)
        except Exception as refusal:  # noqa: BLE001 - an error is an answer too
            text = f"(refused) {refusal}"
        self.answers.append((label, text))
        return text

    def readers(self) -> list[Any]:
        """The tools safe to call on the scratch copy: those that only read and never reach out."""
        return [t for t in self.tools if t.annotations is not None and t.annotations.read_only_hint
                and not t.annotations.open_world_hint]


async def _serve(scratch: Scratch, which: str, body: Callable[[Served], Any]) -> Served:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp_types import Implementation

    params = StdioServerParameters(command=sys.executable, args=["-m", "gateway", "serve"],
                                    env=scratch.env(which))
    with open(os.devnull, "w") as quiet:
        async with Client(stdio_client(params, errlog=quiet), mode="legacy", read_timeout_seconds=60,
                          client_info=Implementation(name="gateway-selftest", version="1")) as client:
            session = Served(client)
            session.tools = list((await client.list_tools()).tools)
            await body(session)
            return session


def _schema(tool: Any) -> tuple[dict[str, Any], list[str]]:
    schema = tool.input_schema or {}
    return schema.get("properties") or {}, list(schema.get("required") or [])


async def _everything(session: Served, queries: Iterable[str], addresses: Iterable[str]) -> None:
    """Every reading tool, resource and prompt, asked as the canary check of the suite asks them (a few at once,
    as a host may)."""
    client = session.client
    addresses = list(addresses)[:MAX_ADDRESSES]
    asks: list[tuple[str, Callable[[], Any]]] = []

    def call(tool: str, arguments: dict[str, Any]) -> Callable[[], Any]:
        return lambda: client.call_tool(tool, arguments)

    for tool in session.readers():
        properties, required = _schema(tool)
        if not required:
            asks.append((f"{tool.name} {{}}", call(tool.name, {})))
        if "query" in properties and set(required) <= {"query"}:
            asks += [(f"{tool.name} query={query}", call(tool.name, {"query": query})) for query in queries]
        if len(required) == 1 and required[0] in ADDRESS_ARGUMENTS:
            asks += [(f"{tool.name} {required[0]}={address}", call(tool.name, {required[0]: address}))
                     for address in addresses]
    await _all_at_once(session, asks)
    resources: list[Any] = []
    with contextlib.suppress(Exception):
        page = await client.list_resources()
        resources.extend(page.resources)
        while page.next_cursor and len(resources) < 500:
            page = await client.list_resources(cursor=page.next_cursor)
            resources.extend(page.resources)
    session.answers.append(("resources/list", json.dumps([r.model_dump(mode="json") for r in resources])))
    uris = dict.fromkeys([str(r.uri) for r in resources][:200] + addresses)
    asks = [(f"resources/read {uri}", (lambda uri=uri: client.read_resource(uri))) for uri in uris]
    prompts: list[Any] = []
    with contextlib.suppress(Exception):
        prompts = list((await client.list_prompts()).prompts)
    asks += [(f"prompts/get {prompt.name}", (lambda name=prompt.name: client.get_prompt(name, {})))
             for prompt in prompts if not any(a.required for a in prompt.arguments or [])]
    await _all_at_once(session, asks)


async def _all_at_once(session: Served, asks: list[tuple[str, Callable[[], Any]]], at_once: int = 6) -> None:
    limiter = anyio.CapacityLimiter(at_once)

    async def one(label: str, make: Callable[[], Any]) -> None:
        async with limiter:
            await session.ask(label, make())

    async with anyio.create_task_group() as tasks:
        for label, make in asks:
            tasks.start_soon(one, label, make)


def _given_addresses(scratch: Scratch) -> list[str]:
    """Every address the scratch gateway gave so far, from its own audit log."""
    from gateway.audit import AuditLog

    found: dict[str, None] = {}
    for entry in AuditLog(scratch.folders("opened") / "state" / "gateway" / "audit").read():
        for address in entry.get("given") or []:
            if isinstance(address, str) and address:
                found.setdefault(address)
    return list(found)


def _where(session: Served, word: str) -> list[str]:
    return [label for label, text in session.answers if word in text]


async def play(scratch: Scratch, progress: Callable[[str], None]) -> list[Outcome]:
    """Both scratch gateways started at once; the opened one's round first, then the closed one's, which asks for
    every address the opened one gave."""
    outcomes: list[Outcome] = []
    queries = [*scratch.canaries.values(), *scratch.opened_canaries.values()]
    given = anyio.Event()
    addresses: list[str] = []
    empty_round: dict[str, Any] = {}

    async def opened_round(session: Served) -> None:
        progress("asking the copy with every project opened (do the invented items reach the tools?)")
        await _everything(session, [*queries, CARD_MARK, *CARD_SEARCHES], [])
        addresses.extend(_given_addresses(scratch))
        given.set()

    async def closed_round(session: Served) -> None:
        await given.wait()
        progress("asking the copy with your manifest: every tool, resource and prompt, and each address given")
        await _everything(session, queries, addresses)
        await _emptied_and_oversized(scratch, session, queries, empty_round, progress)

    sessions: dict[str, Served] = {}

    async def serve(which: str, body: Callable[[Served], Any]) -> None:
        try:
            sessions[which] = await _serve(scratch, which, body)
        finally:
            given.set()  # the other round never waits for one that failed

    progress("starting two gateways on the scratch copy")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(serve, "opened", opened_round)
        tasks.start_soon(serve, "closed", closed_round)
    opened, closed = sessions["opened"], sessions["closed"]
    searches = [(label, text) for label, text in opened.answers
                if any(label.endswith(f"query={digits}") for digits in CARD_SEARCHES)]
    found_by_digits = [label for label, text in searches if CARD_MARK in text]
    shown_whole = [label for label, text in opened.answers if CARD_WHOLE.search(text)]
    seen = any(CARD_MARK in text for _label, text in opened.answers)
    if found_by_digits or shown_whole:
        outcomes.append(Outcome("masked digits", False, "a card number planted in a note was "
                                + ("found by searching its digits: " + ", ".join(found_by_digits[:3])
                                   if found_by_digits else "shown whole by: " + ", ".join(shown_whole[:3]))))
    elif not searches:
        outcomes.append(Outcome("masked digits", True, "no tool searches by words here, and no answer showed the "
                                                       "planted card number whole"))
    else:
        outcomes.append(Outcome("masked digits", True, f"a card number planted in a note, searched by its digits "
                                f"{len(searches)} times: found by none, shown whole by no answer"
                                + ("" if seen else " (the note itself reached no answer)")))

    checked = closed.answers[:empty_round.get("start", len(closed.answers))]
    for project_id, canary in scratch.canaries.items():
        leaks = [label for label, text in checked if canary in text]
        proof = "" if _where(opened, canary) else (" (but its invented items reached no tool even with it opened: "
                                                    "nothing here reads "
                                                    + ", ".join(scratch.planted.get(project_id) or ["its routes"])
                                                    + ")")
        added = " (a project the selftest added: your manifest closes none)" if project_id == SCRATCH_CLOSED else ""
        if leaks:
            outcomes.append(Outcome(f"closed project {project_id!r}", False,
                                    f"its canary was given by {len(leaks)} answer(s): {', '.join(leaks[:4])}{added}"))
        else:
            outcomes.append(Outcome(f"closed project {project_id!r}", True,
                                    f"its canary in none of {len(checked)} answers ({len(closed.readers())} tools, "
                                    f"resources, prompts, {len(addresses)} addresses asked for){added}{proof}"))
    during = closed.answers[empty_round.get("start", 0):empty_round.get("end", 0)]
    after = closed.answers[empty_round.get("after", 0):empty_round.get("end", 0)]
    every_canary = [*scratch.canaries.values(), *scratch.opened_canaries.values(), CARD_MARK]
    leaked = [label for label, text in during if any(c in text for c in scratch.canaries.values())]
    opened_up = [label for label, text in after if any(c in text for c in every_canary)]
    if leaked or opened_up:
        outcomes.append(Outcome("manifest emptied mid-call", False, "answers gave " + (
            "a closed project's items: " + ", ".join(leaked[:3]) if leaked else
            "items while the manifest was empty: " + ", ".join(opened_up[:3]))))
    else:
        outcomes.append(Outcome("manifest emptied mid-call", True, f"{len(during)} calls during and after: none gave "
                                "a closed project's items, none gave anything while the manifest was empty"))
    oversized = empty_round.get("oversized", [])
    crashed = [name for name, text in oversized
               if not _refused_with_a_sentence(text)]
    if crashed:
        outcomes.append(Outcome("oversized query", False, "not refused with a sentence by: " + ", ".join(crashed)))
    elif oversized:
        outcomes.append(Outcome("oversized query", True, f"{len(oversized)} tool(s) refused a "
                                f"{OVERSIZED:,}-character query with a sentence"))
    else:
        outcomes.append(Outcome("oversized query", True, "no tool here takes a query"))
    return outcomes


async def _emptied_and_oversized(scratch: Scratch, session: Served, queries: list[str], marks: dict[str, Any],
                                 progress: Callable[[str], None]) -> None:
    """The manifest emptied while calls are in flight, calls again while it is empty; then an oversized query to
    each tool that takes one. `marks` keeps where each part's answers start."""
    progress("emptying the manifest while calls are in flight")
    marks["start"] = len(session.answers)
    searchers = [t for t in session.readers() if "query" in _schema(t)[0] and set(_schema(t)[1]) <= {"query"}]
    plain = [t for t in session.readers() if not _schema(t)[1]]

    async def calls() -> None:
        for tool in (searchers + plain)[:12]:
            arguments = {"query": queries[0]} if tool in searchers and queries else {}
            await session.ask(f"{tool.name} (manifest emptied)", session.client.call_tool(tool.name, arguments))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(calls)
        await anyio.sleep(0)
        scratch.manifest.write_text("")
    marks["after"] = len(session.answers)
    await calls()
    marks["end"] = len(session.answers)
    scratch.manifest.write_text(scratch.manifest_text)
    progress("asking with an oversized query")
    marks["oversized"] = []
    for tool in searchers:
        text = await session.ask(f"{tool.name} oversized",
                                 session.client.call_tool(tool.name, {"query": "word " * (OVERSIZED // 5)}))
        marks["oversized"].append((tool.name, text))


def _refused_with_a_sentence(text: str) -> bool:
    """An answer that is a refusal a person or agent can read: an error, with words, not a crash."""
    if "failed inside" in text or "Internal error" in text:
        return False
    if text.startswith("(refused) "):
        return len(text) > 20
    try:
        result = json.loads(text)
    except ValueError:
        return False
    words = " ".join(str(c.get("text", "")) for c in result.get("content") or [])
    return bool(result.get("isError") or result.get("is_error")) and len(words.split()) >= 3


def run(snapshot: Snapshot, config_text: str | None, lock_file: Path | None, say: Callable[[str], None],
        progress: Callable[[str], None], keep: bool = False) -> int:
    """Play every probe; one line each through `say`; 0 when all held, 1 otherwise."""
    scratch = make_scratch(snapshot, config_text, lock_file)
    try:
        progress(f"scratch copy in {scratch.root}: {len(scratch.projects)} projects, "
                 f"{sum(len(v) for v in scratch.planted.values())} invented items")
        try:
            outcomes = anyio.run(play, scratch, progress)
        except Exception as error:  # noqa: BLE001 - said as a failed probe, with the first cause
            while isinstance(error, BaseExceptionGroup) and error.exceptions:
                error = error.exceptions[0]
            say(f"FAILED  serving the scratch copy: {type(error).__name__}: {error}".rstrip(": "))
            return 1
    finally:
        if not keep:
            shutil.rmtree(scratch.root, ignore_errors=True)
    for outcome in outcomes:
        say(outcome.line())
    if scratch.unplanted:
        say(f"note: no invented item for the routes of kind {', '.join(sorted(set(scratch.unplanted)))} (not "
            "probed)")
    failed = [o for o in outcomes if not o.held]
    say(f"{len(outcomes) - len(failed)} of {len(outcomes)} probes held." + (" The scratch copy was kept in "
                                                                          f"{scratch.root}." if keep else ""))
    return 1 if failed else 0
