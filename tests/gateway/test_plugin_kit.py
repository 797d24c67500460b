"""The helpers every plugin wrote for itself, now in the core: the "left out" sentence and the per-gate memo."""

from __future__ import annotations

import threading

from gateway import Gate, GateMemo, Project, left_out_sentence
from gateway.gate.access import Manifest


def test_the_left_out_sentence_counts_and_never_names():
    assert left_out_sentence(0, "session") == ""
    assert left_out_sentence(1, "session") == "1 session left out: their projects are closed to AI agents."
    assert left_out_sentence(3, "event") == "3 events left out: their projects are closed to AI agents."
    assert left_out_sentence(2, "entry", "entries").startswith("2 entries left out")


def _gate(ai: bool) -> Gate:
    return Gate(Manifest((Project(id="p", name="P", ai=ai, paths=("/srv/p",)),)), outside_projects=True)


def test_a_memo_is_kept_per_equal_gate_and_made_anew_for_another():
    made = []
    memo = GateMemo(lambda: made.append(1) or {})
    first = memo.of(_gate(False))
    first["x"] = 1
    assert memo.of(_gate(False)) is first  # an equal gate (same manifest) built again: the same memo
    assert memo.of(_gate(True)) is not first
    assert memo.of(_gate(False), key="store-2") is not first
    assert len(made) == 3


def test_a_computed_value_is_computed_once_per_gate():
    calls = []
    memo: GateMemo[int] = GateMemo()
    assert memo.get(_gate(False), lambda: calls.append(1) or 7) == 7
    assert memo.get(_gate(False), lambda: calls.append(1) or 8) == 7
    assert len(calls) == 1


def test_only_the_last_gates_are_kept():
    memo = GateMemo(dict, gates=2)
    old = memo.of(_gate(False), key=1)
    memo.of(_gate(False), key=2)
    memo.of(_gate(False), key=3)
    assert memo.of(_gate(False), key=1) is not old


def test_an_unhashable_gate_gets_a_fresh_value_each_time():
    memo = GateMemo(dict)
    assert memo.of(["not", "hashable"]) is not memo.of(["not", "hashable"])


def test_threads_share_one_value():
    memo = GateMemo(dict)
    gate = _gate(False)
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(id(memo.of(gate)))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(seen)) == 1
