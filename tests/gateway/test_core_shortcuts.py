"""Each shortcut a call takes through the core gives what the long way gives: the audit line's time, its encoding and
an argument's kept summary; an answer's mark; the timer signal's handler; the tool's Context made once with its
deadline. Each test compares the shortcut with the long way, and fails when they differ."""

from __future__ import annotations

import json
import os
import re
import string
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway import Answer, Tool
from gateway.api.refresh import Refresh, Refreshed
from gateway.engine import audit
from gateway.engine.audit import ARGUMENT_LIMIT, KEPT_LENGTH, AuditLog, summarise_arguments
from gateway.privacy import framing
from gateway.privacy.framing import one_line
from gateway.privacy.masks import mask_typed
from gateway.testing import inline_plugin, make_gateway
from tests.gateway.test_masks import CHUNKS
from tests.gateway.test_refresh_asked_once import contexts_counted

# --- an argument's summary, kept by its digest ----------------------------------------------------------------

pieces = st.one_of(st.sampled_from(CHUNKS), st.text(max_size=8), st.integers(0, 10**20).map(str),
                   st.sampled_from(["\n", "\r", "4111 1111 1111 1111", "FR76 3000 6000 0112 3456 7890 189"]))
typed = st.lists(pieces, max_size=12).map("".join)


def long_way(value: str) -> object:
    """What the log keeps of a string argument, worked out afresh (the rule `summarise_arguments` documents)."""
    if len(value) > ARGUMENT_LIMIT or "\n" in value or "\r" in value:
        return {"start": one_line(mask_typed(value), ARGUMENT_LIMIT), "length": len(value)}
    return mask_typed(value)


@settings(max_examples=300, deadline=None)
@given(st.lists(typed, min_size=1, max_size=4))
def test_a_kept_summary_is_the_one_made_afresh(values: list[str]) -> None:
    arguments = {f"a{number}": value for number, value in enumerate(values)}
    expected = {key: long_way(value) for key, value in arguments.items()}
    assert summarise_arguments(arguments) == expected  # kept now, or already
    assert summarise_arguments(arguments) == expected  # from what was kept
    audit._kept.clear()
    assert summarise_arguments(arguments) == expected  # forgotten: made afresh again


def test_a_summary_kept_for_one_string_is_never_given_for_another() -> None:
    audit._kept.clear()
    assert summarise_arguments({"query": "my code is 482913"})["query"] != "my code is 482913"
    assert summarise_arguments({"query": "my code is 482914"}) == {"query": mask_typed("my code is 482914")}
    assert summarise_arguments({"query": "Ada"}) == {"query": "Ada"}


def test_the_kept_summaries_hold_no_argument_as_it_was_typed() -> None:
    audit._kept.clear()
    secret = "482913"
    summarise_arguments({"query": f"my code is {secret}", "name": "Ada Lovelace", "id": secret})
    assert audit._kept and all(len(key) == 16 and isinstance(key, bytes) for key in audit._kept)
    assert not any(secret in value for value in audit._kept.values())
    assert "Ada Lovelace" not in audit._kept.values() or mask_typed("Ada Lovelace") == "Ada Lovelace"


def test_long_strings_are_summarised_afresh_and_the_kept_ones_stay_bounded() -> None:
    audit._kept.clear()
    long = "x" * (KEPT_LENGTH + 1)
    assert summarise_arguments({"query": long}) == {"query": long_way(long)}
    assert not audit._kept
    for number in range(audit.KEPT_SUMMARIES + 10):
        summarise_arguments({"query": f"q{number}"})
    assert len(audit._kept) <= audit.KEPT_SUMMARIES


# --- the line's time ------------------------------------------------------------------------------------------

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def isoformat_way(now_ns: int) -> tuple[str, str]:
    moment = EPOCH + timedelta(microseconds=now_ns // 1000)  # datetime.now keeps microseconds, rounded down
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"), f"{moment:%Y-%m}"


@settings(max_examples=600, deadline=None)
@given(st.integers(0, 4_102_444_800 * 10**9 - 1))  # until 2100
def test_the_lines_time_is_what_isoformat_writes(now_ns: int) -> None:
    assert audit._moment(now_ns) == isoformat_way(now_ns)


@pytest.mark.parametrize("now_ns", [
    1_764_633_599_999_999_999,  # the last nanosecond of November 2025 (UTC): its month, then the next
    1_764_633_600_000_000_000,
    1_798_761_599_999_000_000,  # a new year's eve
    1_798_761_600_000_999_999,
    951_782_400_000_000_000,  # 2000-02-29
])
def test_the_lines_time_at_a_month_and_a_second_turning(now_ns: int) -> None:
    for step in (-1, 0, 1, 10**6, 10**9):  # the second kept must never answer for another second
        assert audit._moment(now_ns + step) == isoformat_way(now_ns + step)


def test_a_written_line_carries_the_time_and_month_of_its_writing(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit")
    before = datetime.now(UTC)
    log.write({"tool": "t"})
    after = datetime.now(UTC)
    (path,) = (tmp_path / "audit").glob("*.jsonl")
    written = json.loads(path.read_bytes())["time"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", written)
    assert before.isoformat(timespec="milliseconds")[:23] <= written[:23] <= after.isoformat()[:23]
    assert path.stem in (f"{before:%Y-%m}", f"{after:%Y-%m}")


# --- the line's encoding --------------------------------------------------------------------------------------

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(allow_nan=True),
              st.text(max_size=10), st.builds(Path, st.text(string.ascii_letters, max_size=6))),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=8), json_values, max_size=6))
