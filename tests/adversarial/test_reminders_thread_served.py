"""Reminders and conversations played as attacks through a real `gateway serve`: a closed project's reminders
(its task's and event's alarms, a remind file in its folder) and a closed message in a thread are in no answer,
left out and counted; with things outside projects closed, only the open project's reminders come. A remind
reminder's address is read back; a closed project's, worked out from its file, is refused as one that is not there."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import anyio
import pytest
from gateway_mail.mail import sample
from gateway_mail.plan import sample as sample_plan
from mcp.shared.exceptions import MCPError

from gateway.api.context import home_environment
from gateway.testing import serve_client, write_config
from tests.forkserver import gateway_command

CANARY = "narwhalremindcanary"
PARIS = ZoneInfo("Europe/Paris")


def _text(result) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {}, ensure_ascii=False)


def _world(home: Path, outside_projects: bool = True) -> dict:
    now = datetime.now(PARIS)
    made = sample_plan.world(home, CANARY, now)
    root = home / "Mail" / "personal"
    made["ids"] = sample.world(root, CANARY, time.time())
    # An open project's task with a reminder (dupont), and a thread whose last reply belongs to the closed project:
    # the whole thread is kept with it.
    soon = (now + timedelta(hours=1)).astimezone(ZoneInfo("UTC")).strftime("%Y%m%dT%H%M%SZ")
    sample_plan.put(made["tasks"] / "work", "dupont-alarm", sample_plan.ics("VTODO", "dupont-alarm", [
        "DTSTAMP:20261101T080000Z", "SUMMARY:Call the tiler", "REFID:dupont", f"DUE:{soon}",
        "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:-PT10M", "END:VALARM"]))
    inbox = root / "INBOX"
    for role, fields in (("garden", {"subject": "The garden", "body": "Quinces?"}),
                         ("garden-reply", {"subject": "Re: The garden", "body": "Yes.", "in_reply_to": "garden@example.org"}),
                         ("garden-closed", {"subject": "Re: The garden, and the Vault matters",
                                            "sender": "Keeper <keeper@vault.example.com>",
                                            "headers": sample.authenticated("vault.example.com"),
                                            "body": f"{CANARY} in the thread", "references": ["garden-reply@example.org"]})):
        made["ids"][role] = f"{role}@example.org"
        sample.deliver(inbox, sample.message(message_id=made["ids"][role], **fields))
    config = sample_plan.config(home, root)
    vault_folder = home / "Vault"
    vault_folder.mkdir()
    tomorrow = (now + timedelta(days=1)).date()
    (vault_folder / "vault.rem").write_text(f"REM {tomorrow:%b %d %Y} AT 10:00 MSG {CANARY} fetch the key%\n")
    (home / "reminders.rem").write_text(f"REM {tomorrow:%b %d %Y} AT 11:00 MSG Water the lemon tree%\n"
                                        "INCLUDE Vault/vault.rem\n")
    config["plugins"]["mail"]["remind"] = str(home / "reminders.rem")
    if not outside_projects:
        config["access"] = {"outside_projects": False}
    projects = [{**p, "paths": [str(vault_folder)]} if p["id"] == "vault" else p for p in sample_plan.PROJECTS]
    write_config(home, config, projects=projects)
    made["tomorrow"] = tomorrow  # the remind lines' day: a run that crosses midnight in Paris still looks for it
    return made


def _serve(home: Path, play):
    async def run():
        async with serve_client(home) as client:
            return await play(client)

    return anyio.run(run)


async def _reminder_answers(client) -> list:
    answers = [await client.call_tool("reminders", {"days": days}) for days in (1, 7, 90)]
    answers += [await client.call_tool("now", {}), await client.call_tool("porch", {"open": True})]
    return answers


def test_a_closed_projects_reminders_are_in_no_answer_and_counted(gateway_home: Path) -> None:
    _world(gateway_home)
    answers = _serve(gateway_home, _reminder_answers)
    for answer in answers:
        assert not answer.is_error and CANARY not in _text(answer), _text(answer)
        assert "strongbox" not in _text(answer) and "fetch the key" not in _text(answer)
    week = answers[1].structured_content
    shown = {r["for"] for r in week["reminders"]}
    assert {"Call the tiler", "Buy bread"} <= shown
    # The vault task's and event's alarms; the remind file's line in the vault's folder too when remind is there.
    assert week["left_out"] == (3 if shutil.which("remind") else 2)
    if shutil.which("remind"):
        assert "Water the lemon tree" in shown


def test_with_things_outside_projects_closed_only_the_open_projects_reminders_come(gateway_home: Path) -> None:
    _world(gateway_home, outside_projects=False)
    answers = _serve(gateway_home, _reminder_answers)
    week = answers[1].structured_content
    assert [r["for"] for r in week["reminders"]] == ["Call the tiler"]
    for answer in answers:
        assert CANARY not in _text(answer) and "Buy bread" not in _text(answer) and "lemon tree" not in _text(answer)


def test_a_closed_message_in_a_thread_keeps_the_thread_from_every_answer(gateway_home: Path) -> None:
    made = _world(gateway_home)
    ids = made["ids"]

    async def play(client):
        answers = [await client.call_tool("read_thread", {"address": f"mid:{ids[role]}", "whole": whole})
                   for role in ("garden", "garden-reply", "garden-closed", "vault", "vault_reply")
                   for whole in (False, True)]
        answers.append(await client.call_tool("read_thread", {"address": f"mid:{ids['friend']}", "whole": True}))
        answers.append(await client.call_tool("search_mail", {"query": "garden OR Quinces"}))
        return answers

    *refused, friend, search = _serve(gateway_home, play)
    for answer in refused:
        assert answer.is_error and "only the person can open it" in _text(answer), _text(answer)
        assert CANARY not in _text(answer) and "Quinces" not in _text(answer)
    assert not friend.is_error and friend.structured_content["left_out"] == 0
    assert CANARY not in _text(friend) and "Does Tuesday work for you?" in _text(friend)
    assert search.structured_content["hits"] == [] and CANARY not in _text(search)


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(gateway_command(*args), capture_output=True, text=True, timeout=300,
                          env={"PATH": os.environ.get("PATH", ""), **home_environment(home)})


@pytest.mark.skipif(shutil.which("remind") is None, reason="Debian's remind (apt install remind; .ci/run does)")
def test_a_remind_reminder_is_read_by_its_address_and_a_closed_projects_is_refused_as_one_not_there(
        gateway_home: Path) -> None:
    made = _world(gateway_home)
    line = (gateway_home / "Vault" / "vault.rem").read_text().splitlines()[0]
    # What an attacker who knows (or guesses) the closed file's line would ask for, beside an address of nothing.
    kept = f"sioul:remind/Vault/vault.rem@{hashlib.sha256(line.encode()).hexdigest()[:12]}"
    unknown = f"sioul:remind/Vault/vault.rem@{'0' * 12}"

    async def play(client):
        week = await client.call_tool("reminders", {"days": 7})
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        given = [r["address"] for r in week.structured_content["reminders"] if r["kind"] == "remind"]
        read = [await client.read_resource(address) for address in given]
        refusals = []
        for address in (kept, unknown):
            try:
                await client.read_resource(address)
            except MCPError as error:
                refusals.append(str(error).replace(address, "ADDRESS"))
        return week, templates, given, read, refusals

    week, templates, given, read, refusals = _serve(gateway_home, play)
    assert "sioul:remind/{ident}" in templates
    assert len(given) == 1 and given[0].startswith("sioul:remind/reminders.rem@") and given[0] in _text(week)
    text = read[0].contents[0].text
    assert "Reminder: Water the lemon tree" in text and "remind file reminders.rem, line 1" in text
    assert f"{made['tomorrow']} 11:00  Water the lemon tree" in text
    assert len(refusals) == 2 and refusals[0] == refusals[1] and "only the person can open it" in refusals[0]
    assert CANARY not in "".join(refusals) and "vault" not in refusals[0].replace("Vault/vault.rem", "").lower()
    # The person's side: `gateway read` gives the open one, refuses the kept one; `access why` names the route.
    opened, closed = _cli(gateway_home, "read", given[0]), _cli(gateway_home, "read", kept)
    assert opened.returncode == 0 and "Water the lemon tree" in opened.stdout, opened.stderr
    assert closed.returncode == 1 and "only the person can open it" in closed.stderr and CANARY not in closed.stderr
    why = _cli(gateway_home, "access", "why", kept)
    assert why.returncode == 1 and "taken by vault (closed): paths route" in why.stdout, why.stdout + why.stderr
    assert _cli(gateway_home, "access", "why", given[0]).returncode == 0
