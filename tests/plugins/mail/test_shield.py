"""The AI shield without a server: who is addressed, the command's bounds, a verdict kept once, the labels."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import gateway_mail
import pytest
from gateway_mail.mail import index, judge, sample, shield
from maildirs import shield as shared

from gateway import ToolError
from gateway.testing import folders_of, make_gateway
from tests.plugins.mail import shield_world
from tests.plugins.mail.shield_world import HOSTILE_CANARY, PRESS

COUNTING = f"""import sys
data = sys.stdin.buffer.read()
with open(sys.argv[1], "a") as log:
    log.write("judged\\n")
print("hostile" if b"{HOSTILE_CANARY}" in data else "ok")
"""


@pytest.fixture
def shielded(gateway_home: Path):
    root = gateway_home / "Mail" / "personal"
    ids = shield_world.world(root)
    runs = gateway_home / "runs.log"
    command = [*shield_world.write_judge(gateway_home / "bin", COUNTING, "counting.py"), str(runs)]

    def gateway(projects=(), **mail):
        mail.setdefault("shield_command", command)
        return make_gateway([gateway_mail], home=gateway_home, config=shield_world.config(root, **mail),
                            projects=list(projects))

    return root, ids, runs, gateway


def _index(home: Path) -> Path:
    return index.index_path(folders_of(home).cache / "plugins" / "mail")


def _judged(served, home: Path, query: str = "plumtree"):
    """search_mail after the server's judge has judged what waited."""
    served.call("search_mail", {"query": query})
    assert shield.settle(_index(home), 30)
    return served.call("search_mail", {"query": query})


def _shown(answer) -> set[str]:
    return {h["address"] for h in answer.data["hits"]}


def test_addressees_are_read_from_to_cc_delivered_to_and_x_original_to(tmp_path: Path) -> None:
    cases = {"to": {"To": PRESS}, "cc": {"To": "a@example.com", "Cc": f"Press <{PRESS.upper()}>"},
             "delivered": {"To": "a@example.com", "Delivered-To": PRESS},
             "original": {"To": "a@example.com", "X-Original-To": PRESS}, "none": {"To": "a@example.com"}}
    for name, headers in cases.items():
        path = tmp_path / name
        path.write_bytes(b"".join(f"{k}: {v}\n".encode() for k, v in headers.items()) + b"Subject: x\n\nText.\n")
        assert shared.is_addressed(shared.addressees_of(path), frozenset({PRESS})) == (name != "none"), name
    assert shared.addressees_of(tmp_path / "missing") is None
    assert shared.someone_at("Troll <troll@Troll.Example.NET>") == "someone at troll.example.net"
    assert shared.shielded_in({"shielded": ["Press <PRESS@example.org>"]}) == frozenset({PRESS})
    for wrong in ("press@example.org", ["not an address"], [1]):
        with pytest.raises(ToolError, match="shielded"):
            shared.shielded_in({"shielded": wrong})


def test_the_command_gives_a_verdict_or_says_why_not(tmp_path: Path) -> None:
    def run(source: str, timeout: float = 10, raw: bytes = b"Subject: hi\n\nplain words\n") -> judge.Judgement:
        return judge.run_command((sys.executable, "-c", source), raw, timeout)

    assert run("import sys; sys.stdin.read(); print('HOSTILE')").verdict == shield.HOSTILE
    assert run("print('ok, nothing wrong')").verdict == shield.OK
    assert run("import sys; sys.exit(3)").reason.endswith("exited with status 3")
    assert "neither hostile nor ok" in run("print('maybe')").reason
    # A flood of output is read up to its bound; the rest is never held.
    flooded = run("import sys\nfor _ in range(100000): sys.stdout.write('x' * 1000)\n")
    assert flooded.verdict == shield.UNJUDGED
    # A judge that reads nothing of a large message does not stall the writer.
    assert run("print('ok')", raw=b"Subject: big\n\n" + b"y" * (4 * 1024 * 1024)).verdict == shield.OK
    hung = run("import time; time.sleep(60)", timeout=1)
    assert hung.verdict == shield.UNJUDGED and hung.reason.endswith("did not answer within 1 s")
    missing = judge.run_command((str(tmp_path / "no-such-judge"),), b"", 5)
    assert missing.verdict == shield.UNJUDGED and "could not be started" in missing.reason


