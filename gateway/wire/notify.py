"""Telling connected hosts what a refresh brought in: `notifications/resources/list_changed` (a few a minute at
most) and `notifications/resources/updated` to the subscribers of a changed resource.

A refresh finishes on a thread of its own; `Notifier.refreshed` hands its result to the event loop, where the
notifications are sent on each live connection (the SDK keeps no server-wide broadcast). The connections are
the SDK's sessions, used through the two methods they offer; this module imports nothing of the SDK.

A subscription is checked twice: when the host subscribes (the server module), and again each time a change is to
be told (`may_tell`, the gate as it is then): a project closed since is told nothing. The subscription is kept,
silent, so that the host hears again if the person opens the project again.

The 2026-07-28 era has no connection that outlives a request: a host hears of changes on a `subscriptions/listen`
stream (`Listen`, opened by the server module) instead, under the same rules. `list_changed` goes out only when
something a refresh added is readable when it is told (`Refreshed.owners` against `may_list`, the gate then).
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel

from gateway.api.refresh import Refreshed
from gateway.engine.log import get_logger

log = get_logger("gateway.wire.notify")

LIST_CHANGED_GAP = 20.0  # seconds between two list_changed: three a minute at most
MAX_LISTENS = 64  # listen streams open at once in a process (a few hosts, each with a few)
MAX_BACKLOG = 256  # notices waiting on one stream whose host stopped reading: the stream is ended past it
MAX_LISTENED_URIS = 1000  # resources one listen may name (each is read under the gate when it listens)

LIST_CHANGED = "list_changed"
UPDATED = "updated"


class TooManyListens(Exception):
    """Every listen stream this process keeps is taken."""


class Listen:
    """One `subscriptions/listen` stream: who opened it, what it was granted, and its bounded backlog of notices,
    each (`LIST_CHANGED`, "") or (`UPDATED`, uri). A notice already waiting is not queued twice (each is a level
    trigger: "this changed, read it again"); a host that stops reading has its stream ended at `backlog`, as the
    SDK's own handler does (there is no replay: the host listens again and reads again)."""

    def __init__(self, caller: Any, uris: frozenset[str], list_changed: bool, backlog: int = MAX_BACKLOG) -> None:
        self.caller = caller
        self.uris = uris
        self.list_changed = list_changed
        self._send, self._receive = anyio.create_memory_object_stream[tuple[str, str]](backlog)
        self._waiting: set[tuple[str, str]] = set()
        self.ended = False

    def deliver(self, notice: tuple[str, str]) -> None:
        if self.ended or notice in self._waiting:
            return
        try:
            self._send.send_nowait(notice)
        except anyio.WouldBlock:
            log.warning("listen stream's backlog full: ending it", backlog=len(self._waiting))
            self.end()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.ended = True
        else:
            self._waiting.add(notice)

    def end(self) -> None:
        self.ended = True
        self._send.close()

    def __aiter__(self) -> Listen:
        return self

    async def __anext__(self) -> tuple[str, str]:
        try:
            notice = await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None
        self._waiting.discard(notice)
        return notice


def _any_place_said(owners: tuple[frozenset[str], ...]) -> bool:
    """With no gate to ask (tests of the pacing): an addition that says where it belongs is told."""
    return bool(owners)


