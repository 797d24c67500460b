"""Tool calls run as tasks: started at once, polled, their answer fetched later, cancelled, for the revisions that
define tasks.

Two revisions, two shapes of one idea:

* 2025-11-25 has tasks in the core protocol (experimental): a host asks for one by a ``task`` field in a
  ``tools/call``; the answer is ``{"task": Task}`` at once; ``tasks/get`` polls, ``tasks/result`` waits for the
  call's answer, ``tasks/list`` lists the host's own tasks, ``tasks/cancel`` stops one. Declared by
  ``capabilities.tasks`` and ``execution.taskSupport`` on each tool, for that revision only.
* 2026-07-28 moves them into the extension ``io.modelcontextprotocol/tasks``: a host that names the extension in a
  request's client capabilities may get a task instead of the answer, the server deciding. Here a call still
  running after `INLINE_SECONDS` becomes a task (``resultType: "task"``); a quicker one answers as usual.
  ``tasks/get`` polls and carries the answer once done, ``tasks/update`` is acknowledged (the gateway never asks the
  host for input), ``tasks/cancel`` stops one; ``tasks/result`` and ``tasks/list`` are not in that revision.

Whatever the revision, the call itself is the same call a host makes directly: the same gate, masks, audit line
and deadline (`Gateway.call_tool`). A task belongs to whoever started it (transport, HTTP session, token,
profile, client name): another never sees it, and an id not its own is answered as an unknown one. Each owner
may have `MAX_RUNNING` tasks working at once; a finished task is kept `KEEP_MS` from its start (a host may ask for
less), and `MAX_KEPT` tasks at most are kept in all.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import anyio.abc
import attrs
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND

from gateway.api.context import ProgressReport, reporting_progress
from gateway.engine.log import get_logger
from gateway.privacy import clip
from gateway.wire.progress import Send, progress_of_call

log = get_logger("gateway.wire.tasks")

EXTENSION = "io.modelcontextprotocol/tasks"
CORE_REVISION = "2025-11-25"  # the one revision with tasks in its core
EXTENSION_REVISIONS = frozenset({"2026-07-28"})
CORE_METHODS = frozenset({"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"})
EXTENSION_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})
RELATED_TASK = "io.modelcontextprotocol/related-task"

MAX_RUNNING = 8  # tasks working at once, per owner
MAX_KEPT = 256  # tasks kept at all (working or finished), every owner together
KEEP_MS = 15 * 60 * 1000  # how long a task is kept from its start, at most
MIN_KEEP_MS = 10 * 1000
POLL_MS = 500  # the polling interval suggested to hosts
INLINE_SECONDS = 1.0  # 2026-07-28: a call done within this answers as usual, one still running becomes a task
TERMINAL = frozenset({"completed", "failed", "cancelled"})
STATUS_LIMIT = 200  # characters of a status message, masked


def _now() -> datetime:
    return datetime.now(UTC)


def _stamp(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


Owner = tuple[str, ...]


@attrs.define(eq=False)
class Task:
    """One tool call running (or run) as a task, and what it came to."""

    task_id: str
    owner: Owner
    tool: str
    ttl_ms: int
    created: datetime = attrs.field(factory=_now)
    updated: datetime = attrs.field(factory=_now)
    status: str = "working"
    message: str | None = None
    result: dict[str, Any] | None = None  # the call's result, as the revision shapes it
    error: dict[str, Any] | None = None  # a JSON-RPC error object
    finished: anyio.Event = attrs.field(factory=anyio.Event)
    scope: anyio.CancelScope = attrs.field(factory=anyio.CancelScope)
    last_progress: float | None = None

    def expired(self, now: datetime) -> bool:
        return self.status in TERMINAL and now >= self.created + timedelta(milliseconds=self.ttl_ms)

    def finish(self, status: str, *, result: dict[str, Any] | None = None, error: dict[str, Any] | None = None,
               message: str | None = None) -> None:
        if self.status in TERMINAL:
            return
        self.status, self.result, self.error, self.updated = status, result, error, _now()
        if message is not None:
            self.message = message
        self.finished.set()

    def progress(self, done: Any, total: Any = None, message: Any = None) -> None:
        """`Context.progress` of the call, shown as the task's status message (masked, forward only)."""
        try:
            value = float(done)
            whole = float(total) if total is not None else None
        except (TypeError, ValueError):
            return
        if self.status in TERMINAL or (self.last_progress is not None and value <= self.last_progress):
            return
        self.last_progress = value
        said = f"{value:g} of {whole:g}" if whole is not None else f"{value:g}"
        if message:
            said += f": {message}"
        self.message = clip(said, STATUS_LIMIT)
        self.updated = _now()

    def core_json(self) -> dict[str, Any]:
        """The 2025-11-25 `Task`."""
        body: dict[str, Any] = {"taskId": self.task_id, "status": self.status, "createdAt": _stamp(self.created),
                                "lastUpdatedAt": _stamp(self.updated), "ttl": self.ttl_ms, "pollInterval": POLL_MS}
        if self.message:
            body["statusMessage"] = self.message
        return body

    def extension_json(self, detailed: bool) -> dict[str, Any]:
        """The extension's `Task`; `detailed` (tasks/get) adds the result or the error of a finished one."""
        body: dict[str, Any] = {"taskId": self.task_id, "status": self.status, "createdAt": _stamp(self.created),
                                "lastUpdatedAt": _stamp(self.updated), "ttlMs": self.ttl_ms,
                                "pollIntervalMs": POLL_MS}
        if self.message:
            body["statusMessage"] = self.message
        if detailed and self.status == "completed" and self.result is not None:
            body["result"] = self.result
        if detailed and self.status == "failed" and self.error is not None:
            body["error"] = self.error
        return body