def test_a_message_is_judged_once_and_again_when_its_file_changes(shielded, gateway_home: Path) -> None:
    root, ids, runs, gateway = shielded
    served = gateway()
    first = _judged(served, gateway_home)
    assert runs.read_text().count("judged") == 3  # hostile, blind (Delivered-To), kind: never the private one
    assert _shown(first) == {"mid:kind@example.net", "mid:private@example.net"}
    assert first.data["shielded"] == 2
    again = _judged(served, gateway_home)
    assert runs.read_text().count("judged") == 3 and _shown(again) == _shown(first)
    # The kind message's file rewritten with hostile words: judged again, now kept.
    kind = None
    for path in (root / "INBOX" / "cur").iterdir():
        if b"kind@example.net" in path.read_bytes():
            kind = path
    assert kind is not None
    # Written anew and renamed over it, as a program changing a Maildir file does (its folder's time changes).
    (kind.parent.parent / "tmp" / kind.name).write_bytes(
        kind.read_bytes().replace(b"lovely article", f"lovely {HOSTILE_CANARY}".encode()))
    (kind.parent.parent / "tmp" / kind.name).rename(kind)
    changed = _judged(served, gateway_home)
    assert runs.read_text().count("judged") == 4
    assert _shown(changed) == {"mid:private@example.net"} and changed.data["shielded"] == 3
    refused = served.call("draft_reply", {"address": "mid:kind@example.net", "body": "Thanks"})
    assert refused.is_error and "neither read nor answered" in refused.text
    assert HOSTILE_CANARY not in refused.text


def test_a_move_keeps_its_verdict_and_the_persons_label_wins(shielded, gateway_home: Path) -> None:
    root, ids, runs, gateway = shielded
    served = gateway()
    _judged(served, gateway_home)
    assert runs.read_text().count("judged") == 3
    # Moved to Archive by the person's mail program: the same message, the same verdict, no judge run.
    archive = sample.make_folder(root / "Archive")
    for path in (root / "INBOX" / "cur").iterdir():
        if b"kind@example.net" in path.read_bytes():
            path.rename(archive / "cur" / path.name)
    moved = _judged(served, gateway_home)
    assert runs.read_text().count("judged") == 3 and "mid:kind@example.net" in _shown(moved)
    # The person says the judge was wrong: their label is the verdict, whatever the command says.
    connection = index.connect(_index(gateway_home))
    try:
        raw = next((archive / "cur").iterdir()).read_bytes()
        judge.learn(folders_of(gateway_home).data / "plugins" / "mail", "kind@example.net", shield.HOSTILE,
                    lambda _message_id: [raw])
        assert shield.label(connection, "kind@example.net", shield.HOSTILE) == 1
    finally:
        connection.close()
    labelled = _judged(served, gateway_home)
    assert "mid:kind@example.net" not in _shown(labelled) and labelled.data["shielded"] == 3


def test_the_gate_refuses_first_in_its_own_words(shielded, gateway_home: Path) -> None:
    _root, ids, _runs, gateway = shielded
    served = gateway(projects=[{"id": "trolls", "name": "Trolls", "ai": False, "senders": ["@troll.example.net"]}])
    found = _judged(served, gateway_home)
    assert found.data["left_out"] == 2 and found.data["shielded"] == 0  # counted once, as the gate's
    refused = served.call("read_message", {"address": f"mid:{ids['hostile']}"})
    assert refused.is_error and "closed to AI agents" in refused.text and "shield" not in refused.text


