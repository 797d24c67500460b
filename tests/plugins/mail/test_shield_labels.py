"""The labels' model follows the tokenizer's version: counted again from the person's labels when the version it
was counted with is not today's, a label taken back exactly, a labelled message that is gone standing and said."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

import gateway_mail
import pytest
from click.testing import CliRunner
from gateway_mail.mail import index, judge, sample, shield
from spamfilter import store
from spamfilter import tokens as tokenizer

from gateway.commands.cli import main
from gateway.testing import folders_of, make_gateway
from tests.plugins.mail import shield_world
from tests.plugins.mail.shield_world import HOSTILE_CANARY, HOSTILE_WORDS, KIND_WORDS, PRESS

OLD_ONLY = "oldtokenizeronly"  # a token only the forged earlier tokenizer gives
REAL_TOKENS = judge.tokens_of


def _raw(message_id: str, words: str, html: str | None = None) -> bytes:
    return sample.message(message_id=message_id, sender="Someone <someone@example.net>", to=PRESS,
                          subject="About the orchard", body=words, html=html, date=1_700_000_000).as_bytes()


MAIL = {
    "troll@example.net": _raw("troll@example.net", f"{HOSTILE_WORDS} {HOSTILE_CANARY}",
                              html=f"<p><b>{HOSTILE_WORDS}</b> <a href='https://troll.example.net/x'>here</a></p>"),
    "troll2@example.net": _raw("troll2@example.net", f"{HOSTILE_WORDS}, again"),
    "kind@example.net": _raw("kind@example.net", KIND_WORDS, html=f"<div>{KIND_WORDS}</div>"),
    "kind2@example.net": _raw("kind2@example.net", f"{KIND_WORDS}, and the pears"),
}
LABELS = [("troll@example.net", shield.HOSTILE), ("troll2@example.net", shield.HOSTILE),
          ("kind@example.net", shield.OK), ("kind2@example.net", shield.OK)]
PROBES = [_raw("probe1@example.net", f"vile scum, {HOSTILE_CANARY}"), _raw("probe2@example.net", "a lovely orchard"),
          _raw("probe3@example.net", "nothing either way", html="<p>regret the <i>interview</i></p>")]


def _copies(mail: dict[str, bytes]) -> judge.Copies:
    return lambda message_id: [mail[message_id]] if message_id in mail else []


def _old_tokens(raw: bytes) -> set[str] | None:
    """An earlier tokenizer, as far as the model can tell: some tokens of today's, and one of its own."""
    found = REAL_TOKENS(raw)
    return None if found is None else {t for t in found if len(t) % 3} | {OLD_ONLY, f"{OLD_ONLY}:{len(raw)}"}


def _model(data: Path) -> tuple:
    table = store.Table(judge.model_path(data))
    try:
        counts, trained = table.everything()
        return counts, trained, table.sources(), table.spam, table.ham, table.tokens_version
    finally:
        table.close()


def _learn_all(data: Path, labels: Iterable[tuple[str, str]], mail: dict[str, bytes] = MAIL) -> judge.Learnt:
    learnt = None
    for message_id, verdict in labels:
        learnt = judge.learn(data, message_id, verdict, _copies(mail))
    assert learnt is not None
    return learnt


def _verdicts(data: Path) -> list[str]:
    with judge.Labels(data) as labels:
        assert not labels.problem, labels.problem
        return [labels.judge(raw).verdict for raw in PROBES + list(MAIL.values())]


