"""The gateway's stdio transport: newline-delimited JSON-RPC in front of the SDK's session streams.

It keeps the contract of `mcp.server.stdio.stdio_server()` (yields a read stream of
`SessionMessage | Exception` and a write stream of `SessionMessage` for `Server.run`) and changes what
the SDK's version does badly for a long-lived gateway:

* input is read in large chunks from a watched descriptor and split here, not one worker-thread hop
  per line, and the answers that are ready together go out in one write;
* a lone call's answer is written by the event loop's own thread just before it goes to sleep waiting on the
  input (`descriptors.Sink.hold_until_sleep`), not two turns later through the writer's queue, nor by a thread
  that must be woken for it; batches and what the pipe does not take at once go to the writer thread;
* the server sees the client's first request before it is served (`first_request`), so that a
  handshake-era connection is served without the SDK's relay task (`gateway.wire.seams`);
* every frame the SDK would drop in silence (not JSON, not UTF-8, too long, too deep, a batch, a bad
  id...) gets a JSON-RPC error, so a client sees a reason instead of waiting for its own timeout;
* at most MAX_IN_FLIGHT requests are unanswered at once: past that, what the client sends next is held here in
  its order (at most _HELD_MAX messages and _HELD_BYTES), and past that input is not read until answers go out
  (back-pressure, so a client that floods without reading cannot grow the server's memory);
* a client kept waiting is told: its `ping` is answered here at once, never queued behind its calls, and a held
  request that carries a progress token gets a progress notification saying how many calls go first;
* end of input does not cancel the calls in flight: the read stream stays open until each forwarded
  request has been answered (or a time limit passes), then closes so `Server.run` returns normally.
"""

from __future__ import annotations

import json
import math
import re
import weakref
from collections import Counter, deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, BinaryIO, cast