def test_the_line_encoder_writes_what_json_dumps_writes(record: dict) -> None:
    assert audit._encode_line(record) == json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str)


# --- a log renamed away under its writer ----------------------------------------------------------------------


def test_a_log_renamed_away_or_replaced_by_rename_is_noticed_on_the_next_line(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit")
    log.write({"tool": "first"})
    (path,) = (tmp_path / "audit").glob("*.jsonl")
    path.rename(path.with_name("kept-aside.jsonl.old"))
    log.write({"tool": "second"})  # a new file at the path, not the one renamed away
    assert [json.loads(line)["tool"] for line in path.read_bytes().splitlines()] == ["second"]
    other = path.with_name("other.tmp")
    other.write_bytes(b'{"tool":"by hand","prev":""}\n')
    os.replace(other, path)  # another file renamed over the log
    log.write({"tool": "third"})
    lines = path.read_bytes().splitlines()
    assert [json.loads(line)["tool"] for line in lines] == ["by hand", "third"]
    assert json.loads(lines[1])["prev"] == audit._hash(lines[0])


# --- marks ----------------------------------------------------------------------------------------------------


def test_marks_are_sixteen_hex_digits_and_never_given_twice() -> None:
    marks = [framing.new_mark() for _ in range(3 * framing.MARKS_AHEAD + 7)]
    assert all(re.fullmatch(r"[0-9a-f]{16}", mark) for mark in marks)
    assert len(set(marks)) == len(marks)


def test_a_forked_child_gives_none_of_the_marks_its_parent_drew() -> None:
    framing.new_mark()  # the parent has marks drawn ahead now
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child's part)
        try:
            os.write(writing, " ".join(framing.new_mark() for _ in range(50)).encode())
        finally:
            os._exit(0)
    os.close(writing)
    with os.fdopen(reading) as pipe:
        theirs = set(pipe.read().split())
    os.waitpid(child, 0)
    ours = {framing.new_mark() for _ in range(framing.MARKS_AHEAD)}
    assert len(theirs) == 50 and not theirs & ours


# --- the tool's Context, made once with its deadline ----------------------------------------------------------


def test_a_tools_context_carries_the_calls_deadline_and_is_made_once(gateway_home: Path, monkeypatch) -> None:
    seen: list[tuple[float, float, str]] = []

    def look(ctx) -> Answer:
        seen.append((ctx.deadline.seconds, ctx.deadline.left(), ctx.mark))
        return Answer(text="looked")

    gateway = make_gateway([inline_plugin("look", tools=[Tool.from_function(look, read_only=True)])],
                           config={"gateway": {"plugins": ["look"], "call_timeout": 7}}, home=gateway_home)
    made = contexts_counted(monkeypatch)
    for _ in range(12):  # on a worker at first, then on the loop once it proved quick
        assert gateway.call("look").text == "looked"
    assert made == ["look"] * 12
    assert all(seconds == 7 and 0 < left <= 7 for seconds, left, _mark in seen)
    assert len({mark for _s, _l, mark in seen}) == 12


def test_a_refreshing_plugin_s_refresh_gets_a_context_and_its_tool_one_with_the_deadline(gateway_home: Path) -> None:
    refreshed: list[float] = []

    def run(ctx) -> Refreshed:
        refreshed.append(ctx.deadline.seconds)
        return Refreshed()

    def look(ctx) -> Answer:
        return Answer(text=f"deadline {ctx.deadline.seconds:g}")

    name, plugin = inline_plugin("look", tools=[Tool.from_function(look, read_only=True)])
    from gateway.api.hookspecs import hookimpl

    plugin.register_refresh = hookimpl(lambda gateway: [Refresh(run=run)])
    gateway = make_gateway([(name, plugin)], config={"gateway": {"plugins": ["look"], "call_timeout": 9}},
                           home=gateway_home)
    assert gateway.call("look").text == "deadline 9"
    assert refreshed == [float("inf")]  # the refresh runs under its own budget, not the call's deadline


def test_an_async_tool_is_still_awaited(gateway_home: Path) -> None:
    async def later(ctx) -> Answer:
        await anyio.sleep(0)
        return Answer(text="awaited")

    gateway = make_gateway([inline_plugin("later", tools=[Tool.from_function(later, read_only=True)])],
                           config={"gateway": {"plugins": ["later"]}}, home=gateway_home)
    assert gateway.call("later").text == "awaited"