@pytest.mark.parametrize("forged", ["version 1", "before versions"])
def test_a_model_counted_with_an_earlier_tokenizer_is_counted_again_and_judges_as_a_fresh_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forged: str) -> None:
    old, fresh = tmp_path / "old", tmp_path / "fresh"
    with monkeypatch.context() as earlier:
        earlier.setattr(tokenizer, "VERSION", 1)
        earlier.setattr(judge, "tokens_of", _old_tokens)
        _learn_all(old, LABELS)
    if forged == "before versions":  # the file as the model wrote it before it recorded versions and sources
        counts, trained, _sources, spam, ham, _version = _model(old)
        store.write(judge.model_path(old), spam, ham, counts, trained)
    counts, _trained, sources, _spam, _ham, version = _model(old)
    assert version == (1 if forged == "version 1" else None) and OLD_ONLY in counts
    assert bool(sources) == (forged == "version 1")
    with judge.Labels(old) as labels:  # it judges nothing until counted again: its counts are of other tokens
        assert labels.stale and "counted again" in labels.problem
        assert labels.judge(PROBES[0]).verdict == shield.UNJUDGED

    learnt = judge.relearn(old, _copies(MAIL))
    _learn_all(fresh, LABELS)
    assert learnt == judge.Learnt(hostile=2, ok=2, recounted=4, uncounted=())
    assert _model(old) == _model(fresh)
    assert not any(token.startswith(OLD_ONLY) for token in _model(old)[0])
    assert _verdicts(old) == _verdicts(fresh)
    assert judge.relearn(old, _copies(MAIL)) is None  # nothing left to do: the file is not written again


def test_a_label_changed_back_and_forth_leaves_the_counts_of_one_label(tmp_path: Path) -> None:
    flipped, once = tmp_path / "flipped", tmp_path / "once"
    _learn_all(flipped, [("kind2@example.net", shield.OK)])
    for verdict in (shield.HOSTILE, shield.OK, shield.HOSTILE):
        learnt = judge.learn(flipped, "kind@example.net", verdict, _copies(MAIL))
    _learn_all(once, [("kind2@example.net", shield.OK), ("kind@example.net", shield.HOSTILE)])
    assert (learnt.hostile, learnt.ok, learnt.recounted) == (1, 1, 0)
    assert _model(flipped) == _model(once)
    # The same label again changes nothing, and the file is left as it is.
    before = judge.model_path(flipped).stat().st_mtime_ns
    assert judge.learn(flipped, "kind@example.net", shield.HOSTILE, _copies(MAIL)).hostile == 1
    assert judge.model_path(flipped).stat().st_mtime_ns == before


def test_a_label_changed_after_a_tokenizer_change_leaves_no_stale_counts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    changed, fresh = tmp_path / "changed", tmp_path / "fresh"
    with monkeypatch.context() as earlier:
        earlier.setattr(tokenizer, "VERSION", 1)
        earlier.setattr(judge, "tokens_of", _old_tokens)
        _learn_all(changed, LABELS)
    learnt = judge.learn(changed, "troll@example.net", shield.OK, _copies(MAIL))
    relabelled = [(m, shield.OK if m == "troll@example.net" else v) for m, v in LABELS]
    _learn_all(fresh, relabelled)
    assert (learnt.hostile, learnt.ok, learnt.recounted) == (1, 3, 4)
    assert _model(changed) == _model(fresh)
    assert not any(token.startswith(OLD_ONLY) for token in _model(changed)[0])


def test_a_label_of_a_message_whose_bytes_changed_takes_out_what_the_first_bytes_added(tmp_path: Path) -> None:
    """The person labels a message, their mail program rewrites its file (other bytes, the same Message-ID), they
    label it again the other way: the tokens of the first bytes are taken out, not those of the new ones."""
    rewritten = dict(MAIL, **{"kind@example.net": MAIL["kind@example.net"].replace(b"orchard", b"meadow")})
    changed, fresh = tmp_path / "changed", tmp_path / "fresh"
    _learn_all(changed, LABELS)
    learnt = judge.learn(changed, "kind@example.net", shield.HOSTILE, _copies(rewritten))
    relabelled = [(m, shield.HOSTILE if m == "kind@example.net" else v) for m, v in LABELS]
    _learn_all(fresh, relabelled, rewritten)
    assert (learnt.hostile, learnt.ok) == (3, 1) and learnt.recounted == 4
    assert _model(changed) == _model(fresh)


