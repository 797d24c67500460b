"""The filter cannot be poisoned by an agent's labels, played through a real `gateway serve` and the SDK's client.

The attacks: labels that make a known correspondent's next mail spam (Ada's own messages labelled spam), labels on
a firm's newsletters that move its lawyer's mail out of ham, and more labels than a day allows. The person's
delivery runs `gateway spam classify`, so that is what is asked after the attack. Then a client's labels are
listed and undone from the command line, and the model scores as it did before they were given.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import time
from pathlib import Path

import anyio
from gateway_spam import corpus, sample
from gateway_spam.model import Model
from gateway_spam.tokens import stripped, tokens

from gateway.api.context import home_environment
from gateway.testing import folders_of, serve_client, write_config
from tests.forkserver import gateway_command

ADA = "Ada Example <ada@example.org>"
LAWYER = "Lee Counsel <lee@firm.example.com>"
NEWS = "Firm News <news@firm.example.com>"
ADA_WORDS = ("orchard", "plumtree", "harvest", "compost", "seedlings", "ladder", "watering", "cider", "pruning")
LAW_WORDS = ("contract", "clause", "lease", "signature", "review", "tenancy", "deposit", "counterpart", "annex")
NEWS_WORDS = ("webinar", "insights", "regulation", "briefing", "quarterly", "seminar", "update", "events")
FIRM = "Firm Partners LLP, litigation and property counsel."


def _world(home: Path, **spam: object) -> Path:
    """An account whose Sent folder shows the person writing to Ada and to the firm's lawyer; Ada's mail, the
    firm's newsletters and other ham in INBOX (the lawyer has not answered yet); spam in Junk."""
    rng = random.Random(11)
    root = home / "Mail" / "personal"
    now = time.time() - 5 * 86400
    for number in range(24):  # spam
        when = now - number * 3000
        words = " ".join(rng.choice(sample.SPAM_WORDS) for _ in range(25))
        sample.deliver(root / "Junk", sample.message(rng.choice(sample.SPAM_SENDERS), words[:40].title(), words,
                                                     when, f"spam{number}@winner.example.net"), when)
    for number in range(8):
        when = now - number * 3100
        sample.deliver(root / "INBOX", sample.message(ADA, f"Orchard {rng.choice(ADA_WORDS)}",
                                                      " ".join(rng.choice(ADA_WORDS) for _ in range(20)), when,
                                                      f"ada{number}@example.org"), when)
    for number in range(8):
        when = now - number * 3200
        sample.deliver(root / "INBOX", sample.message(NEWS, f"Firm briefing {rng.choice(NEWS_WORDS)}",
                                                      " ".join(rng.choice(NEWS_WORDS) for _ in range(20)) + " " + FIRM,
                                                      when, f"news{number}@firm.example.com"), when)
    for number in range(10):
        when = now - number * 3400
        sample.deliver(root / "INBOX", sample.message(rng.choice(sample.HAM_SENDERS[1:]), "Choir rehearsal",
                                                      " ".join(rng.choice(sample.HAM_WORDS) for _ in range(20)), when,
                                                      f"ham{number}@example.net"), when)
    for number, (to, words) in enumerate([("ada@example.org", ADA_WORDS), ("lee@firm.example.com", LAW_WORDS)]):
        sent = sample.message("Pat Example <pat@example.org>", "Re: hello", " ".join(words), now, f"sent{number}@example.org")
        sample.deliver(root / "Sent", sent.replace(b"To: Pat Example <pat@example.org>", f"To: {to}".encode()), now)
    write_config(home, sample.config(root, **spam))
    return root


def _next_mail(root: Path, sender: str, words: tuple[str, ...], extra: str, message_id: str) -> Path:
    rng = random.Random(message_id)
    raw = sample.message(sender, f"About the {words[0]}", " ".join(rng.choice(words) for _ in range(20)) + extra,
                         time.time(), message_id)
    return sample.deliver(root / "INBOX", raw, time.time(), flags="")


def _gateway(home: Path, *arguments: str) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(home)}
    return subprocess.run(gateway_command(*arguments), env=env, capture_output=True, text=True,
                          timeout=300)


async def _train(client) -> None:
    started = await client.call_tool("spam_train", {})
    assert not started.is_error, started.content
    for _ in range(900):
        followed = await client.call_tool("spam_job", {"id": started.structured_content["id"]})
        if followed.structured_content["state"] != "running":
            assert followed.structured_content["state"] == "done", followed.structured_content
            return
        await anyio.sleep(0.2)
    raise AssertionError("the training job did not end")