class Notifier:
    """The live connections and their subscriptions, the listen streams, and the pacing of list_changed."""

    def __init__(
        self,
        may_tell: Callable[[str, Any], Awaitable[bool]],
        gap: float = LIST_CHANGED_GAP,
        may_list: Callable[[tuple[frozenset[str], ...]], bool] = _any_place_said,
        max_listens: int = MAX_LISTENS,
        may_list_for: Callable[[tuple[frozenset[str], ...], Any], bool] | None = None,
    ) -> None:
        """`may_tell(uri, caller)`: whether the caller who subscribed may now be told that `uri` changed.
        `may_list(owners)`: whether any of these owner sets (`Refreshed.owners`) is readable now; `may_list_for
        (owners, caller)`, when given, the same for one caller, asked for each connection or stream whose caller
        is known (its profile, chosen by its HTTP token, may open less than the gateway's own)."""
        self.may_tell = may_tell
        self.may_list = may_list
        self.may_list_for = may_list_for
        self.gap = gap
        self.max_listens = max_listens
        self.listens: set[Listen] = set()
        self._owners: dict[frozenset[str], None] = {}  # of the additions not told yet, in order
        # The SDK gives each request a session proxy of its own; the connection behind it is what lasts. Each
        # connection is kept with its latest proxy (whose standalone channel outlives the request).
        self.sessions: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        self.subscribed: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
        self.callers: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()  # who subscribed, for the gate
        self.connected_as: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()  # who spoke last, ditto
        self._last_sent = -math.inf
        self._held = False
        self._token: Any = None
        self._tasks: Any = None
        self._loop_thread: int | None = None

    async def serve(self, task_group: Any) -> None:
        """Bind to the running loop: notifications are sent from tasks of `task_group`."""
        self._token = anyio.lowlevel.current_token()
        self._tasks = task_group
        self._loop_thread = threading.get_ident()

    def connected(self, session: Any, caller: Any = None) -> None:
        self.sessions[_connection(session)] = session
        if caller is not None:
            self.connected_as[_connection(session)] = caller

    def subscribe(self, session: Any, uri: str, caller: Any = None) -> None:
        connection = _connection(session)
        self.subscribed.setdefault(connection, set()).add(uri)
        self.callers[connection] = caller

    def unsubscribe(self, session: Any, uri: str) -> None:
        self.subscribed.get(_connection(session), set()).discard(uri)

    def has_subscribers(self) -> bool:
        """Whether anyone waits to hear of changes: a subscription, or a listen stream (of any kind)."""
        return bool(self.listens) or any(self.subscribed.values())

    def has_listeners(self) -> bool:
        """Whether anyone would hear a list_changed: a handshake connection, or a stream that asked for it."""
        return bool(self.sessions) or any(stream.list_changed for stream in self.listens)

    def listen(self, caller: Any, uris: frozenset[str], list_changed: bool) -> Listen:
        """A new listen stream; TooManyListens when all are taken. `uris` were checked by the caller (readable)."""
        self.listens = {each for each in self.listens if not each.ended}
        if len(self.listens) >= self.max_listens:
            raise TooManyListens(f"{self.max_listens} listen streams are open already")
        stream = Listen(caller, uris, list_changed)
        self.listens.add(stream)
        return stream

    def unlisten(self, stream: Listen) -> None:
        stream.end()
        self.listens.discard(stream)

    def refreshed(self, plugin: str, result: Refreshed) -> None:
        """A refresh's listener (any thread): schedule what it calls for on the loop."""
        if self._token is None or self._tasks is None:
            return
        if threading.get_ident() == self._loop_thread:  # a refresh run inline: from_thread would wait on itself
            self.tell(result)
            return
        try:
            anyio.from_thread.run_sync(self._tasks.start_soon, self._send, result, token=self._token)
        except Exception as error:  # the loop is gone: the server is stopping
            log.debug("notification not scheduled", error=repr(error))

    def tell(self, result: Refreshed) -> None:
        """As `refreshed`, from the loop's own thread."""
        if self._tasks is not None:
            self._tasks.start_soon(self._send, result)

    async def _send(self, result: Refreshed) -> None:
        for uri in result.changed:
            for connection, uris in list(self.subscribed.items()):
                session = self.sessions.get(connection)
                if uri in uris and session is not None and await self._allowed(self.callers.get(connection), uri):
                    await _quietly(session.send_resource_updated, uri)
            for stream in list(self.listens):
                if uri in stream.uris and not stream.ended and await self._allowed(stream.caller, uri):
                    stream.deliver((UPDATED, uri))
        callers = [*self.connected_as.values(), *(stream.caller for stream in self.listens)]
        if result.added and (self._readable(result.owners)
                             or any(self._readable(result.owners, caller) for caller in callers if caller is not None)):
            self._owners.update(dict.fromkeys(result.owners))
            await self._list_changed()

    async def _allowed(self, caller: Any, uri: str) -> bool:
        try:
            return await self.may_tell(uri, caller)
        except Exception as error:  # a gate that cannot answer tells nothing
            log.error("notification withheld: the gate check failed", error=repr(error))
            return False

    def _readable(self, owners: tuple[frozenset[str], ...], caller: Any = None) -> bool:
        try:
            if caller is not None and self.may_list_for is not None:
                return bool(owners) and self.may_list_for(owners, caller)
            return bool(owners) and self.may_list(owners)
        except Exception as error:
            log.error("list_changed withheld: the gate check failed", error=repr(error))
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
        owners, self._owners = tuple(self._owners), {}
        # The gate again, as it is now (a project closed while this one waited), for each who would hear: a caller
        # whose profile keeps every owner set is told nothing.
        sessions = [session for connection, session in list(self.sessions.items())
                    if self._readable(owners, self.connected_as.get(connection))]
        streams = [stream for stream in list(self.listens) if stream.list_changed and self._readable(owners, stream.caller)]
        if not sessions and not streams:
            return
        self._last_sent = anyio.current_time()
        for session in sessions:
            await _quietly(session.send_resource_list_changed)
        for stream in streams:
            stream.deliver((LIST_CHANGED, ""))


def _connection(session: Any) -> Any:
    """The connection a request's session proxy speaks on (mcp.server.session.ServerSession keeps it privately)."""
    return getattr(session, "_connection", session)


async def _quietly(send: Any, *arguments: Any) -> None:
    """A connection that closed meanwhile is not a fault."""
    try:
        await send(*arguments)
    except Exception as error:
        log.debug("notification not sent", error=str(error))
