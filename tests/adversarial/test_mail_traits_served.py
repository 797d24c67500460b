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

from pathlib import Path

import anyio
from gateway_mail.projects import sample as traits_sample

from gateway.testing import write_config
from tests.adversarial.test_mail_canary import _run, _text

CANARY = "quillwortlawcanary"
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
        "read_attachment": [{"address": a, "part": 1} for a in (*kept_mail, *UNKNOWN[:1])],
        "read_thread": [{"address": a, "whole": True} for a in (*kept_mail, *UNKNOWN[:1])],
        "draft_reply": [{"address": a, "body": "ok"} for a in kept_mail],
        "list_tasks": [{"view": v} for v in ("now", "today", "all")] + [
            {"view": "all", "list": "legal"}, {"view": "all", "project": "lawsuit"}],
        "agenda": [{}, {"start": "today", "days": 30}],
        "list_projects": [{}],
        "read_project": [{"address": a} for a in ("sioul:project/lawsuit", "sioul:project/garden", UNKNOWN[1])],
        "now": [{}],
        "reminders": [{}, {"days": 90}],
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
    made = traits_sample.world(gateway_home, CANARY)
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
                if tool in ("read_message", "read_attachment", "links", "read_note", "read_project") and result.is_error:
                    refusals[(tool, arguments.get("address"))] = _text(result)
        for tool, arguments in LISTS:
            result = await client.call_tool(tool, arguments)
            left_out[(tool, str(arguments))] = (result.structured_content or {}).get("left_out")
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        for uri in [*uris, *kept_mail, *KEPT_THINGS, *UNKNOWN]:
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
        assert refusals[("read_attachment", address)].replace(address, "X") == \
            refusals[("read_attachment", UNKNOWN[0])].replace(UNKNOWN[0], "X")
    for address in (*kept_mail, *KEPT_THINGS):
        assert ("links", address) in refusals, address
    assert refusals[("links", "sioul:project/zz")].replace("zz", "X") == \
        refusals[("links", "sioul:project/lawsuit")].replace("lawsuit", "X")
    assert refusals[("read_project", "sioul:project/zz")].replace("zz", "X") == \
        refusals[("read_project", "sioul:project/lawsuit")].replace("lawsuit", "X")
    # What belongs to the open project or to none is still given.
    assert any(tool == "search_mail" and "Roses" in answer for tool, _a, answer in given)
    assert any(tool == "list_tasks" and "Buy bread" in answer for tool, _a, answer in given)
