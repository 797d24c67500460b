"""The plan's privacy rules (tasks, agenda, projects, now) played as attacks through a real `gateway serve`.

The canary: a closed project holds a task, a step of it, a task shared with an open project and an event, each
with one word; no answer of any plan tool or resource holds it, by list or by address. Then what an agent may try
to write: into the closed project (by id, by its old address, as a step of its task, from its mail), outside
projects while those are closed, a line break to add a line to the file the next sync sends, and a time in UTC.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import anyio
from gateway_mail.mail import sample
from gateway_mail.plan import sample as sample_plan

from gateway.testing import read_audit, serve_client, write_config

CANARY = "wombatplancanary"
PARIS = ZoneInfo("Europe/Paris")


def _text(result) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {}, ensure_ascii=False)


def _world(home: Path, *, mail: bool = False, outside_projects: bool | None = None, projects=None) -> dict:
    made = sample_plan.world(home, CANARY, datetime.now(PARIS))
    mail_root = home / "Mail" / "personal"
    if mail:
        made["ids"] = sample.world(mail_root, CANARY, time.time())
    config = sample_plan.config(home, mail_root if mail else None)
    if outside_projects is not None:
        config["access"] = {"outside_projects": outside_projects}
    write_config(home, config, projects=projects or sample_plan.PROJECTS)
    return made


def _serve(home: Path, play):
    async def run():
        async with serve_client(home) as client:
            return await play(client)

    return anyio.run(run)


def _files(made: dict) -> dict[Path, bytes]:
    return {p: p.read_bytes() for root in (made["tasks"], made["calendars"]) for p in root.rglob("*") if p.is_file()}


def test_a_closed_projects_tasks_and_events_are_never_shown(gateway_home: Path) -> None:
    made = _world(gateway_home)
    before = _files(made)

    async def play(client):
        given, refused, counts = [], [], []
        for arguments in ({}, {"view": "today"}, {"view": "all"}, {"view": "all", "project": "dupont"},
                          {"view": "all", "list": "work"}, {"limit": 1}):
            result = await client.call_tool("list_tasks", arguments)
            given.append(_text(result))
            counts.append(result.structured_content["left_out"])
        for arguments in ({}, {"start": "yesterday", "days": 30}, {"start": "tomorrow", "days": 1}):
            given.append(_text(await client.call_tool("agenda", arguments)))
        for tool, arguments in (("list_projects", {}), ("now", {}),
                                ("read_project", {"address": "sioul:project/dupont"})):
            given.append(_text(await client.call_tool(tool, arguments)))
        for tool, arguments in (("read_project", {"address": "sioul:project/vault"}),
                                ("read_project", {"address": "sioul:case/vault"}),
                                ("list_tasks", {"project": "vault"}),
                                ("complete_task", {"address": "sioul:task/vault-1"}),
                                ("complete_task", {"address": "sioul:task/vault-2"}),
                                ("complete_task", {"address": "sioul:task/both-1"}),
                                ("add_task", {"title": "x", "parent": "sioul:task/vault-2"})):
            result = await client.call_tool(tool, arguments)
            refused.append(result.is_error)
            given.append(_text(result))
        for uri in ("sioul:tasks/now", "sioul:tasks/today", "sioul:agenda", "sioul:projects"):
            given.append(json.dumps((await client.read_resource(uri)).model_dump(mode="json")))
        listed = await client.list_resources()
        given.append(json.dumps([r.model_dump(mode="json") for r in listed.resources]))
        return given, refused, counts

    given, refused, counts = _serve(gateway_home, play)
    for answer in given:
        assert CANARY not in answer
        assert "strongbox" not in answer and "Vault matters" not in answer and "keeper@vault" not in answer
    assert all(refused)
    assert counts == [2, 3, 3, 1, 3, 2]  # left out and counted, never which
    assert "The next step is kept" in given[0]
    assert _files(made) == before
    audit = "\n".join(json.dumps(line) for line in read_audit(gateway_home))
    assert CANARY not in audit and "strongbox" not in audit


def test_nothing_is_written_into_a_closed_project_nor_outside_projects_while_those_are_closed(
        gateway_home: Path) -> None:
    made = _world(gateway_home, mail=True)
    before = _files(made)
    vault_mail = f"mid:{made['ids']['vault']}"

    async def play(client):
        answers = []
        for tool, arguments in (("add_task", {"title": "Sneak in", "project": "vault"}),
                                ("add_task", {"title": "Sneak in", "project": "sioul:case/vault"}),
                                ("add_task", {"title": "Sneak in", "project": "dupont", "parent": "sioul:task/vault-1"}),
                                ("add_task", {"title": "From the vault", "from_message": vault_mail}),
                                ("add_task", {"title": "From the vault", "project": "dupont",
                                              "from_message": vault_mail})):
            answers.append(await client.call_tool(tool, arguments))
        return answers

    answers = _serve(gateway_home, play)
    for answer in answers:
        assert answer.is_error and "only the person can open it" in _text(answer) and CANARY not in _text(answer)
    assert _files(made) == before

    # Things outside projects closed: an event (which takes no project) and a task of no project are refused.
    _world(gateway_home, outside_projects=False)
    before = _files(made)

    async def outside(client):
        return [await client.call_tool("add_event", {"title": "Dentist", "start": "2026-12-04 10:00"}),
                await client.call_tool("add_task", {"title": "Of no project"}),
                await client.call_tool("complete_task", {"address": "sioul:task/bread"}),
                await client.call_tool("now", {}),
                await client.call_tool("add_task", {"title": "For Claire", "project": "dupont"})]

    *refused, moment, allowed = _serve(gateway_home, outside)
    assert all(r.is_error and "only the person can open it" in _text(r) for r in refused)
    assert not moment.is_error and "Now:" in _text(moment)  # nobody's thing: it stays
    assert not allowed.is_error
    assert {p for p in _files(made) if p not in before} == {made["tasks"] / allowed.structured_content["file"]}


def test_what_an_agent_writes_stays_on_one_line_and_a_utc_time_lands_in_the_persons_zone(gateway_home: Path) -> None:
    made = _world(gateway_home)
    before = _files(made)

    async def play(client):
        attacks = []
        for tool, arguments in (
            ("add_task", {"title": "Pay\r\nSTATUS:COMPLETED"}),
            ("add_task", {"title": "Pay\u2028ATTACH:file:///etc/passwd"}),
            ("add_task", {"title": "Pay", "tags": ["ok", "x\nATTENDEE:mailto:boss@example.com"]}),
            ("add_task", {"title": "Pay", "due": "2026-12-03T08:00Z\nRRULE:FREQ=MINUTELY"}),
            ("add_task", {"title": "Pay", "parent": "sioul:task/bread\nRELATED-TO:x"}),
            ("add_event", {"title": "Visit", "start": "2026-12-03 09:00", "location": "Here\nEND:VEVENT"}),
            ("add_event", {"title": "Visit\x85there", "start": "2026-12-03 09:00"}),
        ):
            attacks.append(await client.call_tool(tool, arguments))
        event = await client.call_tool("add_event", {"title": "Plumber", "start": "2026-12-03T08:00:00Z"})
        task = await client.call_tool("add_task", {"title": "Call back", "due": "2026-12-03T23:30Z"})
        return attacks, event, task

    attacks, event, task = _serve(gateway_home, play)
    assert all(a.is_error for a in attacks), [_text(a) for a in attacks if not a.is_error]
    assert not event.is_error and not task.is_error
    new = {p: raw for p, raw in _files(made).items() if p not in before}
    event_file = made["calendars"] / event.structured_content["file"]  # relative to the vdir's root
    task_file = made["tasks"] / task.structured_content["file"]
    assert set(new) == {event_file, task_file}
    assert b"DTSTART;TZID=Europe/Paris:20261203T090000" in new[event_file]
    # 23:30 UTC on the 3rd is already the 4th in Paris.
    assert b"DUE;TZID=Europe/Paris:20261204T003000" in new[task_file]
    for raw in new.values():
        assert b"ATTENDEE" not in raw and b"STATUS:COMPLETED" not in raw and b"/etc/passwd" not in raw


def test_a_closed_projects_done_tasks_and_past_events_stay_out_of_an_open_projects_line_of_time(
        gateway_home: Path) -> None:
    made = _world(gateway_home, mail=True)
    now = datetime.now(PARIS)
    done = (now - timedelta(days=3)).astimezone(ZoneInfo("UTC")).strftime("%Y%m%dT%H%M%SZ")
    past = (now - timedelta(days=20)).date()
    sample_plan.put(made["tasks"] / "work", "shared-done", sample_plan.ics("VTODO", "shared-done", [
        f"SUMMARY:{CANARY} done for both", "STATUS:COMPLETED", f"COMPLETED:{done}", "REFID:dupont", "REFID:vault"]))
    sample_plan.put(made["calendars"] / "personal", "shared-past", sample_plan.ics("VEVENT", "shared-past", [
        f"SUMMARY:{CANARY} met for both", "CATEGORIES:project:dupont,project:vault",
        f"DTSTART;TZID=Europe/Paris:{past:%Y%m%d}T090000", f"DTEND;TZID=Europe/Paris:{past:%Y%m%d}T100000"]))
    sample_plan.put(made["tasks"] / "work", "dupont-done", sample_plan.ics("VTODO", "dupont-done", [
        "SUMMARY:Chose the sink", "STATUS:COMPLETED", f"COMPLETED:{done}", "REFID:dupont"]))

    async def play(client):
        return await client.call_tool("read_project", {"address": "sioul:project/dupont"})

    result = _serve(gateway_home, play)
    answer = _text(result)
    assert not result.is_error, answer
    assert CANARY not in answer and "shared-done" not in answer and "shared-past" not in answer
    line = result.structured_content["line_of_time"]
    assert "sioul:task/dupont-done" in [entry.get("address") for entry in line]  # the line is there, gated
    assert result.structured_content["left_out"] == 3  # both-1, and the line's two shared things, counted
    audit = "\n".join(json.dumps(line) for line in read_audit(gateway_home))
    assert CANARY not in audit and "shared-done" not in audit
