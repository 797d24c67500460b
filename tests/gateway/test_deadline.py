"""Calls bounded in time: plugin functions on worker threads, the call deadline, SQLite interrupted, bounds said
as short sentences."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from gateway import Tool
from gateway.api.deadline import Deadline
from gateway.testing import inline_plugin, make_gateway

ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def where() -> str:
    return threading.current_thread().name


async def where_async() -> str:
    return threading.current_thread().name


def spin(ctx) -> str:
    while True:
        ctx.deadline.check()


def endless(ctx) -> str:
    connection = sqlite3.connect(":memory:")
    with ctx.interruptible(connection):
        connection.execute(ENDLESS).fetchone()
    return "finished"


def short(text: str) -> str:
    return text


SHORT = Tool(name="short", function=short, input_schema={
    "type": "object", "properties": {"text": {"type": "string", "maxLength": 10}}, "required": ["text"]})


def gateway_of(home, timeout: float | None = None):
    tools = [Tool.from_function(f) for f in (where, where_async, spin, endless)] + [SHORT]
    config = {"gateway": {"plugins": ["slow"], **({"call_timeout": timeout} if timeout else {})}}
    return make_gateway([inline_plugin("slow", tools=tools)], config=config, home=home)


def test_a_plain_tool_runs_on_a_worker_thread_and_an_async_one_on_the_loop(gateway_home):
    gateway = gateway_of(gateway_home)
    assert gateway.call("where").text.startswith("gateway-worker")
    assert gateway.call("where_async").text == threading.current_thread().name


def test_a_tool_that_checks_its_deadline_is_answered_with_the_deadline_sentence(gateway_home, audit_lines):
    answer = gateway_of(gateway_home, timeout=0.2).call("spin")
    assert answer.is_error and "took longer than 0.2 s and was stopped" in answer.text
    assert audit_lines()[-1]["outcome"] == "timeout"


def test_sqlite_work_given_interruptible_stops_at_the_deadline(gateway_home):
    answer = gateway_of(gateway_home, timeout=0.2).call("endless")
    assert answer.is_error and "took longer than 0.2 s" in answer.text


def test_interrupting_removes_its_handler_on_the_way_out():
    connection = sqlite3.connect(":memory:")
    with pytest.raises(sqlite3.OperationalError, match="interrupted"), Deadline.after(0.05).interrupting(connection):
        connection.execute(ENDLESS).fetchone()
    # The same connection, kept for the next call, carries no old deadline.
    assert connection.execute("SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
                              "FROM c WHERE x < 100000) SELECT x FROM c)").fetchone() == (100000,)


@pytest.mark.parametrize("value", [0, -1, "30", True, 100_000])
def test_call_timeout_must_be_a_number_of_seconds(gateway_home, value):
    gateway = make_gateway([], config={"gateway": {"call_timeout": value}}, home=gateway_home)
    assert "call_timeout must be a number of seconds" in (gateway.snapshot().error or "")


def test_a_too_long_argument_is_refused_in_a_short_sentence_that_does_not_echo_it(gateway_home):
    answer = gateway_of(gateway_home).call("short", {"text": "x" * 100_000})
    assert answer.is_error
    assert "100,000 characters long, over the limit of 10" in answer.text and len(answer.text) < 200
