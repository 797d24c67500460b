"""The AI shield played through a real `gateway serve` and the SDK's client.

A troll writes to the person's shielded press address (by To, and by a blind copy seen only in Delivered-To), with a
canary word in the subject, the text and the Message-ID; the person's judge (a small program written here) calls it
hostile. No answer of any mail tool, resource or spam tool holds the canary; the spam lists show the troll as
"someone at troll.example.net"; draft_reply, read_message, links and add_task refuse it with a sentence. A judge
that hangs leaves every call answered (the gateway's call deadline is shorter than the judge's timeout) and doctor
names the messages it could not judge. With no command, the person's labels (`gateway mail hostile` and
`not-hostile`) train the model that judges the next messages, and labelled mail stays as labelled while the server
counts that model again for a new tokenizer.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio
from click.testing import CliRunner
from gateway_mail.mail import judge
from gateway_mail.mail import sample as mail_sample
from gateway_spam import sample as spam_sample
from spamfilter import store
from spamfilter import tokens as tokenizer

from gateway.commands.cli import main
from gateway.testing import folders_of, read_audit, serve_client, write_config
from tests.adversarial.test_spam_traits_served import HAM_TEXT, _text, _trained
from tests.plugins.mail import shield_world
from tests.plugins.mail.shield_world import HOSTILE_CANARY, PRESS

TROLL_DOMAIN = "troll.example.net"
WAIT_SECONDS = 60  # at most, for the server's judge to give its verdicts (each poll is one call)


def _config(root: Path, **mail: object) -> dict:
    config = spam_sample.config(root)
    config["plugins"]["mail"].update(shielded=[PRESS], **mail)
    return config


def _without(answer: str, arguments: object) -> str:
    """An answer without what the agent itself wrote in its arguments (an address it gave may be echoed)."""
    for value in (arguments.values() if isinstance(arguments, dict) else [arguments]):
        if isinstance(value, str) and value:
            answer = answer.replace(value, "").replace(json.dumps(value)[1:-1], "")
    return answer


def _junk_hostile(root: Path, now: float) -> None:
    """Hostile mail to the press address in Junk, with a ham's words: spam_review lists it (a spam folder) and the
    filter gets it wrong, so spam_eval keeps it among its worst errors."""
    raw = spam_sample.message("Troll <troll@troll.example.net>", f"Junked {HOSTILE_CANARY}",
                              f"{HAM_TEXT} {HOSTILE_CANARY}", now - 60, f"junk.{HOSTILE_CANARY}@troll.example.net")
    spam_sample.deliver(root / "Junk", raw.replace(b"To: Pat Example <pat@example.org>", f"To: {PRESS}".encode()),
                        now - 60)


async def _judged(client, hostile: int) -> object:
    """search_mail once the server's judge gave its verdicts: `hostile` messages set aside, the kind one found."""
    for _ in range(WAIT_SECONDS * 5):
        found = await client.call_tool("search_mail", {"query": "plumtree"})
        shown = {h["address"] for h in found.structured_content["hits"]}
        if found.structured_content.get("shielded") == hostile and "mid:kind@example.net" in shown:
            return found
        await anyio.sleep(0.2)
    raise AssertionError(f"the judge did not judge in time: {_text(found)}")


def _plays(ids: dict[str, str]) -> dict[str, list[dict]]:
    """Arguments for the tools that can reach a message; every other tool is called with none (its refusal or
    its answer is checked for the canary all the same)."""
    hostile = [f"mid:{ids[k]}" for k in ("hostile", "blind")] + [f"mid:junk.{HOSTILE_CANARY}@troll.example.net"]
    searches = [{"query": q} for q in (HOSTILE_CANARY, "plumtree", "regret", "article", f"{HOSTILE_CANARY[:6]}*",
                                       f"from:{TROLL_DOMAIN}")]
    return {
        "porch": [{}, {"open": True}],
        "search_mail": searches + [{"query": "plumtree", "folder": "INBOX"}, {"query": "regret", "days": 2}],
        "read_message": [{"address": a} for a in hostile],
        "read_thread": [{"address": a, "whole": True} for a in hostile],
        "draft_reply": [{"address": a, "body": "Thank you."} for a in hostile],
        "find": searches,
        "links": [{"address": a} for a in hostile],
        "link": [{"address": a, "to": "https://example.org/press"} for a in hostile],
        "add_task": [{"title": "answer the press", "from_message": a} for a in hostile],
        "list_tasks": [{"view": "now"}], "agenda": [{}], "list_projects": [{}], "now": [{}],
        "search_notes": searches[:2], "search_contacts": searches[:2],
        "spam_status": [{}], "spam_eval": [{}], "spam_review": [{"limit": 200}], "spam_job": [{}],
        "spam_label": [{"address": hostile[2], "label": "spam"}],
    }


