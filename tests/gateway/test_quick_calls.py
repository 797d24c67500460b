"""Read-only tools that answered quickly every time lately run on the event loop's thread, without the hop to a
worker; anything else keeps the worker, and the deadline, the masks and the audit are the same either way.

Whether a run was quick is a matter of time: the tests set the bound (`QUICK_SECONDS`) so that every run is quick,
or none is, and never assert a duration.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time

import anyio
import pytest

from gateway import Tool
from gateway.engine import core
from gateway.engine.core import Caller
from gateway.testing import inline_plugin, make_gateway

LOOP = threading.current_thread().name  # `TestGateway.call` runs each call's loop on this thread


def where() -> str:
    return threading.current_thread().name


def where_writing() -> str:
    return threading.current_thread().name


def loop_shy() -> str:
    """A function that needs a thread without a running event loop (as one that starts a loop of its own does)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return threading.current_thread().name
    raise RuntimeError("an event loop runs on this thread already")


def maybe_spin(ctx, spin: bool = False) -> str:
    while spin:
        ctx.deadline.check()
    return "quick"


RUNS: list[str] = []


def turns_slow(slow: bool = False) -> str:
    """Quick, until it meets new data: then, on the loop's thread, pure Python work for up to a minute that looks
    at no deadline (a stranger's file being read); on a worker it is quick again."""
    RUNS.append(threading.current_thread().name)
    if slow and threading.current_thread() is threading.main_thread():
        end = time.monotonic() + 60
        while time.monotonic() < end:
            pass
    return threading.current_thread().name


def leaky() -> dict:
    return {"card": "card 4111 1111 1111 1111", "where": threading.current_thread().name}


HELD = threading.Event()
HOLDING = threading.Event()


def hold() -> str:
    """A call that keeps a worker busy until the test lets it go."""
    HOLDING.set()
    HELD.wait(30)
    return "let go"


def tools() -> list[Tool]:
    read_only = [Tool.from_function(f, read_only=True) for f in (where, loop_shy, maybe_spin, leaky, turns_slow)]
    return [*read_only, Tool.from_function(where_writing), Tool.from_function(hold)]


def gateway_of(home, timeout: float | None = None):
    config = {"gateway": {"plugins": ["quick"], **({"call_timeout": timeout} if timeout else {})}}
    return make_gateway([inline_plugin("quick", tools=tools())], config=config, home=home)


@pytest.fixture
def every_run_quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core, "QUICK_SECONDS", 3600.0)
    # No run waits, none is taken off its core.
    monkeypatch.setattr(core, "_spent", lambda clock=time.perf_counter: (clock(), 0, 0))


def test_a_read_only_tool_quick_every_time_moves_to_the_loop_after_its_streak(gateway_home, every_run_quick):
    gateway = gateway_of(gateway_home)
    threads = [gateway.call("where").text for _ in range(core.QUICK_STREAK + 2)]
    assert all(name.startswith("gateway-worker") for name in threads[:core.QUICK_STREAK])
    assert threads[core.QUICK_STREAK:] == [LOOP, LOOP]


def test_a_writing_tool_always_runs_on_a_worker(gateway_home, every_run_quick):
    gateway = gateway_of(gateway_home)
    threads = {gateway.call("where_writing").text for _ in range(core.QUICK_STREAK + 4)}
    assert all(name.startswith("gateway-worker") for name in threads)


def test_a_tool_never_quick_stays_on_the_workers(gateway_home, monkeypatch, every_run_quick):
    monkeypatch.setattr(core, "QUICK_SECONDS", -1.0)  # its work over the bound every time
    gateway = gateway_of(gateway_home)
    threads = {gateway.call("where").text for _ in range(core.QUICK_STREAK + 4)}
    assert all(name.startswith("gateway-worker") for name in threads)


def test_a_slow_run_on_the_loop_sends_the_tool_back_until_it_is_quick_twice_as_long(gateway_home, monkeypatch,
                                                                                     every_run_quick):
    gateway = gateway_of(gateway_home)
    for _ in range(core.QUICK_STREAK):
        gateway.call("where")
    monkeypatch.setattr(core, "QUICK_SECONDS", -1.0)  # the next run, on the loop, is slow
    assert gateway.call("where").text == LOOP
    monkeypatch.setattr(core, "QUICK_SECONDS", 3600.0)
    threads = [gateway.call("where").text for _ in range(2 * core.QUICK_STREAK + 1)]
    assert all(name.startswith("gateway-worker") for name in threads[:2 * core.QUICK_STREAK])
    assert threads[-1] == LOOP