def _text(result) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def test_labels_cannot_poison_a_correspondents_mail(gateway_home: Path) -> None:
    root = _world(gateway_home)

    async def play():
        async with serve_client(gateway_home) as client:
            await _train(client)
            model_file = folders_of(gateway_home).data / "plugins" / "spam" / "model.sqlite"
            trained = model_file.read_bytes()
            ada = [await client.call_tool("spam_label", {"address": f"mid:ada{n}@example.org", "label": "spam"})
                   for n in range(8)]
            news = [await client.call_tool("spam_label", {"address": f"mid:news{n}@firm.example.com",
                                                          "label": "spam"}) for n in range(6)]
            ordinary = await client.call_tool("spam_label", {"address": "mid:spam3@winner.example.net",
                                                             "label": "spam"})
            return trained, ada, news, ordinary

    trained, ada, news, ordinary = anyio.run(play)
    assert all(a.is_error and "someone the person has written to" in _text(a) for a in ada)
    assert all(n.is_error and "would move mail from someone the person has written to" in _text(n) for n in news)
    assert not ordinary.is_error, _text(ordinary)  # spam from no correspondent is labelled as before
    ada_next = _next_mail(root, ADA, ADA_WORDS, "", "ada-next@example.org")
    lawyer_next = _next_mail(root, LAWYER, LAW_WORDS, " " + FIRM, "lee-next@firm.example.com")
    for path in (ada_next, lawyer_next):
        verdict = _gateway(gateway_home, "spam", "classify", str(path))
        assert verdict.returncode == 1 and verdict.stdout.startswith("ham "), (path, verdict.stdout)
    labelled = json.loads("[" + ",".join((folders_of(gateway_home).data / "plugins" / "spam" / "labels.jsonl")
                                         .read_text().splitlines()) + "]")
    assert [(e["key"], e["client"], e["client_version"]) for e in labelled] == [
        ("mid:spam3@winner.example.net", "test-host", "1.0")]
    # The control: the same labels given without the guard (straight to the trained model) do poison it.
    model_file = folders_of(gateway_home).data / "plugins" / "spam" / "control.sqlite"
    model_file.write_bytes(trained)
    model = Model.load(model_file)
    for folder, prefix, count in (("INBOX", "ada", 8), ("INBOX", "news", 6)):
        for path in sorted((root / folder / "cur").iterdir()):
            raw = path.read_bytes()
            if f"<{prefix}".encode() in raw and f"<{prefix}-next".encode() not in raw and count > 0:
                model.relearn(tokens(stripped(raw)), "spam", corpus.key_of(raw))
                count -= 1
    assert model.score(tokens(stripped(ada_next.read_bytes()))).probability > 0.9
    assert model.score(tokens(stripped(lawyer_next.read_bytes()))).probability >= 0.2


def test_an_agents_labels_are_bounded_per_day_listed_by_client_and_undone(gateway_home: Path) -> None:
    root = _world(gateway_home, agent_labels_per_day=3)
    watched = _next_mail(root, "Dana Example <dana@example.com>", sample.SPAM_WORDS[:6] + sample.HAM_WORDS[:6], "",
                         "watched@example.com")

    async def play():
        async with serve_client(gateway_home, client_name="poisoner") as client:
            await _train(client)
            before = _gateway(gateway_home, "spam", "classify", str(watched)).stdout
            given = [await client.call_tool("spam_label", {"address": f"mid:spam{n}@winner.example.net",
                                                           "label": "ham"}) for n in range(4)]
            return before, given

    before, given = anyio.run(play)
    assert not any(g.is_error for g in given[:3]), [_text(g) for g in given]
    assert given[3].is_error and "agent_labels_per_day (3)" in _text(given[3])
    poisoned = _gateway(gateway_home, "spam", "classify", str(watched)).stdout
    assert poisoned != before
    # The person's own label, from the command line, is not an agent's: not bounded, recorded as cli.
    person = _gateway(gateway_home, "call", "spam_label", json.dumps({"address": "mid:spam9@winner.example.net",
                                                                       "label": "spam"}))
    assert person.returncode == 0, person.stdout + person.stderr
    listed = _gateway(gateway_home, "spam", "labels")
    assert listed.returncode == 0
    assert "poisoner (1.0): 3 labels (0 spam, 3 ham)" in listed.stdout and "cli: 1 label (1 spam, 0 ham)" in \
        listed.stdout
    undone = _gateway(gateway_home, "spam", "labels", "--undo-client", "poisoner")
    assert undone.returncode == 0, undone.stderr
    assert "Took away 3 labels given by poisoner" in undone.stdout
    assert _gateway(gateway_home, "spam", "classify", str(watched)).stdout == before
    listed = _gateway(gateway_home, "spam", "labels").stdout
    assert "poisoner" not in listed and "cli: 1 label " in listed
    unknown = _gateway(gateway_home, "spam", "labels", "--undo-client", "nobody")
    assert unknown.returncode != 0 and "no labels given by 'nobody'" in unknown.stderr