def test_another_message_under_a_labelled_message_id_is_never_counted_under_its_label(tmp_path: Path) -> None:
    """The kind message the person labelled is gone; a troll's mail reuses its Message-ID. Counted again for a new
    tokenizer, the model does not take the troll's words as not hostile: the label stands, uncounted."""
    data = tmp_path / "data"
    _learn_all(data, LABELS)
    forged = dict(MAIL, **{"kind@example.net": _raw("kind@example.net", f"{HOSTILE_WORDS} {HOSTILE_CANARY}")})
    counts, trained, sources, spam, ham, _version = _model(data)
    store.write(judge.model_path(data), spam, ham, counts, trained, tokens_version=1, sources=sources)
    learnt = judge.relearn(data, _copies(forged))
    assert learnt is not None and learnt.uncounted == ("kind@example.net",) and (learnt.hostile, learnt.ok) == (2, 1)
    assert _model(data)[1]["mid:kind@example.net"] == "ham"  # the label stands
    alone = tmp_path / "alone"
    _learn_all(alone, [label for label in LABELS if label[0] != "kind@example.net"])
    assert _model(data)[0] == _model(alone)[0]
    with judge.Labels(data) as labels:  # the forged copy is not the labelled message: the label is not its verdict
        assert labels.person("kind@example.net", forged["kind@example.net"]) is None
        assert labels.person("kind@example.net", MAIL["kind@example.net"]) == judge.Judgement(shield.OK, "person")


