"""One project closed everywhere: the seed's `a_closed_project_is_never_shown`, across every built-in at once.

One home holds one closed project, `lawsuit`, and a thing of it in every plugin, each with its own canary word and
placed by a different route kind: mail (by sender with and without authentication, subject, a word of the text, an
attachment's name, a folder, an account's path, a reply, sent mail), notes, tasks, events and contacts (the mail
plugin's sample world), an agent session by its cwd, a cron job by the folder it runs in, timeline events by their
app and by the path a window title names, a text conversation and its calls by a phone number, a message the
spam filter fetched, by its sender, a budget line and transactions by their ledger account,
an hour tracked and an invoice by the project they name. One `gateway serve` with every plugin on is asked everything: every tool of
every plugin with several argument sets, every resource listed, every kept thing's address, and every prompt.

With the project open, each canary is in some answer (so each sample is really reached); closed, none is in any.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
from gateway_cron import store as cron_store
from gateway_ledger import sample as ledger_sample
from gateway_mail.projects import sample as mail_world
from gateway_sessions import store as sessions_store
from gateway_sessions.importing import import_agent
from gateway_spam import corpus
from gateway_texts import sample as texts_sample
from gateway_time import sample as time_sample

from gateway.testing import folders_of, listed_resources, serve_client, write_config
from tests.plugins.timeline.timeline_helpers import envelope, fill, home_store, minute_now

CANARIES = {
    "mail": "quillmailcanary", "sessions": "quillsessioncanary", "cron": "quillcroncanary",
    "timeline-app": "quillappcanary", "timeline-path": "quillpathcanary", "texts": "quilltextcanary",
    "calls": "quillcallcanary", "spam": "quillspamcanary", "ledger": "quillledgercanary",
    "time": "quilltimecanary", "invoice": "quillinvoicecanary",
}
LAWYER_PHONE = "+1 212 555 0188"
SEARCHES = ("quill*", "plumtree", "lawsuit", "Lee", "law.example.net", "hearing", "strongbox", "counsel")


def _session(home: Path, repo: Path) -> None:
    line = {"type": "user", "uuid": "u-1", "sessionId": "lawsuit-session", "cwd": str(repo),
            "timestamp": (datetime.now(UTC) - timedelta(hours=2)).isoformat(timespec="milliseconds").replace(
                "+00:00", "Z"),
            "message": {"role": "user", "content": f"Draft the hearing notes, {CANARIES['sessions']} strongbox"}}
    transcript = home / ".claude" / "projects" / "-src-lawsuit" / "lawsuit-session.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(json.dumps(line) + "\n")
    connection = sessions_store.open_for_writing(
        sessions_store.default_path(folders_of(home).for_plugin("sessions").data))
    try:
        assert not import_agent(connection, "claude-code").failed
    finally:
        connection.close()


def _cron(home: Path, repo: Path) -> None:
    connection = cron_store.open_for_writing(cron_store.default_path(folders_of(home).for_plugin("cron").data))
    try:
        cron_store.add(connection, cron_store.Job("hearing-digest", "@daily", f"Sum up the hearing {CANARIES['cron']}",
                                                  "", True, "UTC", str(repo), "", ""))
    finally:
        connection.close()


def _timeline(home: Path, repo: Path) -> None:
    now = minute_now()
    fill(home_store(home), [
        envelope(now - timedelta(minutes=9), "app.focus", "Lawsuitly", f"Exhibit {CANARIES['timeline-app']}",
                 event_id="ev-app"),
        envelope(now - timedelta(minutes=8), "app.focus", "Code", f"brief.md {CANARIES['timeline-path']} — {repo}",
                 event_id="ev-path"),
    ])


def _texts(home: Path) -> dict[str, Any]:
    exports = home / "Phone" / "SMSBackupRestore"
    exports.mkdir(parents=True)
    now = datetime.now(UTC).replace(microsecond=0)
    (exports / "sms-20261201090000.xml").write_text(texts_sample.smses([
        texts_sample.sms(LAWYER_PHONE, now - timedelta(hours=3), f"The strongbox key, {CANARIES['texts']}", 1),
        texts_sample.sms("+1 212 555 0142", now - timedelta(hours=2), "plumtree dinner?", 1, "Ada Example"),
    ]), encoding="utf-8")
    (exports / "calls-20261201090000.xml").write_text(texts_sample.calls([
        texts_sample.call(LAWYER_PHONE, now - timedelta(hours=1), 1, 65, f"Lee {CANARIES['calls']}"),
    ]), encoding="utf-8")
    return {"enabled": True, "exports": str(exports), "region": "US", "timezone": "UTC"}


def _spam(home: Path) -> str:
    raw = (f"From: Lee Lawyer <lee@law.example.net>\nTo: pat@example.org\nSubject: Hearing {CANARIES['spam']}\n"
           "Message-ID: <fetched-hearing@law.example.net>\n\nplumtree hearing moved.\n").encode()
    identity = corpus.corpus_id(raw)
    folder = corpus.corpus_folder(folders_of(home).for_plugin("spam").data) / "ham"
    folder.mkdir(parents=True)
    (folder / f"{identity}.eml").write_bytes(raw)
    return f"spam:corpus/{identity}"


def _time(home: Path) -> dict[str, Any]:
    """An hour tracked with the project's tag, and an invoice whose reference names the project."""
    db = home / ".local" / "share" / "timewarrior"
    (db / "data").mkdir(parents=True)
    start = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=5)
    (db / "data" / f"{start:%Y-%m}.data").write_text(
        time_sample.interval_line(start, start + timedelta(hours=1), ["project:lawsuit", f"{CANARIES['time']} brief"]))
    folder = home / "Invoices"
    time_sample.invoice_pdf(folder / "2026" / "counsel-5.pdf", "C-5", "Lee Counsel", f"Pat {CANARIES['invoice']}",
                            "900.00", issued=start.date() - timedelta(days=3), due=start.date() + timedelta(days=27),
                            reference="project:lawsuit")
    return {"timewarrior": str(db), "invoices": str(folder), "timezone": "UTC"}