def test_with_no_shielded_address_nothing_is_read_or_run(shielded, gateway_home: Path) -> None:
    _root, _ids, runs, gateway = shielded
    served = gateway(shielded=[])
    found = served.call("search_mail", {"query": "plumtree"})
    assert len(found.data["hits"]) == 4 and "shielded" not in found.data
    time.sleep(0.2)
    assert not runs.exists()
    connection = index.connect(_index(gateway_home))
    try:
        assert connection.execute("SELECT count(*) FROM shield").fetchone()[0] == 0
    finally:
        connection.close()


def test_a_new_shielded_address_is_judged_without_reading_every_header_again(shielded, gateway_home: Path) -> None:
    _root, _ids, runs, gateway = shielded
    _judged(gateway(), gateway_home)
    assert runs.read_text().count("judged") == 3
    both = _judged(gateway(shielded=[PRESS, "pat@example.org"]), gateway_home)
    assert runs.read_text().count("judged") == 4  # the private message, now to a shielded address
    assert _shown(both) == {"mid:kind@example.net", "mid:private@example.net"}


def test_with_no_command_and_no_labels_mail_to_a_shielded_address_waits_kept(shielded, gateway_home: Path) -> None:
    _root, ids, _runs, gateway = shielded
    served = gateway(shield_command=[])
    found = served.call("search_mail", {"query": "plumtree"})
    assert _shown(found) == {"mid:private@example.net"} and found.data["shielded"] == 3
    connection = index.connect(_index(gateway_home))
    try:
        count, said = shield.doctor_lines(connection, shield.shield_of({"shielded": [PRESS]}, Path("/nowhere")))
    finally:
        connection.close()
    assert count == 3 and "has labelled no mail yet" in said and f"mid:{ids['hostile']}" in said


def test_gateway_mail_index_judges_what_waits_and_says_so(shielded, gateway_home: Path) -> None:
    from click.testing import CliRunner

    from gateway.commands.cli import main

    _root, ids, runs, gateway = shielded
    gateway()  # writes the config
    said = CliRunner().invoke(main, ["mail", "index"], catch_exceptions=False)
    assert said.exit_code == 0, said.output
    assert "AI shield: 3 messages to a shielded address: 2 hostile, 1 judged ok, 0 not judged" in said.output
    assert runs.read_text().count("judged") == 3
    unknown = CliRunner().invoke(main, ["mail", "hostile", "mid:nobody@example.net"])
    assert unknown.exit_code != 0 and "no message mid:nobody@example.net in the mail index" in unknown.output
    kind = CliRunner().invoke(main, ["mail", "hostile", "<kind@example.net>"], catch_exceptions=False)
    assert kind.exit_code == 0 and "labelled hostile: kept from agents" in kind.output
    assert "1 hostile message and 0 messages not hostile" in kind.output
    found = gateway().call("search_mail", {"query": "plumtree"})
    assert _shown(found) == {"mid:private@example.net"} and found.data["shielded"] == 3


def test_a_reused_message_id_never_takes_an_earlier_verdict(shielded, gateway_home: Path) -> None:
    """The troll's first mail is kind and judged ok; their next reuses its Message-ID, padded to the same size, with
    hostile words: it is judged on its own bytes, and kept."""
    root, _ids, runs, gateway = shielded
    served = gateway()
    _judged(served, gateway_home)
    kind = next(p for p in (root / "INBOX" / "cur").iterdir() if b"<kind@example.net>" in p.read_bytes())
    original = kind.read_bytes()
    forged = original.replace(b"a lovely article about the orchard", HOSTILE_CANARY.encode())
    forged += b" " * (len(original) - len(forged))
    assert len(forged) == len(original) and forged != original
    sample.deliver(root / "INBOX", forged)
    found = _judged(served, gateway_home)
    assert runs.read_text().count("judged") == 4
    assert found.data["shielded"] == 3  # the forged copy is kept: one Message-ID, one copy kept, one given
    refused = served.call("read_message", {"address": "mid:kind@example.net"})
    assert refused.is_error and "neither read nor answered" in refused.text


