"""`gateway selftest`: the adversarial suite's probes played on a scratch copy of the person's own config and
manifest, filled with invented items, through a real `gateway serve` spoken to with the MCP SDK's client.

The probes: the copy is served twice. First with every project opened (in the copy only): each closed
project's canary must reach some answer, else its items prove nothing (said, not failed), and a card number
planted in a note must be found by no search of its digits and shown whole by no answer. Then with the
manifest as the person wrote it: every reading tool (called with no arguments when it needs none, with each
canary as its `query`, with each address given in the first round as its single required argument), every
resource listed or given in the first round, and every prompt: no closed project's canary in any of them. Then
the manifest is emptied as the first of up to a dozen calls asked at once is answered, the others in flight:
nothing of any project is given (the gate closes, never opens), and nothing by the same calls asked again once
it is empty. Last, each tool taking a `query` is given one of 100,000 characters: it must be refused with a
sentence. Tools that may reach out of the computer (`openWorldHint`) and tools that write are never called.
The two gateways (each with its own config folder, stores and audit log, both reading the one scratch home)
start at once. Every call waits for its plugin's stores to have read the invented items (see
`gateway.commands.scratch`), and the host's read timeout is above that wait and the call's deadline together:
a busy computer makes the run slower, never its verdicts different.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import anyio
import attrs

from gateway.api.refresh import STILL_READING as REFRESH_LINE
from gateway.commands.scratch import CARD_MARK, SCRATCH_CLOSED, Scratch, make_scratch
from gateway.engine.config import Snapshot

CARD_SEARCHES = ("4111111111111111", "4111 1111 1111 1111", "411111111111")
CARD_WHOLE = re.compile(r"4111[\s-]?1111[\s-]?1111[\s-]?1111")
OVERSIZED = 100_000
# How an answer given before its plugin's refresh ended begins its line about it (gateway.api.refresh).
STILL_READING = REFRESH_LINE.split("{plugin}")[0]
MAX_ADDRESSES = 40
ADDRESS_ARGUMENTS = ("address", "uri", "id", "message_id", "path", "name")
REMOVAL_SECONDS = 10.0  # how long the scratch folder is removed again while something still writes in it


@attrs.frozen
class Outcome:
    """One probe's verdict: `held` or not, and a sentence saying what was tried and found."""

    probe: str
    held: bool
    detail: str

    def line(self) -> str:
        return f"{'held  ' if self.held else 'FAILED'}  {self.probe}: {self.detail}"


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

    from gateway.served import gateway_command

    command = gateway_command()
    params = StdioServerParameters(command=command[0], args=[*command[1:], "serve"], env=scratch.env(which))
    with open(os.devnull, "w") as quiet:
        async with Client(stdio_client(params, errlog=quiet), mode="legacy",
                          read_timeout_seconds=scratch.answer_within(),
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
    from gateway.engine.audit import AuditLog

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
    unread = [label for label, text in checked if STILL_READING in text]
    unread_said = (f"; {len(unread)} answers came from a store still being read after a minute, and prove nothing "
                   f"of it: {', '.join(unread[:3])}") if unread else ""
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
            items = len(scratch.planted.get(project_id) or [])
            outcomes.append(Outcome(f"closed project {project_id!r}", True,
                                    f"the word of its {items} invented items in none of {len(checked)} answers "
                                    f"({len(closed.readers())} tools, resources, prompts, {len(addresses)} "
                                    f"addresses asked for){added}{proof}{unread_said}"))
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
        waiting = empty_round.get("in_flight", 0)
        outcomes.append(Outcome("manifest emptied mid-call", True, f"{len(during)} calls during and after ({waiting} "
                                "asked and not yet answered as it was emptied): none gave a closed project's items, "
                                "none gave anything while the manifest was empty"))
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
    tools = (searchers + plain)[:12]

    def empty() -> None:
        if "in_flight" not in marks:
            marks["in_flight"] = len(tools) - (len(session.answers) - marks["start"])
            scratch.manifest.write_text("")

    async def call(tool: Any, first_batch: bool = False) -> None:
        arguments = {"query": queries[0]} if tool in searchers and queries else {}
        try:
            await session.ask(f"{tool.name} (manifest emptied)", session.client.call_tool(tool.name, arguments))
        finally:
            if first_batch:
                empty()

    # All asked at once; the first answer to come back empties the manifest there and then (no other task runs in
    # between), so that the others are asked and not yet answered as it is emptied, whatever the computer's load.
    async with anyio.create_task_group() as tasks:
        for tool in tools:
            tasks.start_soon(call, tool, True)
    empty()  # no tool to call: emptied all the same
    marks["after"] = len(session.answers)
    for tool in tools:  # each asked once the manifest is empty: none may give anything
        await call(tool)
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


def _remove(root: Path, within: float = REMOVAL_SECONDS) -> None:
    """The scratch folder removed whole. Removed again while something is still written in it (a scratch gateway
    that the SDK's client stopped waiting for, still closing its stores), for `within` seconds at most."""
    deadline = time.monotonic() + within
    while True:
        shutil.rmtree(root, ignore_errors=True)
        if not os.path.lexists(root) or time.monotonic() >= deadline:
            return
        time.sleep(0.05)


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
            _remove(scratch.root)
    for outcome in outcomes:
        say(outcome.line())
    if scratch.unplanted:
        say(f"note: no invented item for the routes of kind {', '.join(sorted(set(scratch.unplanted)))} (not "
            "probed)")
    failed = [o for o in outcomes if not o.held]
    say(f"{len(outcomes) - len(failed)} of {len(outcomes)} probes held." + (" The scratch copy was kept in "
                                                                          f"{scratch.root}." if keep else ""))
    return 1 if failed else 0