def _home(home: Path) -> dict[str, Any]:
    made = mail_world.world(home, CANARIES["mail"])
    repo = home / "src" / "lawsuit"
    repo.mkdir(parents=True)
    _session(home, repo)
    _cron(home, repo)
    _timeline(home, repo)
    texts = _texts(home)
    fetched = _spam(home)
    ledger = ledger_sample.everything(home, CANARIES["ledger"], project="lawsuit")
    time = _time(home)
    lawsuit, garden = made["projects"]
    lawsuit = {**lawsuit, "paths": [*lawsuit["paths"], str(repo)], "apps": ["Lawsuitly"],
               "senders": [*lawsuit["senders"], LAWYER_PHONE], "accounts": ["Expenses:Lawsuit"],
               "subjects": [*lawsuit["subjects"], "Harbor Marina"]}
    config = {"gateway": {"plugins": ["mail", "sessions", "cron", "timeline", "spam", "texts", "ledger", "time"],
                          "refresh_budget_ms": 60_000},
              "plugins": {**made["config"]["plugins"], "texts": texts, "timeline": {"probe_activitywatch": False},
                          "ledger": ledger["config"]["plugins"]["ledger"], "time": time}}
    kept = [*(f"mid:{made['ids'][role]}" for role in mail_world_kept()),
            "sioul:note/Lawsuit/plan.md", "sioul:task/t-refid", "sioul:task/t-list", "sioul:event/e-calendar",
            "sioul:contact/lee-1", "sioul:contact/ria-1", "sioul:project/lawsuit",
            "rousseau://sessions/lawsuit-session", "rousseau://cron/hearing-digest", "timeline://events/ev-app",
            "timeline://events/ev-path", fetched]
    return {"config": config, "projects": [lawsuit, garden], "kept": kept, "phone": "+12125550188"}


def mail_world_kept() -> tuple[str, ...]:
    return ("sender", "unproven", "subject", "body", "attachment", "folder", "reply", "sent", "account")


