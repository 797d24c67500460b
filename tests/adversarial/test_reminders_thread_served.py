"""Reminders and conversations played as attacks through a real `gateway serve`: a closed project's reminders
(its task's and event's alarms, a remind file in its folder) and a closed message in a thread are in no answer,
left out and counted; with things outside projects closed, only the open project's reminders come."""

from __future__ import annotations

import json
import shutil
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import anyio
from gateway_mail.mail import sample
from gateway_mail.plan import sample as sample_plan

from gateway.testing import serve_client, write_config

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
