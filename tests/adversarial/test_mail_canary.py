"""The mail plugin's canary, across every tool and resource of parts 1 and 2, through a real `gateway serve`.

A closed project (vault) holds a message and the reply to it, a note in its folder, a task and a step of it, an
event and a contact (its client), each with one word. No answer of any tool or resource holds that word (nor the
words that would name those things), whatever is asked; a search's count is the same whatever its words; each
kept thing read or written by its address is refused; nothing is written into the closed project. The tools
listed by the server are checked against those played here: a tool added later without its play fails the test.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from gateway_mail.notes import sample as sample_notes

from gateway.testing import serve_client, write_config

CANARY = "bladderwrackcanary"
# Words that name the closed project's things without the canary (their titles, the client's name, its address).
NAMES = ("Vault matters", "Kim Keeper", "keeper@vault", "Vault plan", "strongbox", "count the keys",
         "meeting at the vault", "shared with the vault")
SEARCHES = (CANARY, "plumtree", "Vault", "Keeper", "strongbox", "keys", "nothingmatcheshere", f"{CANARY[:8]}*",
            "plumtree OR vault")


def _text(result) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {}, ensure_ascii=False)


def _plays(made: dict) -> dict[str, list[dict]]:
    """Every tool of the plugin and the arguments played on it: reading the closed things, searching their words,
    writing into them or beside them."""
    vault_mail = [f"mid:{made['ids'][k]}" for k in ("vault", "vault_reply")]
    kept = ["sioul:note/Vault/secret.md", "sioul:contact/keeper-1", "sioul:task/vault-1", "sioul:task/vault-2",
            "sioul:event/vault-event", "sioul:task/both-1", "sioul:project/vault", "sioul:case/vault", *vault_mail]
    searches = [{"query": q} for q in SEARCHES]
    return {
        "porch": [{}, {"open": True}],
        "search_mail": searches,
        "read_message": [{"address": a} for a in vault_mail],
        "read_attachment": [{"address": a, "part": n} for a in vault_mail for n in (1, 2)],
        "read_thread": [{"address": a, "whole": True} for a in vault_mail] + [
            {"address": f"mid:{made['ids'][k]}", "whole": True} for k in ("plumber", "friend")],
        "draft_reply": [{"address": a, "body": "ok"} for a in vault_mail],
        "list_tasks": [{"view": v} for v in ("now", "today", "all")] + [
            {"view": "all", "project": "vault"}, {"view": "all", "project": "dupont"}, {"view": "all", "list": "work"}],
        "agenda": [{}, {"start": "today", "days": 30}],
        "list_projects": [{}],
        "read_project": [{"address": a} for a in ("sioul:project/vault", "sioul:case/vault", "sioul:project/dupont",
                                                  "sioul:project/plumbing")],
        "now": [{}],
        "reminders": [{}, {"days": 90}],
        "add_task": [{"title": "step", "project": "vault"}, {"title": "step", "parent": "sioul:task/vault-1"},
                     {"title": "from mail", "from_message": vault_mail[0]},
                     {"title": "waits", "project": "dupont", "parent": "sioul:task/both-1"}],
        "complete_task": [{"address": a} for a in ("sioul:task/vault-1", "sioul:task/vault-2", "sioul:task/both-1")],
        "add_event": [{"title": "Lunch", "start": "2026-12-03 12:00"}],
        "search_contacts": searches,
        "search_notes": searches,
        "read_note": [{"address": "sioul:note/Vault/secret.md"}, {"address": "sioul:note/Vault/none.md"}],
        "add_note": [{"title": "x", "text": "y", "project": "vault"}, {"title": "x", "text": "y", "folder": "Vault"}],
        "link": [{"address": "sioul:note/Welcome.md", "to": a} for a in kept] + [
            {"address": a, "to": "https://example.org"} for a in kept],
        "links": [{"address": a} for a in kept],
        "find": searches,
    }


# The tools that give a count over a search's whole scope, and the key it is under.
COUNTED = {"search_mail": "left_out", "search_notes": "left_out", "search_contacts": "left_out"}
# Writes that must be refused (the rest of the writes played here are allowed: beside the closed project).
REFUSED_WRITES = {"draft_reply", "add_task", "complete_task", "add_note", "link", "read_message", "read_note",
                  "links", "read_attachment"}


def test_a_closed_project_is_never_shown_by_any_tool_or_resource(gateway_home: Path) -> None:
    made = sample_notes.everything(gateway_home, CANARY)
    write_config(gateway_home, made["config"], projects=made["projects"])
    vault_files = {p: p.read_bytes() for p in made["plan"]["files"].values() if "vault" in p.name}
    plays = _plays(made)

    async def play(client):
        listed = [t.name for t in (await client.list_tools()).tools]
        given, counts, refusals = [], {}, []
        for tool in listed:
            for arguments in plays.get(tool, []):
                result = await client.call_tool(tool, arguments)
                given.append((tool, arguments, _text(result)))
                if tool in COUNTED and not result.is_error:
                    counts.setdefault(tool, set()).add(result.structured_content[COUNTED[tool]])
                if tool in REFUSED_WRITES:
                    refusals.append((tool, arguments, result.is_error))
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        uris = [str(r.uri) for r in resources] + [
            *(f"mid:{made['ids'][k]}" for k in ("vault", "vault_reply")), "sioul:note/Vault/secret.md"]
        for uri in uris:
            try:
                given.append(("resource", uri, json.dumps((await client.read_resource(uri)).model_dump(mode="json"))))
            except Exception as refusal:  # noqa: BLE001 - a refusal is an answer too
                given.append(("resource", uri, str(refusal)))
        return listed, given, counts, refusals, [t.uri_template for t in templates]

    listed, given, counts, refusals, templates = anyio.run(_run, gateway_home, play)
    # Only the mail plugin is enabled: every tool listed is one of its own.
    assert set(listed) == set(plays), f"tools without a canary play: {set(listed) - set(plays)}"
    assert {"mid:{message_id}", "sioul:note/{path}"} <= set(templates)
    for tool, arguments, answer in given:
        assert CANARY not in answer, (tool, arguments)
        for name in NAMES:
            assert name.lower() not in answer.lower(), (tool, arguments, name)
    for tool, seen in counts.items():
        assert len(seen) == 1, (tool, seen)
    for tool, arguments, refused in refusals:
        assert refused, (tool, arguments)
    for path, before in vault_files.items():
        assert path.read_bytes() == before
    assert sorted(p.name for p in (made["notes"] / "Vault").iterdir()) == ["secret.md"]


async def _run(home: Path, play):
    async with serve_client(home) as client:
        return await play(client)
