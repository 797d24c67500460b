"""The task store's bounds, on the store itself (no server): a finished task is let go once its time is up and a
working one is not (its call's deadline ends it), the store keeps a bounded number in all by letting the oldest
finished go, and an id is another's or unknown in the same words."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from gateway.wire import tasks as tasking


async def _answer() -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "done"}], "isError": False}


async def _forever() -> dict[str, Any]:
    await anyio.sleep_forever()
    raise AssertionError("never")


def test_a_finished_task_is_let_go_when_its_time_is_up_and_a_working_one_is_not() -> None:
    async def play() -> None:
        store = tasking.TaskStore()
        async with store.running():
            done = store.start(("stdio",), "t", _answer, ttl_ms=1)
            working = store.start(("stdio",), "t", _forever, ttl_ms=1)
            await done.finished.wait()
            assert done.ttl_ms == tasking.MIN_KEEP_MS  # a host's ask is held to the store's bounds
            for task in (done, working):
                task.created -= timedelta(milliseconds=task.ttl_ms + 1)
            with pytest.raises(MCPError):
                store.get(("stdio",), done.task_id)
            assert store.get(("stdio",), working.task_id) is working
            store.cancel(working)

    anyio.run(play)


def test_the_store_keeps_a_bounded_number_letting_the_oldest_finished_go(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tasking, "MAX_KEPT", 4)

    async def play() -> None:
        store = tasking.TaskStore()
        async with store.running():
            first = [store.start((f"host-{i}",), "t", _answer) for i in range(4)]
            for task in first:
                await task.finished.wait()
            newest = store.start(("host-9",), "t", _answer)
            assert len(store.tasks) == 4 and first[0].task_id not in store.tasks and newest.task_id in store.tasks

    anyio.run(play)


def test_another_owners_task_is_refused_in_the_words_of_an_unknown_one() -> None:
    async def play() -> None:
        store = tasking.TaskStore()
        async with store.running():
            task = store.start(("http", "session-a", "", "", "host"), "t", _answer)
            with pytest.raises(MCPError) as theirs:
                store.get(("http", "session-b", "", "", "host"), task.task_id)
            with pytest.raises(MCPError) as unknown:
                store.get(("http", "session-b", "", "", "host"), "x" * len(task.task_id))
            assert theirs.value.error.code == unknown.value.error.code
            assert theirs.value.error.message.replace(task.task_id, "ID") == unknown.value.error.message.replace(
                "x" * len(task.task_id), "ID")
            assert store.owned(("http", "session-b", "", "", "host")) == []

    anyio.run(play)


def test_a_tasks_progress_is_its_status_message_forward_only_and_masked() -> None:
    async def made() -> tasking.Task:  # a task's events belong to a loop
        return tasking.Task(task_id="t", owner=("stdio",), tool="t", ttl_ms=tasking.KEEP_MS)

    task = anyio.run(made)
    task.progress(3, 10, "card 4111 1111 1111 1111\nsecond line")
    task.progress(2, 10, "backwards")
    assert task.message is not None and task.message.startswith("3 of 10: ")
    assert "4111" not in task.message and "\n" not in task.message