def _plays(made: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Arguments per tool; a tool not named here is called with none."""
    searches = [{"query": q} for q in SEARCHES]
    kept = made["kept"]
    mids = [a for a in kept if a.startswith("mid:")]
    return {
        "rousseau_search_sessions": searches,
        "rousseau_read_session": [{"id": "lawsuit-session"}],
        "sessions_touching": [{"path": str(Path.home() / "src")}, {"path": str(Path.home() / "src" / "lawsuit")}],
        "search_tool_calls": [{}, {"query": "hearing"}],
        "agent_week": [{}],
        "get_timeline": [{"since": "1d"}, {"since": "1d", "format": "json"}],
        "query_events": [{"since": "1d"}, {"since": "1d", "app": "Lawsuitly"}],
        "porch": [{}, {"open": True}],
        "search_mail": searches,
        "read_message": [{"address": a} for a in mids],
        "read_thread": [{"address": a, "whole": True} for a in mids],
        "reminders": [{}, {"days": 90}],
        "draft_reply": [{"address": a, "body": "ok"} for a in mids[:3]],
        "list_tasks": [{"view": v} for v in ("now", "today", "all")] + [{"view": "all", "project": "lawsuit"}],
        "agenda": [{}, {"start": "today", "days": 30}],
        "read_project": [{"address": "sioul:project/lawsuit"}],
        "add_task": [{"title": "x", "project": "lawsuit"}],
        "complete_task": [{"address": "sioul:task/t-refid"}],
        "add_event": [{"title": "Lunch", "start": "2026-12-03 12:00"}],
        "search_contacts": searches,
        "search_notes": searches,
        "read_note": [{"address": "sioul:note/Lawsuit/plan.md"}],
        "add_note": [{"title": "x", "text": "y", "folder": "Lawsuit"}],
        "link": [{"address": "sioul:note/Welcome.md", "to": a} for a in kept[:3]],
        "links": [{"address": a} for a in kept],
        "find": searches,
        "spam_review": [{}, {"limit": 50}],
        "spam_label": [{"address": a, "label": "ham"} for a in (*mids[:2], kept[-1])],
        "spam_job": [],
        "spam_train": [{"dry_run": True}],
        "spam_fetch": [],
        "list_conversations": [{}],
        "read_conversation": [{"address": made["phone"]}],
        "search_texts": searches,
        "list_calls": [{}, {"days": 3650}],
        "draft_text": [{"address": made["phone"], "body": "ok"}],
        "budgets": [{}, {"period": f"{datetime.now(UTC):%Y}"}],
        "search_transactions": searches,
        "time_spent": [{}, {"project": "lawsuit"}, {"since": "2026-01-01"}],
        "invoices": [{}, {"status": "all"}, {"status": "all", "query": "counsel"}],
    }


def _text(result: Any) -> str:
    return json.dumps(result.model_dump(mode="json"), ensure_ascii=False)


async def _ask_everything(home: Path, made: dict[str, Any]) -> list[tuple[str, str]]:
    plays = _plays(made)
    answers: list[tuple[str, str]] = []

    async def asked(label: str, call: Any) -> None:
        try:
            answers.append((label, _text(await call)))
        except Exception as refusal:  # noqa: BLE001 - a refusal is an answer too
            answers.append((label, str(refusal)))

    async with serve_client(home) as client:
        tools = (await client.list_tools()).tools
        answers.append(("tools/list", json.dumps([t.model_dump(mode="json") for t in tools])))
        for tool in tools:
            for arguments in plays.get(tool.name, [{}]):
                await asked(f"{tool.name} {json.dumps(arguments)}", client.call_tool(tool.name, arguments))
        resources = await listed_resources(client)
        answers.append(("resources/list", json.dumps([r.model_dump(mode="json") for r in resources])))
        for uri in dict.fromkeys([str(r.uri) for r in resources] + made["kept"]):
            await asked(f"resources/read {uri}", client.read_resource(uri))
        for prompt in (await client.list_prompts()).prompts:
            if not any(a.required for a in prompt.arguments or []):
                await asked(f"prompts/get {prompt.name}", client.get_prompt(prompt.name, {}))
    return answers


def test_a_closed_project_is_never_shown_by_any_plugin(gateway_home: Path) -> None:
    made = _home(gateway_home)
    lawsuit, garden = made["projects"]

    write_config(gateway_home, made["config"], projects=[{**lawsuit, "ai": True}, garden])
    opened = anyio.run(_ask_everything, gateway_home, made)
    unseen = [name for name, canary in CANARIES.items() if not any(canary in text for _call, text in opened)]
    assert not unseen, f"with the project open, no answer holds these canaries (the samples prove nothing): {unseen}"

    write_config(gateway_home, made["config"], projects=[lawsuit, garden])
    closed = anyio.run(_ask_everything, gateway_home, made)
    leaks = [(call, name) for call, text in closed for name, canary in CANARIES.items() if canary in text]
    assert not leaks, f"the closed project's canaries were given: {leaks}"
    assert len(closed) > 150  # every plugin was asked: far more answers than any one plugin gives