def test_doctor_says_a_judge_that_is_not_there_and_what_waits(shielded, gateway_home: Path) -> None:
    from click.testing import CliRunner

    from gateway.commands.cli import main

    _root, ids, _runs, gateway = shielded
    served = gateway(shield_command=[str(gateway_home / "bin" / "no-such-judge")])
    served.call("search_mail", {"query": "plumtree"})
    assert shield.settle(_index(gateway_home), 30)
    doctor = CliRunner().invoke(main, ["doctor"], catch_exceptions=False)
    assert doctor.exit_code == 1, doctor.output
    assert "[plugins.mail] shield_command" in doctor.output and "no-such-judge" in doctor.output
    assert "3 messages to a shielded address not judged yet" in doctor.output
    assert "could not be started" in doctor.output and f"mid:{ids['hostile']}" in doctor.output


def test_gateway_watch_judges_ahead_of_any_call(shielded, gateway_home: Path) -> None:
    from gateway_mail.freshness import refresh

    from gateway.engine.core import Caller

    _root, _ids, runs, gateway = shielded
    served = gateway()
    refresh().run(served.context("mail", served.snapshot(), Caller("gateway watch", transport="cli")))
    assert runs.read_text().count("judged") == 3  # waited for, in the refresh itself
    found = served.call("search_mail", {"query": "plumtree"})  # and no call judged again
    assert runs.read_text().count("judged") == 3
    assert _shown(found) == {"mid:kind@example.net", "mid:private@example.net"} and found.data["shielded"] == 2


def test_access_why_says_the_shield_keeps_a_message_whatever_the_routes(shielded, gateway_home: Path) -> None:
    from click.testing import CliRunner

    from gateway.commands.cli import main

    root, ids, _runs, gateway = shielded
    served = gateway()  # writes the config: the judge command, the press address shielded
    _judged(served, gateway_home)

    def why(address: str) -> str:
        return CliRunner().invoke(main, ["access", "why", address], catch_exceptions=False).output

    hostile = why(f"mid:{ids['hostile']}")
    assert "kept from agents by the mail plugin itself, whatever the routes: the AI shield judged it hostile" in hostile
    assert "open to agents" not in hostile
    kind = why(f"mid:{ids['kind']}")
    assert "kept from agents" not in kind and "open to agents" in kind
    sample.deliver(root / "INBOX", sample.message(message_id="fresh@example.net", to=f"Press <{shield_world.PRESS}>",
                                                   subject="New", body="plumtree"))
    waiting = gateway(shield_command=[])  # no judge now: new mail to the press address waits, kept
    waiting.call("search_mail", {"query": "plumtree"})
    assert "the AI shield has not judged it yet" in why("mid:fresh@example.net")


def test_the_shield_kept_for_a_configuration_is_the_shield_its_settings_make() -> None:
    """shield_of keeps the shield of the settings' values last seen: the same values give it again; any new value
    (another list, another command, another folder) gives what the settings make, and wrong settings are refused
    on every call."""
    shielded, command = [PRESS], ["/usr/bin/judge", "--strict"]
    settings = {"shielded": shielded, "shield_command": command}
    first = shield.shield_of(dict(settings), Path("/nowhere"))
    assert first == shield._shield_of(settings, Path("/nowhere"))
    assert shield.shield_of(dict(settings), Path("/nowhere")) is first  # each call's own copy of the same values
    for changed, folder in (({**settings, "shielded": ["other@example.org"]}, "/nowhere"),
                            ({**settings, "shield_command": []}, "/nowhere"),
                            ({**settings, "shield_timeout": 2.5}, "/nowhere"),
                            ({}, "/nowhere"),
                            (settings, "/elsewhere")):
        assert shield.shield_of(changed, Path(folder)) == shield._shield_of(changed, Path(folder))
        assert shield.shield_of(dict(settings), Path("/nowhere")) == first
    for _ in range(2):
        with pytest.raises(ToolError, match="shielded"):
            shield.shield_of({"shielded": "press@example.org"}, Path("/nowhere"))