# Tools that only change something (their refusal is what is played) or that start jobs (played before).
NOT_PLAYED = {"add_note", "complete_task", "add_event", "read_note", "read_project", "spam_train", "spam_fetch"}
REFUSED = {"read_message", "read_thread", "draft_reply", "links", "link", "add_task"}


def test_hostile_mail_to_a_shielded_address_is_in_no_answer_and_someone_at_in_spam_lists(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    spam_sample.write_mailbox(root, messages=40, now=time.time())
    ids = shield_world.world(root)
    _junk_hostile(root, time.time())
    judge = shield_world.write_judge(gateway_home / "bin")
    write_config(gateway_home, _config(root, shield_command=judge, shield_timeout=20),
                 projects=spam_sample.PROJECTS)
    plays = _plays(ids)

    async def play():
        async with serve_client(gateway_home) as client:
            first = await client.call_tool("search_mail", {"query": HOSTILE_CANARY})  # nothing judged yet: kept
            judged = await _judged(client, hostile=3)
            await _trained(client)
            listed = [t.name for t in (await client.list_tools()).tools]
            given = []
            for tool in listed:
                if tool in NOT_PLAYED:
                    continue
                for arguments in plays.get(tool, [{}]):
                    given.append((tool, arguments, await client.call_tool(tool, arguments)))
            resources = [str(r.uri) for r in (await client.list_resources()).resources]
            read = []
            for prompt in (await client.list_prompts()).prompts:  # none of these plugins' yet: any added is played
                try:
                    read.append((prompt.name, json.dumps((await client.get_prompt(prompt.name, {})).model_dump(
                        mode="json"))))
                except Exception as refusal:  # noqa: BLE001 - a refusal is an answer too
                    read.append((prompt.name, str(refusal)))
            for uri in [*resources, f"mid:{ids['hostile']}", f"mid:{ids['blind']}"]:
                try:
                    read.append((uri, json.dumps((await client.read_resource(uri)).model_dump(mode="json"))))
                except Exception as refusal:  # noqa: BLE001 - a refusal is an answer too
                    read.append((uri, str(refusal)))
            kind = await client.call_tool("read_message", {"address": "mid:kind@example.net"})
            return first, judged, listed, given, read, kind

    first, judged, listed, given, read, kind = anyio.run(play)
    assert not first.is_error and first.structured_content["hits"] == []
    assert {"porch", "search_mail", "read_message", "draft_reply", "spam_review", "spam_eval"} <= set(listed)
    for tool, arguments, answer in given:
        assert HOSTILE_CANARY not in _without(_text(answer), arguments), (tool, arguments)
        assert "vile scum" not in _text(answer), (tool, arguments)  # no word of its text either
        if tool in REFUSED:
            assert answer.is_error, (tool, arguments)
    for uri, answer in read:
        assert HOSTILE_CANARY not in _without(answer, uri), uri
    by_tool = {tool: answer for tool, _arguments, answer in given}
    # Refused with a sentence that says why and what the person can do.
    refusal = next(a for t, _a, a in given if t == "draft_reply")
    assert "shield" in _text(refusal) and "neither read nor answered" in _text(refusal)
    # Counted: the Porch sets them aside, a search says how many it left out, whatever its words.
    porch = by_tool["porch"].structured_content["accounts"][0]
    assert porch["shielded"] == 3 and porch["set_aside"] >= 3
    counts = {a.structured_content["shielded"] for t, args, a in given if t == "search_mail" and set(args) == {"query"}}
    assert counts == {3}
    # The kind mail to the same address, judged ok, is given; the blind copy was judged too (Delivered-To).
    assert not kind.is_error and "orchard" in _text(kind)
    assert "mid:kind@example.net" in {h["address"] for h in judged.structured_content["hits"]}
    # In the spam lists: someone at the troll's domain, nothing else of it.
    review = by_tool["spam_review"]
    veiled = [e for e in review.structured_content["spam"] + review.structured_content["unsure"]
              if e.get("shield")]
    assert veiled and all(e["sender"] == f"someone at {TROLL_DOMAIN}" for e in veiled)
    assert f"someone at {TROLL_DOMAIN}" in _text(review) and '"someone at" a domain' in _text(review)
    worst = by_tool["spam_eval"].structured_content["worst"]
    assert any(e["sender"] == f"someone at {TROLL_DOMAIN}" for e in worst), worst
    label = by_tool["spam_label"]
    assert not label.is_error and f"someone at {TROLL_DOMAIN}" in _text(label)
    # The audit log names what was given: never one of them (the agent's own arguments aside).
    for line in read_audit(gateway_home):
        assert HOSTILE_CANARY not in json.dumps({k: v for k, v in line.items() if k not in ("arguments", "uri")}), line


def test_a_judge_that_hangs_leaves_calls_answered_and_doctor_names_what_waits(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    ids = shield_world.world(root)
    hanging = shield_world.write_judge(gateway_home / "bin", shield_world.HANGING, "hanging.py")
    config = mail_sample.config(root, shielded=[PRESS], shield_command=hanging, shield_timeout=4)
    config["gateway"]["call_timeout"] = 3  # a call that waited for the judge would fail its deadline
    write_config(gateway_home, config, projects=[])

    async def play():
        async with serve_client(gateway_home) as client:
            answers = []
            for _ in range(4):
                answers.append(await client.call_tool("search_mail", {"query": "plumtree"}))
                answers.append(await client.call_tool("porch", {"open": True}))
                await anyio.sleep(0.5)
            waiting = _doctor()
            failed = ""
            for _ in range(WAIT_SECONDS):  # the judge's timeout passes for each message in turn
                failed = _doctor()
                if failed.count("did not answer within 4 s") >= 3:
                    break
                await anyio.sleep(1)
            after = await client.call_tool("search_mail", {"query": "plumtree"})
            return answers, waiting, failed, after

    answers, waiting, failed, after = anyio.run(play)
    for answer in [*answers, after]:
        assert not answer.is_error, _text(answer)
        assert HOSTILE_CANARY not in _text(answer)
    assert {a.structured_content["shielded"] for a in answers if "shielded" in a.structured_content} == {3}
    assert after.structured_content["shielded"] == 3  # still kept: closing errs towards keeping
    assert "3 messages to a shielded address not judged yet" in waiting
    assert "mid:kind@example.net" in waiting and f"mid:{ids['hostile']}" in waiting
    assert failed.count("did not answer within 4 s") >= 3, failed
    assert "judging:" not in failed  # the judge's standard error is nowhere


def _doctor() -> str:
    return CliRunner().invoke(main, ["doctor"], catch_exceptions=False).output


def test_the_persons_labels_train_the_model_and_the_next_message_follows_them(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    ids = shield_world.world(root)
    write_config(gateway_home, mail_sample.config(root, shielded=[PRESS]), projects=[])

    async def play():
        async with serve_client(gateway_home) as client:
            before = await client.call_tool("search_mail", {"query": "plumtree"})
            for command in (["mail", "hostile", f"mid:{ids['hostile']}"], ["mail", "not-hostile", "mid:kind@example.net"]):
                said = CliRunner().invoke(main, command, catch_exceptions=False)
                assert said.exit_code == 0, said.output
            now = time.time()
            for role, words, sender in (("next-hostile", shield_world.HOSTILE_WORDS, "Third <third@troll.example.net>"),
                                        ("next-kind", shield_world.KIND_WORDS, "Fan <fan@example.com>")):
                mail_sample.deliver(root / "INBOX", mail_sample.message(
                    message_id=f"{role}@example.net", sender=sender, to=PRESS, subject="Your piece",
                    body=f"{words}. plumtree", date=now))
            after = await client.call_tool("search_mail", {"query": "plumtree"})
            reads = {role: await client.call_tool("read_message", {"address": f"mid:{role}@example.net"})
                     for role in ("next-hostile", "next-kind")}
            return before, after, reads

    before, after, reads = anyio.run(play)
    # No judge yet (no command, no labels): every message to the press address is kept until judged.
    assert before.structured_content["shielded"] == 3
    assert "mid:kind@example.net" not in {h["address"] for h in before.structured_content["hits"]}
    shown = {h["address"] for h in after.structured_content["hits"]}
    assert "mid:kind@example.net" in shown and "mid:next-kind@example.net" in shown
    assert "mid:next-hostile@example.net" not in shown and f"mid:{ids['hostile']}" not in shown
    assert f"mid:{ids['blind']}" not in shown  # unlabelled, judged hostile by the model
    assert after.structured_content["shielded"] == 3
    assert reads["next-hostile"].is_error and not reads["next-kind"].is_error


def test_labelled_mail_stays_shielded_while_the_labels_model_is_counted_again(gateway_home: Path,
                                                                              tmp_path: Path) -> None:
    """The person labelled the troll's mail hostile and the kind mail not; then the spam filter's tokenizer changed
    (the model's version forged, with a count no label gave). Through `gateway serve`: the labelled mail is kept and
    given as before in every answer while the server counts the model again; new mail to the address waits, kept,
    until the model is counted, then is judged by it; the model is then the one the same labels make afresh."""
    root = gateway_home / "Mail" / "personal"
    ids = shield_world.world(root)
    write_config(gateway_home, mail_sample.config(root, shielded=[PRESS]), projects=[])
    for command in (["mail", "hostile", f"mid:{ids['hostile']}"], ["mail", "not-hostile", "mid:kind@example.net"]):
        said = CliRunner().invoke(main, command, catch_exceptions=False)
        assert said.exit_code == 0, said.output
    data = folders_of(gateway_home).data / "plugins" / "mail"
    table = store.Table(judge.model_path(data))
    counts, trained = table.everything()
    sources, spam, ham = table.sources(), table.spam, table.ham
    table.close()
    store.write(judge.model_path(data), spam, ham, {**counts, "stalecount": [7, 0]}, trained, tokens_version=1,
                sources=sources)
    now = time.time()
    for role, words in (("next-hostile", f"{shield_world.HOSTILE_WORDS} {HOSTILE_CANARY}"),
                        ("next-kind", shield_world.KIND_WORDS)):
        mail_sample.deliver(root / "INBOX", mail_sample.message(
            message_id=f"{role}@example.net", sender="Someone <someone@example.com>", to=PRESS, subject="Your piece",
            body=f"{words}. plumtree", date=now))

    async def play():
        async with serve_client(gateway_home) as client:
            answers = []
            for _ in range(WAIT_SECONDS * 5):
                answers.append(await client.call_tool("search_mail", {"query": "plumtree"}))
                if "mid:next-kind@example.net" in {h["address"] for h in answers[-1].structured_content["hits"]}:
                    break
                await anyio.sleep(0.2)
            reads = {role: await client.call_tool("read_message", {"address": address}) for role, address in
                     (("hostile", f"mid:{ids['hostile']}"), ("kind", "mid:kind@example.net"),
                      ("next-hostile", "mid:next-hostile@example.net"))}
            return answers, reads

    answers, reads = anyio.run(play)
    shown = [{h["address"] for h in a.structured_content["hits"]} for a in answers]
    assert "mid:next-kind@example.net" not in shown[0]  # waits, kept, while the model is counted again
    assert "mid:next-kind@example.net" in shown[-1], _text(answers[-1])
    for answer, addresses in zip(answers, shown, strict=True):
        assert not answer.is_error and HOSTILE_CANARY not in _text(answer)
        assert "mid:kind@example.net" in addresses and f"mid:{ids['hostile']}" not in addresses
        assert "mid:next-hostile@example.net" not in addresses and f"mid:{ids['blind']}" not in addresses
    assert reads["hostile"].is_error and reads["next-hostile"].is_error and not reads["kind"].is_error
    assert "neither read nor answered" in _text(reads["hostile"])
    # The model the server wrote: today's tokenizer, no count that no label gave, the same labels counted afresh.
    files = {m: p.read_bytes() for p in (root / "INBOX" / "cur").iterdir()
             for m in (ids["hostile"], "kind@example.net") if f"<{m}>".encode() in p.read_bytes()}
    fresh = tmp_path / "fresh"
    for message_id, verdict in ((ids["hostile"], "hostile"), ("kind@example.net", "ok")):
        judge.learn(fresh, message_id, verdict, lambda m: [files[m]])
    written, again = store.Table(judge.model_path(data)), store.Table(judge.model_path(fresh))
    try:
        assert written.tokens_version == tokenizer.VERSION and "stalecount" not in written.everything()[0]
        assert (written.everything(), written.sources(), written.spam, written.ham) == (
            again.everything(), again.sources(), again.spam, again.ham)
    finally:
        written.close()
        again.close()