class TooMany(Exception):
    """No room for another task now; the sentence says why and what to do."""


def _unknown(task_id: str) -> MCPError:
    # The same words for a task that never was, one that expired and another's: an id is not an oracle.
    return MCPError(INVALID_PARAMS, f"No task {task_id[:64]!r} here: it is unknown, or it was kept its time and "
                                    "let go. Call the tool again.")


class TaskStore:
    """The tasks of one server (one stdio connection, or every HTTP session), and the task group they run in."""

    def __init__(self) -> None:
        self.tasks: dict[str, Task] = {}
        self.group: anyio.abc.TaskGroup | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """For the block, tasks can be started (they run in a task group of the block); at its end they stop."""
        async with anyio.create_task_group() as group:
            self.group = group
            try:
                yield
            finally:
                self.group = None
                group.cancel_scope.cancel()

    @property
    def available(self) -> bool:
        return self.group is not None

    def _purge(self) -> None:
        now = _now()
        for task_id in [i for i, t in self.tasks.items() if t.expired(now)]:
            del self.tasks[task_id]

    def _make_room(self, owner: Owner) -> None:
        self._purge()
        running = sum(1 for t in self.tasks.values() if t.owner == owner and t.status not in TERMINAL)
        if running >= MAX_RUNNING:
            raise TooMany(f"{running} tasks of this host are still working, the most the gateway runs at once: "
                          "wait for one to finish (tasks/get), or cancel one (tasks/cancel).")
        if len(self.tasks) >= MAX_KEPT:
            finished = sorted((t for t in self.tasks.values() if t.status in TERMINAL), key=lambda t: t.updated)
            if not finished:
                raise TooMany("The gateway holds as many working tasks as it keeps: try again in a moment.")
            del self.tasks[finished[0].task_id]

    def start(self, owner: Owner, tool: str, work: Callable[[], Awaitable[dict[str, Any]]],
              ttl_ms: int | None = None, notify: Send | None = None) -> Task:
        """A new task for `owner`, running `work` (the call, giving its result) in the background; raises TooMany.
        With `notify` (the host gave a progress token), the call's progress is also sent through it, paced as a
        direct call's is, until the task ends."""
        assert self.group is not None, "tasks are started only while the store is running"
        self._make_room(owner)
        keep = KEEP_MS if ttl_ms is None else max(MIN_KEEP_MS, min(int(ttl_ms), KEEP_MS))
        task = Task(task_id=secrets.token_urlsafe(18), owner=owner, tool=tool, ttl_ms=keep)
        self.tasks[task.task_id] = task
        self.group.start_soon(self._run, task, work, notify)
        return task

    async def _run(self, task: Task, work: Callable[[], Awaitable[dict[str, Any]]], notify: Send | None) -> None:
        with task.scope:
            try:
                async with progress_of_call(notify) as told:
                    with reporting_progress(_both(task.progress, told.report) if told else task.progress):
                        result = await work()
            except MCPError as error:
                task.finish("failed", error=error.error.model_dump(by_alias=True, mode="json", exclude_none=True),
                            message=clip(error.error.message, STATUS_LIMIT))
            except Exception:
                log.exception("a task failed inside the gateway", tool=task.tool)
                task.finish("failed", error={"code": INTERNAL_ERROR, "message": "Internal error in the gateway; the "
                                                                                 "details are in its log (stderr)."})
            else:
                task.finish("completed", result=result)
        task.finish("cancelled", message="Cancelled at the host's request.")  # only when the scope was cancelled

    def get(self, owner: Owner, task_id: str) -> Task:
        self._purge()
        task = self.tasks.get(task_id)
        if task is None or task.owner != owner:
            raise _unknown(task_id)
        return task

    def owned(self, owner: Owner) -> list[Task]:
        """The owner's tasks, newest first."""
        self._purge()
        return sorted((t for t in self.tasks.values() if t.owner == owner), key=lambda t: t.created, reverse=True)

    def cancel(self, task: Task) -> None:
        task.scope.cancel()
        task.finish("cancelled", message="Cancelled at the host's request.")

    def forget(self, task: Task) -> None:
        self.tasks.pop(task.task_id, None)


def _both(first: ProgressReport, second: ProgressReport) -> ProgressReport:
    def report(done: Any, total: Any = None, message: Any = None) -> None:
        first(done, total, message)
        second(done, total, message)

    return report


def allowed(method: str, revision: str | None) -> bool:
    """Whether `method` (a tasks/ one) is in `revision`; the others answer as unknown methods do."""
    if revision == CORE_REVISION:
        return method in CORE_METHODS
    if revision in EXTENSION_REVISIONS:
        return method in EXTENSION_METHODS
    return False


def not_found(method: str) -> MCPError:
    return MCPError(METHOD_NOT_FOUND, "Method not found", method)


def host_takes_tasks(params: Mapping[str, Any] | None) -> bool:
    """Whether a 2026-07-28 request names the tasks extension in its client capabilities."""
    meta = (params or {}).get("_meta")
    capabilities = meta.get("io.modelcontextprotocol/clientCapabilities") if isinstance(meta, Mapping) else None
    extensions = capabilities.get("extensions") if isinstance(capabilities, Mapping) else None
    return isinstance(extensions, Mapping) and EXTENSION in extensions