def test_a_labelled_message_gone_from_the_maildir_keeps_its_label_and_is_said(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    ids = shield_world.world(root)
    make_gateway([gateway_mail], home=gateway_home, config=shield_world.config(root, shield_command=[]))
    for command in (["mail", "hostile", f"mid:{ids['hostile']}"], ["mail", "hostile", f"mid:{ids['blind']}"],
                    ["mail", "not-hostile", f"mid:{ids['kind']}"]):
        said = CliRunner().invoke(main, command, catch_exceptions=False)
        assert said.exit_code == 0, said.output
    data = folders_of(gateway_home).data / "plugins" / "mail"
    labelled = {m: p for p in (root / "INBOX" / "cur").iterdir() for m in ids.values()
                if f"<{m}>".encode() in p.read_bytes()}
    kept = labelled[ids["hostile"]].read_bytes()
    labelled[ids["hostile"]].unlink()
    counts, trained, sources, spam, ham, _version = _model(data)  # a new tokenizer since these labels
    store.write(judge.model_path(data), spam, ham, counts, trained, tokens_version=1, sources=sources)

    indexed = CliRunner().invoke(main, ["mail", "index"], catch_exceptions=False)
    assert indexed.exit_code == 0, indexed.output
    assert (f"1 labelled message cannot be found in the mail index as labelled (mid:{ids['hostile']}): each label "
            "stands") in indexed.output
    assert "AI shield: 2 messages to a shielded address: 1 hostile, 1 judged ok, 0 not judged" in indexed.output
    counts, trained, sources, spam, ham, version = _model(data)
    assert (spam, ham, version) == (1, 1, tokenizer.VERSION) and trained[f"mid:{ids['hostile']}"] == "spam"
    assert sources[f"mid:{ids['hostile']}"][1] is False
    doctor = CliRunner().invoke(main, ["doctor"], catch_exceptions=False)
    assert f"1 labelled message cannot be found in the mail index as labelled (mid:{ids['hostile']})" in doctor.output
    # Labelling another message says it too (after another change of the tokenizer, counting the model again).
    store.write(judge.model_path(data), spam, ham, counts, trained, tokens_version=1, sources=sources)
    private = CliRunner().invoke(main, ["mail", "not-hostile", f"mid:{ids['private']}"], catch_exceptions=False)
    assert "The model was counted again from the person's 3 labels, for the spam filter's current tokenizer" in (
        private.output)
    assert f"(mid:{ids['hostile']})" in private.output and "gateway doctor says them too" in private.output
    assert _model(data)[3:] == (1, 2, tokenizer.VERSION)

    # It comes back (restored from a backup, into another folder): the person's label is its verdict, no judge's.
    sample.deliver(sample.make_folder(root / "Restored"), kept)
    again = CliRunner().invoke(main, ["mail", "index"], catch_exceptions=False)
    assert again.exit_code == 0 and "cannot be found" not in again.output
    connection = sqlite3.connect(index.index_path(folders_of(gateway_home).cache / "plugins" / "mail"))
    try:
        rows = connection.execute("SELECT folder, verdict, judge FROM shield WHERE message_id = ?",
                                  (ids["hostile"],)).fetchall()
    finally:
        connection.close()
    assert rows == [("Restored", shield.HOSTILE, "person")]
    assert _model(data)[2][f"mid:{ids['hostile']}"][1] is True and _model(data)[3] == 2


def test_the_spam_plugins_model_files_are_written_and_read_as_before(tmp_path: Path) -> None:
    """The store is shared with the spam plugin: what the labels' model adds is written only when given."""
    plain, recorded = tmp_path / "model.sqlite", tmp_path / "shield.sqlite"
    store.write(plain, 1, 1, {"lottery": [1, 0], "garden": [0, 1]}, {"file:a": "spam", "file:b": "ham"})
    store.write(recorded, 1, 1, {"lottery": [1, 0], "garden": [0, 1]}, {"mid:a": "spam", "mid:b": "ham"},
                tokens_version=tokenizer.VERSION, sources={"mid:a": ("d1", True), "mid:b": ("d2", False)})
    connection = sqlite3.connect(plain)
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        keys = {row[0] for row in connection.execute("SELECT key FROM meta")}
    finally:
        connection.close()
    assert tables == {"meta", "tokens", "trained"} and keys == {"format", "spam", "ham", "trained_at"}
    for path in (plain, recorded):
        table = store.Table(path)
        try:
            assert (table.spam, table.ham) == (1, 1)
            assert sorted(table.counts(["lottery", "garden", "other"])) == [("garden", 0, 1), ("lottery", 1, 0)]
        finally:
            table.close()
    plain_table, recorded_table = store.Table(plain), store.Table(recorded)
    try:
        assert (plain_table.tokens_version, plain_table.sources(), plain_table.label_of("file:a")) == (
            None, {}, ("spam", ""))
        assert recorded_table.tokens_version == tokenizer.VERSION
        assert recorded_table.sources(uncounted_only=True) == {"mid:b": ("d2", False)}
        assert recorded_table.label_of("mid:a") == ("spam", "d1") and recorded_table.label_of("mid:c") is None
    finally:
        plain_table.close()
        recorded_table.close()


COUNTING_JUDGE = f"""import sys
data = sys.stdin.buffer.read()
with open(sys.argv[1], "a") as log:
    log.write("judged\\n")
print("hostile" if b"{HOSTILE_CANARY}" in data else "ok")
"""


def test_a_labelled_message_back_is_judged_by_its_label_not_by_the_command(gateway_home: Path) -> None:
    """The person labelled the kind message hostile; its file went away and came back (the index's verdict of it
    gone meanwhile): the server's judge gives it the person's label, and the command is not run for it."""
    root = gateway_home / "Mail" / "personal"
    ids = shield_world.world(root)
    runs = gateway_home / "runs.log"
    command = [*shield_world.write_judge(gateway_home / "bin", COUNTING_JUDGE, "counting.py"), str(runs)]
    served = make_gateway([gateway_mail], home=gateway_home, config=shield_world.config(root, shield_command=command))
    for args in (["mail", "index"], ["mail", "hostile", f"mid:{ids['kind']}"]):
        said = CliRunner().invoke(main, args, catch_exceptions=False)
        assert said.exit_code == 0, said.output
    assert runs.read_text().count("judged") == 3
    kind = next(p for p in (root / "INBOX" / "cur").iterdir() if f"<{ids['kind']}>".encode() in p.read_bytes())
    kept = kind.read_bytes()
    kind.unlink()
    assert CliRunner().invoke(main, ["mail", "index"], catch_exceptions=False).exit_code == 0
    sample.deliver(sample.make_folder(root / "Restored"), kept)
    path = index.index_path(folders_of(gateway_home).cache / "plugins" / "mail")
    served.call("search_mail", {"query": "plumtree"})
    assert shield.settle(path, 30)
    found = served.call("search_mail", {"query": "plumtree"})
    assert runs.read_text().count("judged") == 3  # no judge run for it
    assert f"mid:{ids['kind']}" not in {h["address"] for h in found.data["hits"]} and found.data["shielded"] == 3
    connection = sqlite3.connect(path)
    try:
        assert connection.execute("SELECT folder, verdict, judge FROM shield WHERE message_id = ?",
                                  (ids["kind"],)).fetchall() == [("Restored", shield.HOSTILE, "person")]
    finally:
        connection.close()
