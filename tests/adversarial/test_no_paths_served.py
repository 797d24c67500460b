"""No answer carries the person's absolute file paths, home folder or user name, through a real `gateway serve`.

The mail plugin's whole sample (mail, tasks, events, contacts, notes, a remind file) lives in a home whose folder
is named like its user; every tool the server lists is played (reads of open things, and the writes an agent may
make: a task, an event, a note, a draft, a task done, a tie), every resource read, and each answer, text and data,
scanned for the home's path (as written and resolved), the temporary folder it is in, and the user's name.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
from pathlib import Path

import anyio
from gateway_mail.notes import sample as sample_notes

from gateway.testing import serve_client, write_config

CANARY = "pangolinpathcanary"
USER = "adalovelace"


def _text(result) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {}, ensure_ascii=False)


def _plays(made: dict) -> dict[str, list[dict]]:
    friend, plumber = f"mid:{made['ids']['friend']}", f"mid:{made['ids']['plumber']}"
    searches = [{"query": q} for q in ("plumtree", "Ada", "garden")]
    return {
        "porch": [{}, {"open": True}],
        "search_mail": searches,
        "read_message": [{"address": a} for a in (friend, plumber)],
        "read_thread": [{"address": a, "whole": True} for a in (friend, plumber)],
        "read_attachment": [{"address": a, "part": 1} for a in (friend, plumber)],
        "draft_reply": [{"address": friend, "body": "Tuesday works."}],
        "list_tasks": [{"view": v} for v in ("now", "today", "all")],
        "agenda": [{}, {"start": "today", "days": 30}],
        "list_projects": [{}],
        "read_project": [{"address": "sioul:project/dupont"}],
        "now": [{}],
        "reminders": [{}, {"days": 30}],
        "add_task": [{"title": "Call Claire", "project": "dupont", "due": "tomorrow", "description": "About tiles",
                      "repeat": "FREQ=WEEKLY"}],
        "complete_task": [{"address": "sioul:task/bread"}],
        "add_event": [{"title": "Lunch", "start": "2026-12-03 12:00", "location": "Café", "repeat": "FREQ=DAILY;COUNT=3"},
                      {"title": "Lunch", "start": "2026-12-03 12:00", "calendar": "nowhere"}],
        "search_contacts": searches,
        "search_notes": searches,
        "read_note": [{"address": "sioul:note/Welcome.md"}, {"address": "sioul:note/missing.md"}],
        "add_note": [{"title": "Seeds", "text": "Quinces."}, {"title": "x", "text": "y", "folder": "Deep/er"}],
        "link": [{"address": "sioul:note/Welcome.md", "to": "https://example.org"}],
        "links": [{"address": "sioul:note/Welcome.md"}, {"address": friend}],
        "find": searches,
    }


def test_no_answer_gives_the_persons_paths_home_or_user_name(tmp_path: Path) -> None:
    home = tmp_path / USER
    home.mkdir()
    made = sample_notes.everything(home, CANARY)
    config = made["config"]
    if shutil.which("remind"):
        (home / ".reminders").write_text("REM Dec 3 2026 AT 09:00 MSG Water the lemon tree%\n")
    write_config(home, config, projects=made["projects"])
    plays = _plays(made)

    async def play():
        async with serve_client(home) as client:
            listed = [t.name for t in (await client.list_tools()).tools]
            given = []
            for tool in listed:
                for arguments in plays.get(tool, []):
                    given.append((tool, arguments, _text(await client.call_tool(tool, arguments))))
            for resource in (await client.list_resources()).resources:
                read = await client.read_resource(str(resource.uri))
                given.append(("resource", str(resource.uri), json.dumps(read.model_dump(mode="json"))))
            read = await client.read_resource(f"mid:{made['ids']['friend']}")
            given.append(("resource", "mid", json.dumps(read.model_dump(mode="json"))))
            return listed, given

    listed, given = anyio.run(play)
    assert set(listed) == set(plays), f"tools without a play here: {set(listed) - set(plays)}"
    forbidden = {str(home), os.path.realpath(home), str(tmp_path), USER, f"pytest-of-{getpass.getuser()}"}
    for tool, arguments, answer in given:
        for word in forbidden:
            assert word not in answer, (tool, arguments, word, answer[:2000])
    # The plays did reach the files: what the agent wrote is where the answers said, relative to its root.
    written = {tool: "\n".join(a for t, _arguments, a in given if t == tool)
               for tool in ("add_task", "add_note", "read_message")}
    assert '"file": "home/' in written["add_task"] and "File: Seeds.md (in the notes folder)" in written["add_note"]
    assert "File: INBOX/" in written["read_message"]
