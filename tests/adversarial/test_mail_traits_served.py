"""One closed project, each of its things placed by a different route kind, through a real `gateway serve`.

The project `lawsuit` (closed) takes: a message by its sender with and without the account's authentication, by
its subject, by a word of its text only, by an attachment's name, by a folder written `account/folder`, by its
account's path, a reply carrying only In-Reply-To, the person's own sent mail to the lawyer; a note in its folder
and one hard-linked out of it; a task by REFID written in capitals, by category, by list path; an event by
calendar path and one by ORGANIZER; a contact by an address written with a display name and one by `client`. One
canary word is in each. Every tool of the mail plugin, with several argument sets, and every resource: the canary
is in no answer, each list says it left something out, and each of those things read by its address is refused
with the sentence an unknown address gets.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
from gateway_mail.mail import sample
from gateway_mail.plan import sample as sample_plan
from test_mail_canary import _run, _text

from gateway.testing import write_config

CANARY = "quillwortlawcanary"
OWN_SERVER = sample.OWN_SERVER
LAWSUIT = {"id": "lawsuit", "name": "Lawsuit", "ai": False, "client": "ria@client.example.org",
           "senders": ["@law.example.net"], "subjects": ["ACME-2291", "Smith v. Jones"],
           "folders": ["personal/Lawsuit"]}
GARDEN = {"id": "garden", "name": "Garden", "ai": True, "subjects": ["roses"]}


def _world(home: Path) -> dict:
    now = time.time()
    personal, work = home / "Mail" / "personal", home / "Mail" / "work"
    inbox, lawsuit, sent = personal / "INBOX", personal / "Lawsuit", personal / "Sent"
    for folder in (inbox, lawsuit, sent, work / "INBOX", personal / "Drafts"):
        sample.make_folder(folder)
    ids = {}

    def put(role: str, folder: Path, **fields) -> None:
        ids[role] = f"{role}@example.org"
        sample.deliver(folder, sample.message(message_id=ids[role], date=now - 600 + len(ids), **fields))

    law = sample.authenticated("law.example.net")
    put("sender", inbox, sender="Lee Lawyer <lee@law.example.net>", subject="Your file", headers=law,
        body=f"plumtree {CANARY} sender")
    put("unproven", inbox, sender="Para Legal <para@law.example.net>", subject="Papers",
        body=f"plumtree {CANARY} unproven")
    put("subject", inbox, sender="Bob <bob@example.org>", subject="Ticket ACME-2291 update",
        body=f"plumtree {CANARY} subject")
    put("body", inbox, sender="Bob <bob@example.org>", subject="Quick question",
        body=f"plumtree {CANARY} about acme-2291 today")
    put("attachment", inbox, sender="Bob <bob@example.org>", subject="Scan", body=f"plumtree {CANARY} scan",
        attachment=("Smith v. Jones brief.pdf", b"%PDF-1.4 invented"))
    put("folder", lawsuit, sender="Bob <bob@example.org>", subject="Filed", body=f"plumtree {CANARY} filed")
    put("reply", inbox, sender="Bob <bob@example.org>", subject="Re: Your file", in_reply_to="sender@example.org",
        body=f"plumtree {CANARY} replying")
    put("sent", sent, sender="Pat <pat@example.org>", to="Lee Lawyer <lee@law.example.net>", subject="Hello",
        body=f"plumtree {CANARY} sent")
    put("account", work / "INBOX", sender="Bob <bob@example.org>", subject="Work", body=f"plumtree {CANARY} work")
    put("open", inbox, sender="Ada <ada@example.org>", subject="Roses", body="plumtree roses")
    put("outside", inbox, sender="Ada <ada@example.org>", subject="Hi", body="plumtree hello")

    notes = home / "Notes"
    (notes / "Lawsuit").mkdir(parents=True)
    (notes / "Lawsuit" / "plan.md").write_text(f"# Plan\n\nplumtree {CANARY} in the folder.\n")
    (notes / "Lawsuit" / "linked.md").write_text(f"# Linked\n\nplumtree {CANARY} hard-linked.\n")
    os.link(notes / "Lawsuit" / "linked.md", notes / "Elsewhere.md")
    (notes / "Welcome.md").write_text("# Welcome\n\nplumtree roses.\n")

    stamp = datetime.now(UTC)
    today = stamp.date()
    tasks, calendars = home / "vdir" / "tasks", home / "vdir" / "calendars"
    due = f"DUE;VALUE=DATE:{today:%Y%m%d}"

    def task(folder: str, uid: str, *lines: str) -> None:
        sample_plan.put(tasks / folder, uid, sample_plan.ics("VTODO", uid, [f"DTSTAMP:{stamp:%Y%m%dT%H%M%SZ}",
                                                                           "STATUS:NEEDS-ACTION", due, *lines]))

    def event(folder: str, uid: str, *lines: str) -> None:
        start = today + timedelta(days=1)
        sample_plan.put(calendars / folder, uid, sample_plan.ics("VEVENT", uid, [
            f"DTSTAMP:{stamp:%Y%m%dT%H%M%SZ}", f"DTSTART;VALUE=DATE:{start:%Y%m%d}", *lines]))

    task("home", "t-refid", f"SUMMARY:{CANARY} by refid", "REFID:LAWSUIT")
    task("home", "t-category", f"SUMMARY:{CANARY} by category", "CATEGORIES:project:lawsuit")
    task("legal", "t-list", f"SUMMARY:{CANARY} by list")
    task("home", "t-open", "SUMMARY:Buy bread")
    event("court", "e-calendar", f"SUMMARY:{CANARY} hearing")
    event("personal", "e-organizer", f"SUMMARY:{CANARY} call", "ORGANIZER:mailto:lee@law.example.net")
    event("personal", "e-open", "SUMMARY:Yoga")

    contacts = home / "contacts" / "default"
    contacts.mkdir(parents=True)
    (contacts / "lee.vcf").write_text(
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:lee-1\r\nFN:Lee Counsel\r\nEMAIL:Lee Lawyer <lee@law.example.net>\r\n"
        f"NOTE:plumtree {CANARY} counsel\r\nEND:VCARD\r\n")
    (contacts / "ria.vcf").write_text(
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:ria-1\r\nFN:Ria Client\r\nEMAIL:ria@client.example.org\r\n"
        f"NOTE:plumtree {CANARY} client\r\nEND:VCARD\r\n")
    (contacts / "ada.vcf").write_text(
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:ada-1\r\nFN:Ada Example\r\nEMAIL:ada@example.org\r\n"
        "NOTE:plumtree roses\r\nEND:VCARD\r\n")

    project = {**LAWSUIT, "paths": [str(work), str(notes / "Lawsuit"), str(tasks / "legal"),
                                    str(calendars / "court")]}
    config = {"gateway": {"plugins": ["mail"]}, "plugins": {"mail": {
        "accounts": [
            {"name": "personal", "maildir": str(personal), "addresses": ["pat@example.org"],
             "authserv_id": OWN_SERVER},
            {"name": "work", "maildir": str(work), "addresses": ["pat@work.example.org"]},
        ],
        "tasks": str(tasks), "calendars": str(calendars), "notes": str(notes),
        "contacts": str(home / "contacts"), "timezone": "Europe/Paris"}}}
    return {"ids": ids, "config": config, "projects": [project, GARDEN]}


KEPT_MAIL = ("sender", "unproven", "subject", "body", "attachment", "folder", "reply", "sent", "account")
KEPT_THINGS = ("sioul:note/Lawsuit/plan.md", "sioul:note/Elsewhere.md", "sioul:task/t-refid", "sioul:task/t-category",
               "sioul:task/t-list", "sioul:event/e-calendar", "sioul:event/e-organizer", "sioul:contact/lee-1",
               "sioul:contact/ria-1", "sioul:project/lawsuit")
UNKNOWN = ("mid:nobody@example.org", "sioul:project/zz")
SEARCHES = (CANARY, "plumtree", "acme", "Smith", "lee", "law.example.net", "counsel", "hearing", f"{CANARY[:6]}*")


def _plays(kept_mail: list[str]) -> dict[str, list[dict]]:
    searches = [{"query": q} for q in SEARCHES]
    kept = [*kept_mail, *KEPT_THINGS]
    return {
        "porch": [{}, {"open": True}],
        "search_mail": searches + [{"query": "plumtree", "account": "work"}, {"query": "plumtree", "folder": "Lawsuit"},
                                   {"query": "plumtree", "folder": "Sent"}, {"query": "plumtree", "days": 1}],
        "read_message": [{"address": a} for a in (*kept_mail, *UNKNOWN[:1])],
        "draft_reply": [{"address": a, "body": "ok"} for a in kept_mail],
        "list_tasks": [{"view": v} for v in ("now", "today", "all")] + [
            {"view": "all", "list": "legal"}, {"view": "all", "project": "lawsuit"}],
        "agenda": [{}, {"start": "today", "days": 30}],
        "list_projects": [{}],
        "read_project": [{"address": a} for a in ("sioul:project/lawsuit", "sioul:project/garden", UNKNOWN[1])],
        "now": [{}],
        "add_task": [{"title": "x", "project": "lawsuit"}, {"title": "x", "parent": "sioul:task/t-refid"},
                     {"title": "x", "from_message": kept_mail[0]}],
        "complete_task": [{"address": a} for a in ("sioul:task/t-refid", "sioul:task/t-list")],
        "add_event": [{"title": "Lunch", "start": "2026-12-03 12:00"}],
        "search_contacts": searches,
        "search_notes": searches,
        "read_note": [{"address": a} for a in ("sioul:note/Lawsuit/plan.md", "sioul:note/Elsewhere.md")],
        "add_note": [{"title": "x", "text": "y", "folder": "Lawsuit"}],
        "link": [{"address": "sioul:note/Welcome.md", "to": a} for a in kept],
        "links": [{"address": a} for a in (*kept, *UNKNOWN)],
        "find": searches,
    }


# Lists whose scope holds a kept thing: each must say it left something out.
LISTS = [("search_mail", {"query": "plumtree"}), ("search_mail", {"query": "plumtree", "account": "work"}),
         ("list_tasks", {"view": "all"}), ("agenda", {"start": "today", "days": 30}),
         ("search_contacts", {"query": "plumtree"}), ("search_notes", {"query": "plumtree"}), ("list_projects", {})]


def test_every_route_kind_keeps_its_thing_from_every_tool_and_resource(gateway_home: Path) -> None:
    made = _world(gateway_home)
    write_config(gateway_home, made["config"], projects=made["projects"])
    kept_mail = [f"mid:{made['ids'][role]}" for role in KEPT_MAIL]
    plays = _plays(kept_mail)

    async def play(client):
        listed = [t.name for t in (await client.list_tools()).tools]
        given, refusals, left_out = [], {}, {}
        for tool in listed:
            for arguments in plays.get(tool, []):
                result = await client.call_tool(tool, arguments)
                given.append((tool, arguments, _text(result)))
                if tool in ("read_message", "links", "read_note", "read_project") and result.is_error:
                    refusals[(tool, arguments.get("address"))] = _text(result)
        for tool, arguments in LISTS:
            result = await client.call_tool(tool, arguments)
            left_out[(tool, str(arguments))] = (result.structured_content or {}).get("left_out")
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        for uri in [*uris, *kept_mail, "sioul:note/Lawsuit/plan.md", "sioul:note/Elsewhere.md"]:
            try:
                given.append(("resource", uri, str((await client.read_resource(uri)).model_dump(mode="json"))))
            except Exception as refusal:  # noqa: BLE001 - a refusal is an answer too
                given.append(("resource", uri, str(refusal)))
        return listed, given, refusals, left_out

    listed, given, refusals, left_out = anyio.run(_run, gateway_home, play)
    assert set(listed) == set(plays), f"tools without a play: {set(listed) - set(plays)}"
    for tool, arguments, answer in given:
        assert CANARY not in answer, (tool, arguments)
    for key, count in left_out.items():
        assert count and count >= 1, (key, count)
    # Each kept thing read by its address is refused; a kept id and an unknown one are worded alike.
    for address in kept_mail:
        assert ("read_message", address) in refusals, address
        assert refusals[("read_message", address)].replace(address, "X") == \
            refusals[("read_message", UNKNOWN[0])].replace(UNKNOWN[0], "X")
    for address in (*kept_mail, *KEPT_THINGS):
        assert ("links", address) in refusals, address
    assert refusals[("links", "sioul:project/zz")].replace("zz", "X") == \
        refusals[("links", "sioul:project/lawsuit")].replace("lawsuit", "X")
    assert refusals[("read_project", "sioul:project/zz")].replace("zz", "X") == \
        refusals[("read_project", "sioul:project/lawsuit")].replace("lawsuit", "X")
    # What belongs to the open project or to none is still given.
    assert any(tool == "search_mail" and "Roses" in answer for tool, _a, answer in given)
    assert any(tool == "list_tasks" and "Buy bread" in answer for tool, _a, answer in given)