import anyio
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp.types import (
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from gateway.engine.log import get_logger
from gateway.wire import descriptors
from gateway.wire.descriptors import Sink, Source, claim, release

__all__ = ["MAX_DEPTH", "MAX_IN_FLIGHT", "MAX_LINE", "first_request", "stdio_transport"]

log = get_logger()

MAX_LINE = 8 * 1024 * 1024
MAX_DEPTH = 64
# Client requests forwarded and not yet answered, per connection; notifications and replies do not count.
MAX_IN_FLIGHT = 64

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603

# Large reads keep the syscall count per message low when a client pipelines; a pipe rarely holds more.
READ_CHUNK = descriptors.READ_CHUNK
# Both queues are bounded so a client that floods us, or stops reading, applies back-pressure
# instead of growing memory; a little slack lets ready answers be coalesced into one write.
_INBOUND_SLACK = 64
_OUTBOUND_SLACK = 256
# One write carries at most about this much, so a burst of large answers does not build one huge buffer.
_BATCH_BYTES = 4 * 1024 * 1024
# While MAX_IN_FLIGHT calls are unanswered, what comes next is held (in order), up to this many messages and bytes.
_HELD_MAX = 256
_HELD_BYTES = 16 * 1024 * 1024
# At exit, how long the answers still queued may take to reach a client that has stopped reading.
_FLUSH_TIMEOUT = 5.0
# Requests that stay open for the life of the connection: nobody waits for their answer at end of input.
_OPEN_ENDED = frozenset({"subscriptions/listen"})

_JSON_SPACE = b" \t\r\n"
# An escaped UTF-16 surrogate; only then can the decoded text hold a lone one, which cannot be re-encoded.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_MISSING = object()
# How many messages may come before the client's first request and still leave it to decide how the connection is
# served (`first_request`); the SDK keeps as many for its own choice.
_OPENING_LEAD = 8
# The wire behind each read stream this transport yields, for `first_request`.
_wires: weakref.WeakKeyDictionary[Any, _Wire] = weakref.WeakKeyDictionary()

class _Refused(Exception):
    """A frame answered with an error instead of being forwarded."""

    def __init__(self, code: int, reason: str, request_id: Any = None) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
        self.request_id = request_id


def _error_json(code: int, message: str, request_id: Any) -> bytes:
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(body, separators=(",", ":")).encode()


def _error_line(code: int, message: str, request_id: Any) -> bytes:
    return _error_json(code, message, request_id) + b"\n"


def _refusal_line(refused: _Refused) -> bytes:
    prefix = "Parse error" if refused.code == PARSE_ERROR else "Invalid Request"
    return _error_line(refused.code, f"{prefix}: {refused.reason}", refused.request_id)


def _no_constants(name: str) -> Any:
    # NaN and Infinity are accepted by Python's json but are not JSON; refusing them here keeps
    # the answer honest instead of echoing values no other parser would read.
    raise ValueError(f"{name} is not JSON")


def _valid_id(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, str | int):
        return True
    # MCP's RequestId is any string or number; 1e400 parses as infinity, which no JSON can carry back.
    return isinstance(value, float) and math.isfinite(value)


def _deeper_than(obj: Any, limit: int) -> bool:
    # Iterative, so depth itself can never exhaust the Python stack.
    stack = [(obj, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
    return False


def _has_lone_surrogate(obj: Any) -> bool:
    try:
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _request_of(obj: dict[str, Any], notification: bool) -> JSONRPCRequest | JSONRPCNotification | None:
    """The SDK's request (a line with an id) or notification (one without) that `obj` is, None when it is not one.

    Validated as that one model, not as the SDK's union of the four kinds of message: of the union's members a
    request line validates only as a request or a notification (no result, no error: replies were told apart before),
    and as both it is taken for the request (the member with the most fields set), so the union gave the expected
    model exactly when that model validates it, for half the work (tested against the union)."""
    try:
        return (JSONRPCNotification if notification else JSONRPCRequest).model_validate(obj)
    except ValidationError:
        return None


async def _put(stream: MemoryObjectSendStream[Any], item: Any) -> None:
    # A queue with room takes the item at once; `send` would first yield a whole turn of the event
    # loop for every line, which is most of the reader's cost in a burst.
    try:
        stream.send_nowait(item)
    except anyio.WouldBlock:
        await stream.send(item)


class _AnswerNow(Exception):
    """A request the transport answers itself (a ping), with the line to send."""

    def __init__(self, data: bytes) -> None:
        self.data = data


class _Wire:
    """The state of one served connection: framing, refusals, and what is still owed an answer."""

    def __init__(
        self,
        source: Source,
        sink: Sink,
        max_line: int,
        max_depth: int,
        drain_timeout: float,
        max_in_flight: int = MAX_IN_FLIGHT,
    ) -> None:
        self.source = source
        self.max_in_flight = max_in_flight
        self.sink = sink
        self.max_line = max_line
        self.max_depth = max_depth
        self.drain_timeout = drain_timeout
        # Plain memory streams: stdio has no per-message sender context (no ASGI middleware) to carry,
        # and the SDK's dispatcher accepts any stream with this shape.
        self.in_send, self.read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](
            _INBOUND_SLACK
        )
        out_send, self.out_recv = anyio.create_memory_object_stream[SessionMessage | bytes](_OUTBOUND_SLACK)
        self.write_stream = _Answers(self, out_send)
        # Our own refusals go through the same writer as the server's answers: one owner of the
        # descriptor, so frames never interleave, and one batching for both.
        self.reply_send = out_send.clone()
        # Client requests forwarded and not yet answered (a multiset: a client may reuse an id).
        self.owed: Counter[int | str] = Counter()
        # Requests the server sent the client and still waits on; after end of input none can come back.
        self.asked: set[int | str] = set()
        # Set (and replaced) whenever an answer settles a request: every waiter wakes and looks again.
        self.changed = anyio.Event()
        # Messages read while MAX_IN_FLIGHT calls were unanswered, in the client's order, with their sizes.
        self.held: deque[tuple[SessionMessage, int]] = deque()
        self.held_bytes = 0
        self.held_requests = 0
        self.writer_done = anyio.Event()
        # The client's first request, once read (still on its way to the server), or None when input ended before
        # one or _OPENING_LEAD other messages came first; `opened` is set then (see `first_request`).
        self.opening: JSONRPCRequest | None = None
        self.opened = anyio.Event()
        self._lead = 0
        # The SDK takes only int or str ids: a fractional one travels under a string alias of ours and is
        # put back in the answer. alias -> the client's id.
        self.aliases: dict[str, float] = {}
        self._next_alias = 0

    # -- input ------------------------------------------------------------------------------------

    async def read_loop(self, scope: anyio.CancelScope) -> None:
        with scope:
            try:
                async with anyio.create_task_group() as forwarding:
                    forwarding.start_soon(self._forward_held)
                    await self._read_lines()
                    await self._drain()
                    forwarding.cancel_scope.cancel()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                # The server stopped reading before end of input; nothing left to serve.
                log.debug("stdio_server_stopped_reading")
            finally:
                self.opened.set()
                self.in_send.close()
                self.reply_send.close()

    async def _read_lines(self) -> None:
        pending = bytearray()  # the start of a line whose newline has not arrived yet
        too_long = False  # inside a line already over the limit: discard until its newline
        while chunk := await self.source.read():
            # New work: an answer still held for the loop's sleep leaves before it (the work may keep the loop busy).
            self.sink.flush_held()
            *complete, tail = chunk.split(b"\n")
            for part in complete:
                if too_long:
                    too_long = False
                    await self._reply(self._refuse_long())
                    continue
                if pending:
                    pending += part
                    line: bytes | bytearray = pending
                    pending = bytearray()
                else:
                    line = part
                await self._line(line)
            if too_long:
                continue
            if len(pending) + len(tail) > self.max_line:
                too_long = True
                pending = bytearray()
            else:
                pending += tail
        # A last line without its newline still counts; so does one cut short over the limit.
        if too_long:
            await self._reply(self._refuse_long())
        elif pending:
            await self._line(pending)

    def _refuse_long(self) -> bytes:
        return self._refusal(_Refused(PARSE_ERROR, f"line longer than {self.max_line} bytes"), self.max_line)

    async def _line(self, line: bytes | bytearray) -> None:
        if len(line) > self.max_line:
            await self._reply(self._refuse_long())
            return
        line = line.strip(_JSON_SPACE)
        if not line:
            return
        try:
            message = self._frame(line)
        except _Refused as refused:
            await self._reply(self._refusal(refused, len(line)))
            return
        except _AnswerNow as answer:
            await self._reply(answer.data + b"\n")
            return
        except Exception as exc:
            # A defect here must cost one frame, never the connection.
            log.warning("stdio_frame_failed", error=type(exc).__name__, size=len(line))
            await self._reply(_error_line(INTERNAL_ERROR, "Internal error", None))
            return
        if message is None:
            return
        inner = message.message
        if not self.opened.is_set():
            self._lead += 1
            if isinstance(inner, JSONRPCRequest) or self._lead > _OPENING_LEAD:
                self.opening = inner if isinstance(inner, JSONRPCRequest) else None
                self.opened.set()
        if isinstance(inner, JSONRPCResponse | JSONRPCError):
            # An answer to the server's own request: a call may be waiting on it, so it never waits.
            await _put(self.in_send, message)
            return
        if not self.held and (not isinstance(inner, JSONRPCRequest) or self._room()):
            await _put(self.in_send, message)
            return
        # Held, in order: a notification behind a held request stays behind it (a cancel names it).
        if isinstance(inner, JSONRPCRequest):
            self.held_requests += 1
            await self._tell_waiting(inner)
        self.held.append((message, len(line)))
        self.held_bytes += len(line)
        self._signal()
        while len(self.held) >= _HELD_MAX or self.held_bytes >= _HELD_BYTES:
            await self.changed.wait()

    def _room(self, held: bool = False) -> bool:
        # Whether one more request may go to the server: those forwarded and not answered yet, with it, against
        # the bound (it is counted in `owed` already, and in `held_requests` when `held`). Calls waiting on an
        # answer from the client are not held against it: that answer must still be read.
        forwarded = self.owed.total() - self.held_requests - len(self.asked) + held
        return forwarded <= self.max_in_flight

    async def _forward_held(self) -> None:
        """Hand the held messages to the server in their order, each request as an answer makes room."""
        while True:
            while self.held and (not isinstance(self.held[0][0].message, JSONRPCRequest) or self._room(held=True)):
                message, size = self.held.popleft()
                self.held_bytes -= size
                if isinstance(message.message, JSONRPCRequest):
                    self.held_requests -= 1
                await _put(self.in_send, message)
                self._signal()
            await self.changed.wait()

    async def _tell_waiting(self, request: JSONRPCRequest) -> None:
        """A held request that asked for progress hears that it waits, and behind how many calls."""
        if not self.held:
            log.info("stdio_calls_waiting", in_flight=self.max_in_flight)
        params = request.params if isinstance(request.params, dict) else {}
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if not isinstance(token, str | int) or isinstance(token, bool):
            return
        ahead = self.owed.total() - len(self.asked) - 1
        note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {
            "progressToken": token, "progress": 0,
            "message": f"waiting: {ahead} calls of this connection are answered first, in the order they came"}}
        await self._reply(json.dumps(note, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")

    def _signal(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    def _frame(self, line: bytes | bytearray) -> SessionMessage | None:
        """The message a line carries, None for a reply not worth forwarding; raises _Refused."""
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            raise _Refused(PARSE_ERROR, "invalid UTF-8") from None
        try:
            obj = json.loads(text, parse_constant=_no_constants)
        except RecursionError:
            raise _Refused(PARSE_ERROR, f"nested deeper than {self.max_depth}") from None
        except ValueError as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "not JSON"
            raise _Refused(PARSE_ERROR, f"invalid JSON ({reason})") from None
        if (
            isinstance(obj, dict | list)
            # Counting brackets bounds the depth from above; only a line with many needs the exact walk.
            and line.count(b"{") + line.count(b"[") > self.max_depth
            and _deeper_than(obj, self.max_depth)
        ):
            raise _Refused(PARSE_ERROR, f"nested deeper than {self.max_depth}")
        if _SURROGATE_ESCAPE.search(line) and _has_lone_surrogate(obj):
            raise _Refused(PARSE_ERROR, "lone UTF-16 surrogate escape (not Unicode)")
        if isinstance(obj, list):
            raise _Refused(INVALID_REQUEST, "batches are not supported (one JSON-RPC message per line)")
        if not isinstance(obj, dict):
            raise _Refused(INVALID_REQUEST, "not a JSON object")

        request_id = obj.get("id", _MISSING)
        id_ok = _valid_id(request_id)
        if isinstance(request_id, float) and id_ok and request_id.is_integer():
            # 1.0 is the number 1; the SDK's id type is strictly int or str.
            request_id = obj["id"] = int(request_id)
        echo = request_id if id_ok else None
        has_method = "method" in obj
        is_reply = "result" in obj or "error" in obj

        if is_reply and not has_method:
            return self._reply_frame(obj, request_id if id_ok else None)
        if is_reply:
            raise _Refused(INVALID_REQUEST, "both a method and a result or error", echo)
        if not has_method:
            raise _Refused(INVALID_REQUEST, "neither a method nor a result or error", echo)
        if obj.get("jsonrpc") != "2.0":
            raise _Refused(INVALID_REQUEST, '"jsonrpc" must be "2.0"', echo)
        if request_id is not _MISSING and not id_ok:
            raise _Refused(INVALID_REQUEST, "id must be a string or a number")
        if obj.get("method") == "ping" and request_id is not _MISSING and isinstance(obj.get("params", {}), dict):
            # Answered here, at once: a client whose calls wait behind others still hears that we are alive.
            raise _AnswerNow(json.dumps({"jsonrpc": "2.0", "id": echo, "result": {}}, separators=(",", ":")).encode())
        if isinstance(request_id, float):
            request_id = obj["id"] = self._alias(request_id)
        elif obj.get("method") == "notifications/cancelled":
            self._unalias_cancel(obj)
        method = obj["method"]
        if not isinstance(method, str):
            raise _Refused(INVALID_REQUEST, "method must be a string", echo)
        if "params" in obj and not isinstance(obj["params"], dict):
            raise _Refused(INVALID_REQUEST, "params must be an object", echo)
        message = _request_of(obj, notification=request_id is _MISSING)
        if message is None:
            raise _Refused(INVALID_REQUEST, "not a JSON-RPC request or notification", echo)
        if isinstance(message, JSONRPCRequest) and method not in _OPEN_ENDED:
            self.owed[message.id] += 1
            hook = partial(self._unanswered, message.id)
            return SessionMessage(message, ServerMessageMetadata(on_request_unanswered=hook))
        return SessionMessage(message)

    def _alias(self, client_id: float) -> str:
        while True:
            self._next_alias += 1
            alias = f"gateway-fractional-id-{self._next_alias}"
            if alias not in self.owed and alias not in self.aliases:
                self.aliases[alias] = client_id
                return alias

    def _unalias_cancel(self, obj: dict[str, Any]) -> None:
        # A client cancelling its fractional-id request names the id it knows; the SDK knows the alias.
        params = obj.get("params")
        wanted = params.get("requestId") if isinstance(params, dict) else None
        if isinstance(wanted, float):
            for alias, client_id in self.aliases.items():
                if client_id == wanted:
                    params["requestId"] = alias
                    return

    def _reply_frame(self, obj: dict[str, Any], request_id: Any) -> SessionMessage | None:
        # A reply is never answered, even a broken one: an error sent back for a reply invites a peer
        # that does the same into an endless exchange. It is logged and dropped instead.
        if obj.get("jsonrpc") == "2.0" and (request_id is not None or "error" in obj):
            try:
                message = jsonrpc_message_adapter.validate_python(obj)
            except ValidationError:
                message = None
            if isinstance(message, JSONRPCResponse | JSONRPCError):
                if message.id is not None:
                    self._settle(self.asked, message.id)
                return SessionMessage(message)
        log.debug("stdio_frame_dropped", reason="malformed reply")
        return None

    def _refusal(self, refused: _Refused, size: int) -> bytes:
        # Never the frame's contents: only what was wrong and how big it was.
        log.debug("stdio_frame_refused", code=refused.code, reason=refused.reason, size=size)
        return _refusal_line(refused)

    async def _reply(self, data: bytes) -> None:
        if not self.write_at_once(data):
            await _put(self.reply_send, data)

    # -- end of input -----------------------------------------------------------------------------

    def _calls_in_flight(self) -> bool:
        owed = self.owed.total()
        # A call left waiting on an answer from the client can no longer get one: those do not hold us.
        return owed > 0 and owed > len(self.asked)

    async def _drain(self) -> None:
        if not self._calls_in_flight():
            return
        log.debug("stdio_eof_draining", in_flight=self.owed.total())
        with anyio.move_on_after(self.drain_timeout) as scope:
            while self._calls_in_flight():
                await self.changed.wait()
        if scope.cancelled_caught:
            log.warning("stdio_eof_drain_timeout", unanswered=self.owed.total(), seconds=self.drain_timeout)

    def _settle(self, table: Counter[int | str] | set[int | str], request_id: int | str) -> None:
        if isinstance(table, Counter):
            if table.get(request_id, 0) <= 0:
                return
            table[request_id] -= 1
            if not table[request_id]:
                del table[request_id]
        elif request_id in table:
            table.discard(request_id)
        else:
            return
        self._signal()

    async def _unanswered(self, request_id: int | str) -> None:
        # The dispatcher settled this request without a response (the client cancelled it).
        self._settle(self.owed, request_id)
        if isinstance(request_id, str):
            self.aliases.pop(request_id, None)

    # -- output -----------------------------------------------------------------------------------

    def write_at_once(self, item: SessionMessage | bytes) -> bool:
        """Give `item` to the sink now (`Sink.write_now`), from the task that gives it, when nothing can be ahead of it
        or join it: the writer task waits with nothing queued, the writer thread has written all it was given, and
        no other call is unanswered. False (nothing done) otherwise: the item goes through the writer's queue.

        A lone call's answer then leaves as the event loop goes to sleep after the turn that made it, instead of two
        turns later (the queue's own yield, then the writer task's wake-up); answers that can be batched still are."""
        if self.owed.total() > 1 or not self.sink.idle or self.writer_done.is_set():
            return False
        waiting = self.out_recv.statistics()
        if waiting.current_buffer_used or not waiting.tasks_waiting_receive:
            return False  # something is queued, or the writer task holds an item it has not handed on yet
        data = self._encode(item)
        if data:
            self.sink.write_now(data)
        return True

    async def write_loop(self) -> None:
        try:
            async with self.out_recv:
                async for item in self.out_recv:
                    parts = [self._encode(item)]
                    size = len(parts[0])
                    # Everything already queued goes out in the same write. While other calls are
                    # still running, one yield first lets those finishing in this same turn of the
                    # event loop join the batch; a lone call is not delayed by it.
                    if self.owed:
                        await anyio.lowlevel.checkpoint()
                    while size < _BATCH_BYTES:
                        try:
                            item = self.out_recv.receive_nowait()
                        except (anyio.WouldBlock, anyio.EndOfStream):
                            break
                        parts.append(self._encode(item))
                        size += len(parts[-1])
                    await self.sink.write(parts[0] if len(parts) == 1 else b"".join(parts))
        finally:
            self.writer_done.set()

    def _encode(self, item: SessionMessage | bytes) -> bytes:
        if isinstance(item, bytes):
            return item
        message = item.message
        try:
            # The SDK's own serialisation (the options it writes messages with), as bytes.
            data = message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        except Exception as exc:
            log.warning("stdio_unencodable_message", kind=type(message).__name__, error=type(exc).__name__)
            request_id = getattr(message, "id", None)
            if isinstance(message, JSONRPCRequest | JSONRPCNotification) or request_id is None:
                return b""
            data = _error_json(
                INTERNAL_ERROR, "Internal error: the response could not be encoded", request_id
            )
        match message:
            case JSONRPCResponse(id=request_id) | JSONRPCError(id=request_id) if request_id is not None:
                self._settle(self.owed, request_id)
                if isinstance(request_id, str) and request_id in self.aliases:
                    body = json.loads(data)
                    body["id"] = self.aliases.pop(request_id)
                    data = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
            case JSONRPCRequest(id=request_id):
                self.asked.add(request_id)
            case JSONRPCNotification(method="notifications/cancelled", params={"requestId": request_id}):
                # The server gave up on one of its own requests.
                if isinstance(request_id, int | str):
                    self._settle(self.asked, request_id)
            case _:
                pass
        return data + b"\n"


class _Answers:
    """The stream the server sends its messages to (the shape of anyio's memory object send stream that the SDK
    uses: `send`, `send_nowait`, `close`, `aclose`, `async with`): each is written at once when nothing is ahead
    of it (`_Wire.write_at_once`), else queued for the writer. A send that writes at once does not yield to the
    event loop first, as a queue's send does."""

    def __init__(self, wire: _Wire, queue: MemoryObjectSendStream[SessionMessage | bytes]) -> None:
        self._wire = wire
        self._queue = queue
        self._closed = False

    def send_nowait(self, item: SessionMessage) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if not self._wire.write_at_once(item):
            self._queue.send_nowait(item)

    async def send(self, item: SessionMessage) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if not self._wire.write_at_once(item):
            await _put(self._queue, item)

    def close(self) -> None:
        self._closed = True
        self._queue.close()

    async def aclose(self) -> None:
        self.close()

    async def __aenter__(self) -> _Answers:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        self.close()


async def first_request(read_stream: Any) -> JSONRPCRequest | None:
    """The client's first request on a read stream `stdio_transport` yielded, once it has been read; it is not taken
    from the stream (the server still gets it, in its order). None when input ended before any, when more than a
    few other messages came before it, or when the stream is not this transport's."""
    wire = _wires.get(read_stream)
    if wire is None:
        return None
    await wire.opened.wait()
    return wire.opening


@asynccontextmanager
async def stdio_transport(
    stdin: int | BinaryIO | None = None,
    stdout: int | BinaryIO | None = None,
    *,
    max_line: int = MAX_LINE,
    max_depth: int = MAX_DEPTH,
    drain_timeout: float = 30.0,
    max_in_flight: int = MAX_IN_FLIGHT,
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
]:
    """Serve JSON-RPC over stdio: yields (read_stream, write_stream) for `Server.run`.

    `stdin`/`stdout` default to the process's fd 0 and 1, which are then pointed at /dev/null and
    stderr while serving (the wire is kept on private duplicates) and restored on exit. A descriptor
    or binary file passed in is used as it is and not closed. `max_line` bounds one line in bytes,
    `max_depth` the nesting of its JSON; `drain_timeout` caps the wait for calls in flight at end of
    input; `max_in_flight` bounds the requests left unanswered before reading pauses.
    """
    if max_line < 1 or max_depth < 1 or max_in_flight < 1:
        raise ValueError("max_line, max_depth and max_in_flight must be positive")
    claims: list[tuple[int, int]] = []
    sink: Sink | None = None
    source: Source | None = None
    try:
        if stdin is None:
            stdin = claim(0)
            claims.append((0, stdin))
        if stdout is None:
            stdout = claim(1)
            claims.append((1, stdout))
        source = Source(stdin, READ_CHUNK)  # read here at each start: tests and benches change it
        sink = Sink(stdout)
        sink.hold_until_sleep()
        wire = _Wire(source, sink, max_line, max_depth, drain_timeout, max_in_flight)
        _wires[wire.read_stream] = wire
        async with anyio.create_task_group() as tg:
            reading = anyio.CancelScope()
            tg.start_soon(wire.read_loop, reading)
            tg.start_soon(wire.write_loop)
            try:
                yield wire.read_stream, cast(MemoryObjectSendStream[SessionMessage], wire.write_stream)
            finally:
                # Stop reading, then let the writer flush what the server already answered, briefly.
                reading.cancel()
                wire.write_stream.close()
                with anyio.move_on_after(_FLUSH_TIMEOUT, shield=True) as flushing:
                    await wire.writer_done.wait()
                    await sink.drain(max(0.0, flushing.deadline - anyio.current_time()))
                tg.cancel_scope.cancel()
    finally:
        if sink is not None:
            sink.restore()
        for fd, private in reversed(claims):
            # A worker thread still blocked on the input keeps its descriptor: closing it could hand
            # the number to an unrelated file under the thread.
            keep = fd == 0 and source is not None and source.thread_busy
            release(fd, private, close_private=not keep)
