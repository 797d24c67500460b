"""The spam filter's lists agree with the mail tools about what a closed project holds, played through a real
`gateway serve` and the SDK's client.

The attacks: a message the person tied to a project with the mail plugin's `link` (while the project was open),
then the project closed: its envelope, and its reply's, must leave every spam list, its subject every answer, and
`spam_label` on it must be refused in the gate's words (it used to be labelled, learned and echoed). A closed
project's sender route keeps a sender's mail that no server authenticated (a forger gains nothing by being kept);
an open project's sender route opens only mail the account's own server authenticated.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio
from gateway_spam import sample

from gateway.testing import folders_of, read_audit, serve_client, write_config

TIED_CANARY = "settlementcanary"
REPLY_CANARY = "quietreplycanary"
LAW_CANARY = "lawfirmcanary"
PROVEN_WORD = "provenletterword"
UNPROVEN_CANARY = "unprovencanary"
OWN_SERVER = "mx.example.org"
HAM_TEXT = "garden plumtree meeting tuesday harvest compost orchard choir rehearsal " + sample.BODY_CANARY


def _text(result) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {}, ensure_ascii=False)


async def _trained(client) -> dict:
    started = await client.call_tool("spam_train", {})
    assert not started.is_error, started.content
    for _ in range(900):
        followed = await client.call_tool("spam_job", {"id": started.structured_content["id"]})
        if followed.structured_content["state"] != "running":
            assert followed.structured_content["state"] == "done", followed.structured_content
            return followed.structured_content
        await anyio.sleep(0.2)
    raise AssertionError("the training job did not end")


def _listed(review) -> list[str]:
    return [e["address"] for e in review.structured_content["unsure"] + review.structured_content["spam"]]


def _deliver_in_junk(root: Path, raw: bytes, when: float) -> None:
    sample.deliver(root / "Junk", raw, when)


def test_a_message_tied_to_a_project_then_closed_leaves_every_spam_list_and_is_never_labelled(
        gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    sample.write_mailbox(root, messages=40, now=time.time())
    now = time.time()
    # In Junk with a ham's words: the filter gets it wrong, so it is also one of spam_eval's worst errors.
    _deliver_in_junk(root, sample.message("Olga Other <olga@example.net>", f"Figures {TIED_CANARY}",
                                          f"{HAM_TEXT} tied", now - 40, "tied@example.net"), now - 40)
    # A reply naming the tied message in In-Reply-To only, with nothing else that places it.
    reply = sample.message("Ada Example <ada@example.org>", f"Lunch {REPLY_CANARY}", f"{HAM_TEXT} reply", now - 30,
                           "reply@example.org").replace(b"Message-ID: ", b"In-Reply-To: <tied@example.net>\n"
                                                        b"Message-ID: ", 1)
    _deliver_in_junk(root, reply, now - 30)
    _deliver_in_junk(root, sample.message("Ada Example <ada@example.org>", "Bicycle controlword",
                                          f"{HAM_TEXT} control", now - 20, "control@example.org"), now - 20)
    lawsuit = {"id": "lawsuit", "name": "Dispute", "ai": True}
    write_config(gateway_home, sample.config(root), projects=[*sample.PROJECTS, lawsuit])

    async def play():
        async with serve_client(gateway_home) as client:
            await _trained(client)
            tie = await client.call_tool("link", {"address": "mid:tied@example.net", "to": "sioul:project/lawsuit"})
            assert not tie.is_error, _text(tie)
            before = await client.call_tool("spam_review", {"limit": 200})
            write_config(gateway_home, sample.config(root), projects=[*sample.PROJECTS, {**lawsuit, "ai": False}])
            after = {"review": await client.call_tool("spam_review", {"limit": 200}),
                     "eval": await client.call_tool("spam_eval", {}),
                     "status": await client.call_tool("spam_status", {})}
            labels = [await client.call_tool("spam_label", {"address": f"mid:{mid}", "label": "ham"})
                      for mid in ("tied@example.net", "reply@example.org", "control@example.org")]
            read = await client.call_tool("read_message", {"id": "mid:tied@example.net"})
            return before, after, labels, read

    before, after, labels, read = anyio.run(play)
    # While the project was open, both were listed: the test can fail.
    assert {"mid:tied@example.net", "mid:reply@example.org"} <= set(_listed(before))
    assert TIED_CANARY in _text(before) and REPLY_CANARY in _text(before)
    stored = json.loads((folders_of(gateway_home).data / "plugins" / "spam" / "evaluation.json").read_text())
    assert "mid:tied@example.net" in {e["address"] for e in stored["worst"]}  # the bait spam_eval would list

    given = "".join(_text(answer) for answer in [*after.values(), *labels])
    assert TIED_CANARY not in given and REPLY_CANARY not in given and sample.CANARY not in given
    assert not {"mid:tied@example.net", "mid:reply@example.org"} & set(_listed(after["review"]))
    assert "controlword" in _text(after["review"]) and "controlword" in _text(after["eval"])
    review = after["review"].structured_content
    assert review["left_out"] == 3  # the vault's message, the tied one and its reply: counted, never named
    assert "3 messages left out" in _text(after["review"])
    assert after["eval"].structured_content["left_out"] >= 1
    assert "mid:tied@example.net" not in {e["address"] for e in after["eval"].structured_content["worst"]}
    for refused in labels[:2]:
        assert refused.is_error and "closed to AI agents; only the person can open it" in _text(refused)
    assert "`gateway access why mid:tied@example.net`" in _text(labels[0])
    assert not labels[2].is_error, _text(labels[2])
    labelled = (folders_of(gateway_home).data / "plugins" / "spam" / "labels.jsonl").read_text()
    assert "tied@example.net" not in labelled and "reply@example.org" not in labelled
    assert "control@example.org" in labelled
    # The mail tools say the same of it.
    assert read.is_error and TIED_CANARY not in _text(read)
    audit = json.dumps(read_audit(gateway_home))
    assert TIED_CANARY not in audit and REPLY_CANARY not in audit


def _authenticated(domain: str) -> bytes:
    return (f"Authentication-Results: {OWN_SERVER}; spf=pass smtp.mailfrom=lee@{domain}; "
            f"dkim=pass header.d={domain}\n").encode()


def test_sender_routes_close_whatever_the_proof_and_open_only_proven_mail(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    sample.write_mailbox(root, messages=40, now=time.time())
    now = time.time()
    # From the closed project's firm, with no Authentication-Results at all (or forged: the same to the gate).
    _deliver_in_junk(root, sample.message("Lee Lawyer <lee@law.example.net>", f"Your case {LAW_CANARY}",
                                          "lottery jackpot casino bonus prize winner", now - 50,
                                          "law@law.example.net"), now - 50)
    # From the open project's sender: one authenticated by the account's own server, one not.
    proven = sample.message("Gil Garden <lee@garden.example.org>", f"Seeds {PROVEN_WORD}",
                            "lottery jackpot casino bonus prize winner seeds", now - 40, "proven@garden.example.org")
    _deliver_in_junk(root, _authenticated("garden.example.org") + proven, now - 40)
    unproven = sample.message("Gil Garden <lee@garden.example.org>", f"Seeds {UNPROVEN_CANARY}",
                              "lottery jackpot casino bonus prize winner bulbs", now - 30, "unproven@garden.example.org")
    _deliver_in_junk(root, b"Authentication-Results: relay.example.net; spf=pass smtp.mailfrom=garden.example.org\n"
                     + unproven, now - 30)  # another server's word: not the account's own
    config = sample.config(root)
    config["plugins"]["mail"]["accounts"][0]["authserv_id"] = OWN_SERVER
    projects = [{"id": "lawsuit", "name": "Dispute", "ai": False, "senders": ["@law.example.net"]},
                {"id": "garden", "name": "Garden", "ai": True, "senders": ["@garden.example.org"]}]
    write_config(gateway_home, config, projects=projects)

    async def play():
        async with serve_client(gateway_home) as client:
            await _trained(client)
            opened = await client.call_tool("spam_review", {"limit": 200})
            label = await client.call_tool("spam_label", {"address": "mid:law@law.example.net", "label": "ham"})
            # Now mail in no project is closed too: only what an open project's route takes may be shown.
            write_config(gateway_home, {**config, "access": {"outside_projects": False}}, projects=projects)
            closed = await client.call_tool("spam_review", {"limit": 200})
            refused = await client.call_tool("spam_label", {"address": "mid:unproven@garden.example.org",
                                                            "label": "spam"})
            return opened, label, closed, refused

    opened, label, closed, refused = anyio.run(play)
    assert LAW_CANARY not in _text(opened) + _text(label) + _text(closed) + _text(refused)
    assert "mid:law@law.example.net" not in _listed(opened)
    assert label.is_error and "closed to AI agents" in _text(label)
    # Both garden messages are shown while mail in no project is open (the control for what follows).
    assert {"mid:proven@garden.example.org", "mid:unproven@garden.example.org"} <= set(_listed(opened))
    assert _listed(closed) == ["mid:proven@garden.example.org"] and PROVEN_WORD in _text(closed)
    assert UNPROVEN_CANARY not in _text(closed) + _text(refused)
    assert refused.is_error and "closed to AI agents" in _text(refused)
