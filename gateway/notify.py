"""Telling connected hosts what a refresh brought in: `notifications/resources/list_changed` (a few a minute at
most) and `notifications/resources/updated` to the subscribers of a changed resource.

A refresh finishes on a thread of its own; `Notifier.refreshed` hands its result to the event loop, where the
notifications are sent on each live connection (the SDK keeps no server-wide broadcast). The connections are
the SDK's sessions, used through the two methods they offer; this module imports nothing of the SDK.

A subscription is checked twice: when the host subscribes (the server module), and again each time a change is to
be told (`may_tell`, the gate as it is then): a project closed since is told nothing. The subscription is kept,
silent, so that the host hears again if the person opens the project again.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import structlog

from gateway.refresh import Refreshed

log = structlog.get_logger("gateway.notify")

LIST_CHANGED_GAP = 20.0  # seconds between two list_changed: three a minute at most


class Notifier:
    """The live connections and their subscriptions, and the pacing of list_changed."""

    def __init__(self, may_tell: Callable[[str, Any], Awaitable[bool]], gap: float = LIST_CHANGED_GAP) -> None:
        """`may_tell(uri, caller)`: whether the caller who subscribed may now be told that `uri` changed."""
        self.may_tell = may_tell
        self.gap = gap
        # The SDK gives each request a session proxy of its own; the connection behind it is what lasts. Each
        # connection is kept with its latest proxy (whose standalone channel outlives the request).
        self.sessions: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        self.subscribed: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
        self.callers: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()  # who subscribed, for the gate
        self._last_sent = -math.inf
        self._held = False
        self._token: Any = None
        self._tasks: Any = None

    async def serve(self, task_group: Any) -> None:
        """Bind to the running loop: notifications are sent from tasks of `task_group`."""
        self._token = anyio.lowlevel.current_token()
        self._tasks = task_group

    def connected(self, session: Any) -> None:
        self.sessions[_connection(session)] = session

    def subscribe(self, session: Any, uri: str, caller: Any = None) -> None:
        connection = _connection(session)
        self.subscribed.setdefault(connection, set()).add(uri)
        self.callers[connection] = caller

    def unsubscribe(self, session: Any, uri: str) -> None:
        self.subscribed.get(_connection(session), set()).discard(uri)

    def has_subscribers(self) -> bool:
        return any(self.subscribed.values())

    def refreshed(self, plugin: str, result: Refreshed) -> None:
        """A refresh's listener (any thread): schedule what it calls for on the loop."""
        if self._token is None or self._tasks is None:
            return
        try:
            anyio.from_thread.run_sync(self._tasks.start_soon, self._send, result, token=self._token)
        except RuntimeError:  # called on the loop's own thread (a refresh run inline)
            self._tasks.start_soon(self._send, result)
        except Exception as error:  # the loop is gone: the server is stopping
            log.debug("notification not scheduled", error=repr(error))

    async def _send(self, result: Refreshed) -> None:
        for uri in result.changed:
            for connection, uris in list(self.subscribed.items()):
                session = self.sessions.get(connection)
                if uri in uris and session is not None and await self._allowed(connection, uri):
                    await _quietly(session.send_resource_updated, uri)
        if result.added:
            await self._list_changed()

    async def _allowed(self, connection: Any, uri: str) -> bool:
        try:
            return await self.may_tell(uri, self.callers.get(connection))
        except Exception as error:  # a gate that cannot answer tells nothing
            log.error("notification withheld: the gate check failed", error=repr(error))
            return False

    async def _list_changed(self) -> None:
        if self._held:
            return  # one is already waiting for its turn: it will tell of this one too
        wait = self._last_sent + self.gap - anyio.current_time()
        if wait > 0:
            self._held = True
            try:
                await anyio.sleep(wait)
            finally:
                self._held = False
        self._last_sent = anyio.current_time()
        for session in list(self.sessions.values()):
            await _quietly(session.send_resource_list_changed)


def _connection(session: Any) -> Any:
    """The connection a request's session proxy speaks on (mcp.server.session.ServerSession keeps it privately)."""
    return getattr(session, "_connection", session)


async def _quietly(send: Any, *arguments: Any) -> None:
    """A connection that closed meanwhile is not a fault."""
    try:
        await send(*arguments)
    except Exception as error:
        log.debug("notification not sent", error=str(error))
