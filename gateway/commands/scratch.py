"""The scratch copy `gateway selftest` attacks: the person's config and manifest copied into a temporary home,
with invented items written there for each route of each project.

What is copied: the config's `[gateway]`, `[access]` and `[profiles]` tables, and of each plugin's table only what
cannot name a source (its switches and numbers, and the core's `prefix`, `disabled_tools`, `refresh`): every
path, address, account, server and password is left behind, so each plugin reads its defaults, which the scratch
home (HOME and the XDG folders pointed into it) holds. One setting is the selftest's own: `refresh_budget_ms` at
its most (a minute), so that every call waits until its plugin's stores have read the invented items, however
busy the computer is, instead of answering from a store still being filled (which would prove nothing). The
manifest is copied with the person's project ids and routes; a `paths` route written as an absolute path is moved
under the scratch home (`~/...` for one under the person's home, `~/root/...` for one elsewhere), so it takes the
invented files there and nothing of the person's.
The person's data is never read, and nothing is written outside the scratch folder, which is removed at the end.

The invented items are written in the formats the built-in plugins read (a Maildir message, a Markdown note, a
vdir task, event and card, an agent session as Claude Code writes it, ActivityWatch's database), one per route of
each project, each holding that project's canary word: a message from each `senders` address (authenticated by
the scratch account's server), with each `subjects` route in its subject, in each `folders` folder and each
`accounts` account; a note, and a session working there, under each `paths` route; a task in each `lists` list,
an event in each `calendars` calendar, a card in each `addressbooks` book; a window of each `apps` app and a page
at each `urls` address. Senders given as phone numbers get no item yet. This is the one place of the core that
knows those formats: it writes files only, and each plugin reads them as it reads the person's. A manifest with no
closed project gets one of its own, `selftest-closed`, with a path and a sender route.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import sqlite3
import tempfile
import time
import tomllib
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import formatdate
from pathlib import Path
from typing import Any

import attrs
import tomli_w

from gateway.engine.config import CORE_PLUGIN_KEYS, Snapshot
from gateway.gate.access import Project

OWN_SERVER = "mx.selftest.example.org"  # the scratch accounts' server: its Authentication-Results prove senders
CARD = "4111 1111 1111 1111"  # passes Luhn's check: the masks must hide it
CARD_MARK = "plumtreecardnote"  # the word of the note that holds the card
SCRATCH_CLOSED = "selftest-closed"
REFRESH_BUDGET_MS = 60_000  # the most `[gateway] refresh_budget_ms` allows


def canary_of(project_id: str) -> str:
    """A word that no real text holds, made from the project's id (letters only, so every index keeps it whole)."""
    letters = "".join(chr(ord("a") + b % 26) for b in hashlib.sha256(project_id.encode()).digest()[:8])
    return f"selftest{letters}canary"


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
    call_timeout: float = 30.0  # the person's `[gateway] call_timeout`, which the copy keeps

    def answer_within(self) -> float:
        """Seconds a scratch gateway may take to answer one request: the wait for its stores to be read, the call's
        own deadline, and a minute more for a busy computer (the host's read timeout; past it, the request is
        counted as refused)."""
        return REFRESH_BUDGET_MS / 1000 + self.call_timeout + 60.0

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
    # Each call waits for its plugin's stores to have read the invented items (at most a minute): a probe that
    # answered from a store still being filled, on a busy computer, would prove nothing of that store.
    config.setdefault("gateway", {})["refresh_budget_ms"] = REFRESH_BUDGET_MS
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
                      {p.id: canary_of(p.id) for p in projects if p.ai}, call_timeout=snapshot.config.call_timeout)
    for plugin, table in _plant(scratch).items():
        plugins.setdefault(plugin, {}).update(table)
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


def _plant(scratch: Scratch) -> dict[str, dict[str, Any]]:
    """Write an invented item for each route of each project; the plugins' settings that read them."""
    home, now = scratch.home, time.time()
    mail_root, vdir = home / "Mail", home / ".local" / "share" / "vdirsyncer"
    accounts: dict[str, Path] = {"selftest": mail_root / "selftest"}
    counter = iter(range(1, 10**6))
    activity: list[tuple[str, dict[str, Any]]] = []  # (ActivityWatch bucket type, event data)

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
        for route in project.apps:
            activity.append(("currentwindow", {"app": route, "title": f"The {canary} window"}))
            planted.append(f"a window of the app {route} (ActivityWatch's)")
        for route in project.urls:
            url = _concrete(route) if "://" in route else f"https://{_concrete(route).lstrip('/')}"
            activity.append(("web.tab.current", {"url": url, "title": f"The {canary} page"}))
            planted.append(f"a page at {url} (ActivityWatch's)")
        if project.senders and any("@" not in r for r in project.senders):
            scratch.unplanted.append("senders (phone numbers)")
    # Outside every project: a note holding a card number, for the masked-digits probe.
    notes = home / "Notes"
    notes.mkdir(exist_ok=True)
    (notes / "Selftest card.md").write_text(f"# Card {CARD_MARK}\n\nThe {CARD_MARK} card is {CARD}.\n")
    deliver("selftest", "Drafts", message("draftsfolder"))
    for sub in ("tasks", "calendars", "contacts"):
        (vdir / sub).mkdir(parents=True, exist_ok=True)
    database = home / ".local" / "share" / "activitywatch" / "aw-server-rust" / "sqlite.db"
    _activitywatch(database, activity, now)
    return {
        "mail": {
            "accounts": [{"name": name, "maildir": str(root), "addresses": ["pat@selftest.example.org"],
                          "authserv_id": OWN_SERVER, "drafts": "Drafts"} for name, root in accounts.items()],
            "notes": str(home), "tasks": str(vdir / "tasks"), "calendars": str(vdir / "calendars"),
            "contacts": str(vdir / "contacts"),
        },
        "timeline": {"activitywatch": str(database)},
    }


def _activitywatch(database: Path, activity: list[tuple[str, dict[str, Any]]], now: float) -> None:
    """The windows and pages seen, in aw-server-rust's SQLite database (its buckets and events tables), the last
    ten minutes: each event a minute long, times in nanoseconds as aw-server-rust keeps them."""
    database.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(database)) as db, db:
        db.execute("CREATE TABLE buckets (id INTEGER PRIMARY KEY, name TEXT UNIQUE, type TEXT, client TEXT, "
                   "hostname TEXT, created TEXT, data TEXT)")
        db.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, bucketrow INTEGER, starttime INTEGER, "
                   "endtime INTEGER, data TEXT)")
        buckets = {"currentwindow": (1, "aw-watcher-window_selftest", "aw-watcher-window"),
                   "web.tab.current": (2, "aw-watcher-web-firefox_selftest", "aw-client-web")}
        for kind, (row, name, client) in buckets.items():
            db.execute("INSERT INTO buckets VALUES (?, ?, ?, ?, 'selftest', ?, '{}')",
                       (row, name, kind, client, datetime.now(UTC).isoformat()))
        start = int((now - 600) * 1e9)
        for n, (kind, data) in enumerate(activity):
            begin = start + n * 60 * 10**9
            db.execute("INSERT INTO events (bucketrow, starttime, endtime, data) VALUES (?, ?, ?, ?)",
                       (buckets[kind][0], begin, begin + 60 * 10**9, json.dumps(data)))


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