def test_a_tool_that_waits_on_something_stays_on_the_workers(gateway_home):
    # A real wait (a sleep, as a disk read or a lock would be), counted by the kernel: whatever its CPU time.
    import time

    def nap() -> str:
        time.sleep(0.002)
        return threading.current_thread().name

    gateway = make_gateway([inline_plugin("napper", tools=[Tool.from_function(nap, read_only=True)])],
                           config={"gateway": {"plugins": ["napper"]}}, home=gateway_home)
    threads = {gateway.call("nap").text for _ in range(core.QUICK_STREAK + 4)}
    assert all(name.startswith("gateway-worker") for name in threads)


def test_a_tool_that_fails_on_the_loop_is_answered_from_a_worker_and_stays_there(gateway_home, every_run_quick,
                                                                                audit_lines):
    gateway = gateway_of(gateway_home)
    answers = [gateway.call("loop_shy") for _ in range(core.QUICK_STREAK + 3)]
    assert not any(answer.is_error for answer in answers)
    assert all(answer.text.startswith("gateway-worker") for answer in answers)
    assert [line["outcome"] for line in audit_lines()] == ["ok"] * len(answers)


def test_the_deadline_holds_on_the_loop(gateway_home, every_run_quick, audit_lines):
    gateway = gateway_of(gateway_home, timeout=0.2)
    for _ in range(core.QUICK_STREAK):
        assert gateway.call("maybe_spin").text == "quick"
    answer = gateway.call("maybe_spin", {"spin": True})
    assert answer.is_error and "took longer than 0.2 s and was stopped" in answer.text
    assert audit_lines()[-1]["outcome"] == "timeout"


def test_an_answer_made_on_the_loop_is_masked_and_audited_like_one_from_a_worker(gateway_home, every_run_quick,
                                                                                 audit_lines):
    gateway = gateway_of(gateway_home)
    answers = [gateway.call("leaky") for _ in range(core.QUICK_STREAK + 1)]
    assert answers[0].data["where"].startswith("gateway-worker") and answers[-1].data["where"] == LOOP
    for answer in answers:
        assert "4111 1111" not in answer.text and "4111 1111" not in str(answer.data)
        assert answer.data["card"] == "card [card …1111]"
    lines = audit_lines()
    assert len(lines) == len(answers) and {line["outcome"] for line in lines} == {"ok"}
    assert lines[0].keys() == lines[-1].keys()


def test_a_quick_tool_keeps_to_the_workers_while_its_plugin_has_a_call_on_one(gateway_home, every_run_quick):
    gateway = gateway_of(gateway_home)
    for _ in range(core.QUICK_STREAK):
        gateway.call("where")
    caller = Caller("test", "1", "test")
    HELD.clear()
    HOLDING.clear()

    async def both() -> tuple[str, str]:
        async with anyio.create_task_group() as tasks:
            held: list[str] = []

            async def holding() -> None:
                held.append((await gateway.call_tool("hold", {}, caller)).text)

            tasks.start_soon(holding)
            await anyio.to_thread.run_sync(HOLDING.wait, 30)
            beside = (await gateway.call_tool("where", {}, caller)).text
            HELD.set()
        return beside, held[0]

    beside, held = anyio.run(both)
    assert beside.startswith("gateway-worker") and held == "let go"
    assert gateway.call("where").text == LOOP  # the plugin's other call is over: back on the loop


def test_a_quick_tool_that_turns_slow_on_the_loop_is_stopped_and_answered_from_a_worker(gateway_home,
                                                                                     every_run_quick, audit_lines):
    gateway = gateway_of(gateway_home)
    for _ in range(core.QUICK_STREAK):
        gateway.call("turns_slow")
    assert gateway.call("turns_slow").text == LOOP
    RUNS.clear()
    answer = gateway.call("turns_slow", {"slow": True})
    assert not answer.is_error and answer.text.startswith("gateway-worker"), answer.text
    assert RUNS[0] == LOOP and RUNS[1].startswith("gateway-worker")  # stopped on the loop, run again on a worker
    assert audit_lines()[-1]["outcome"] == "ok"
    # Back to the workers until quick twice as long in a row (the run again on a worker was the first of them).
    threads = [gateway.call("turns_slow").text for _ in range(2 * core.QUICK_STREAK)]
    assert all(name.startswith("gateway-worker") for name in threads[:-1]) and threads[-1] == LOOP


def test_a_tool_that_usually_takes_longer_is_quick_while_it_keeps_to_its_usual_time() -> None:
    pace, base = core.Pace(), core.QUICK_SECONDS
    assert not pace._was_quick(3 * base, False)  # its first run: only the base bound holds
    assert pace._was_quick(3 * base, False)  # then its usual time is known: twice that, under the cap
    assert not pace._was_quick(3 * base, True)  # a run that waited on something never is
    assert not pace._was_quick(core.QUICK_FACTOR * base + base, False)  # never past the cap
    assert pace._was_quick(0.5 * base, False)  # under the base bound always is


def test_a_run_twice_as_long_as_the_tools_usual_is_not_quick() -> None:
    pace, base = core.Pace(), core.QUICK_SECONDS
    for _ in range(20):
        pace._was_quick(1.5 * base, False)
    assert pace._was_quick(2.9 * base, False)
    assert not pace._was_quick(4 * base, False)  # over twice its usual 1.5 (and the usual moves only slowly)


@pytest.fixture
def timer_calls(monkeypatch: pytest.MonkeyPatch):
    """The real-time timer's settings made by the core (its signal module's setitimer, counted); the timer is
    cancelled after the test, so that none of ours goes off in a later one."""
    made: list[float] = []
    real = core.signal.setitimer

    def counted(which: int, seconds: float, interval: float = 0.0):
        made.append(seconds)
        return real(which, seconds, interval)

    monkeypatch.setattr(core.signal, "setitimer", counted)
    yield made
    real(core.signal.ITIMER_REAL, 0)
    core._Alarm.fires_at = None


def test_quick_runs_on_the_loop_share_one_timer_setting(gateway_home, every_run_quick, monkeypatch, timer_calls):
    monkeypatch.setattr(core, "LOOP_LIMIT_SECONDS", 600.0)  # no run here lasts that long: none finds it gone off
    gateway = gateway_of(gateway_home)
    for _ in range(core.QUICK_STREAK):
        gateway.call("where")
    assert all(gateway.call("where").text == LOOP for _ in range(20))
    assert timer_calls == [600.0]  # set by the first run on the loop, never cancelled, found set by the others


def test_a_run_on_the_loop_is_stopped_when_another_part_of_the_process_cancelled_the_timer(gateway_home,
                                                                                        every_run_quick):
    gateway = gateway_of(gateway_home)
    try:
        for _ in range(core.QUICK_STREAK):
            gateway.call("turns_slow")
        assert gateway.call("turns_slow").text == LOOP  # the timer is set now, and left set
        signal.setitimer(signal.ITIMER_REAL, 0)  # another part of the process cancels the one real-time timer
        time.sleep(core.LOOP_LIMIT_SECONDS + 0.01)  # the core's timer would have gone off by now: it is taken for lost
        RUNS.clear()
        answer = gateway.call("turns_slow", {"slow": True})
        assert not answer.is_error and answer.text.startswith("gateway-worker"), answer.text
        assert RUNS[0] == LOOP and RUNS[1].startswith("gateway-worker")  # stopped on the loop all the same
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        core._Alarm.fires_at = None


def test_a_timer_left_pending_by_the_last_run_is_cancelled_at_exit(gateway_home, every_run_quick):
    """The interpreter gives the signal its default action back as it exits (the process's end): the timer a run left
    set must not outlive the exit handler, else a process that ends just after a quick call dies of its alarm."""
    gateway = gateway_of(gateway_home)
    try:
        for _ in range(core.QUICK_STREAK):
            gateway.call("where")
        assert gateway.call("where").text == LOOP
        assert signal.getitimer(signal.ITIMER_REAL)[0] > 0  # set by the run, left set
        assert core._Alarm.cancelled_at_exit  # the exit handler is in place (atexit)
        core._cancel_timer()  # what it does at exit
        assert signal.getitimer(signal.ITIMER_REAL)[0] == 0 and core._Alarm.fires_at is None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        core._Alarm.fires_at = None


def test_a_run_over_the_bound_that_was_taken_off_its_core_gives_no_verdict() -> None:
    pace, base = core.Pace(), core.QUICK_SECONDS
    assert pace._was_quick(0.5 * base, False, True)  # quick all the same: counted
    assert pace._was_quick(3 * base, False, True) is None  # its wall time is not its own: no verdict
    assert pace.usual == 0.5 * base  # and its time is not made part of the usual one
    assert pace._was_quick(3 * base, True, True) is False  # a run that waited on something never is quick
