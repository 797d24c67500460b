"""Where the gateway leans on a library's inner shape, in one place, each checked by `tests/gateway/test_seams.py`
so that an upgrade that changes it fails a test loudly instead of the gateway quietly.

- pydantic: which attributes a `Field(...)` was given explicitly (a tool parameter's `Field` with only a
  description and bounds is published as a plain schema; anything else is refused). pydantic keeps this in
  `FieldInfo._attributes_set`; it has no public name.
- uvicorn: the HTTP protocol class the gateway bounds (`gateway.wire.http.bounded_protocol`) subclasses uvicorn's h11
  protocol, which uvicorn lets a server choose (`Config(http=...)`), and reads its connection set, its current
  request cycle and its transport and loop, as `H11_ATTRIBUTES` lists.
- the MCP SDK: `Server.run` serves a connection through `serve_dual_era_loop`, which reads the client's first
  request to choose the protocol era, then hands every message on through a relay task of its own (a task switch
  and a turn of the event loop more per message). The stdio transport already knows the first request without
  taking it from the stream (`gateway.wire.transport.first_request`), so a handshake-era connection is served by
  what that loop would choose, `mcp.server.runner._serve_legacy_stream`, in the server's lifespan, as `Server.run`
  does, minus the relay; the era is chosen by `mcp.server.runner._has_modern_envelope`, as the SDK chooses it.
  `problems_serving_without_relay` says what of this is no longer so.
- asyncio: the stdio transport writes a lone answer as the event loop goes to sleep, by wrapping the `select` of the
  loop's selector, which asyncio's selector loops keep as `_selector` and ask before every turn (with a timeout of
  0 when work is ready). `loop_selector` reads it; `selector_loop_problems` says when asyncio no longer has it.
- signal: a quick tool's run on the loop checks that its timer's handler is in place (`signal_handler`) through
  `_signal.getsignal`, the C function `signal.getsignal` wraps: Python 3.11's public one then looks the handler up
  among `signal.Handlers`' members, raising and catching a ValueError for every function handler (4 us, more than a
  quick tool's whole run). `signal_handler_problems` says when the two no longer agree.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

# What bounded_protocol reads or overrides of uvicorn's H11Protocol.
H11_ATTRIBUTES = ("connections", "cycle", "transport", "loop")
H11_METHODS = ("connection_made", "data_received", "on_response_complete", "connection_lost")


def explicit_field_attributes(info: Any) -> frozenset[str]:
    """The attributes a pydantic `FieldInfo` was given explicitly (`description`, `default`, `alias`...), its bounds
    aside (they are in `info.metadata`)."""
    return frozenset(info._attributes_set)  # noqa: SLF001 - the one place pydantic's inner shape is read


def h11_shape_problems() -> list[str]:
    """What the gateway needs of uvicorn's h11 protocol and it no longer has ([] when all is there)."""
    import inspect

    from uvicorn.protocols.http.h11_impl import H11Protocol

    source = inspect.getsource(H11Protocol)
    problems = [f"H11Protocol has no method {name}" for name in H11_METHODS if not callable(getattr(H11Protocol, name,
                                                                                                      None))]
    problems += [f"H11Protocol no longer sets self.{name}" for name in H11_ATTRIBUTES if f"self.{name} =" not in source
                 and f"self.{name}:" not in source]
    return problems


def loop_selector(loop: Any) -> Any | None:
    """The selector an asyncio selector loop asks before each turn, or None (another kind of loop)."""
    selector = getattr(loop, "_selector", None)  # the one place asyncio's inner shape is read
    return selector if callable(getattr(selector, "select", None)) else None


def selector_loop_problems() -> list[str]:
    """What `loop_selector` counts on in asyncio and it no longer has ([] when all is there): a new event loop with
    a selector whose `select` its turn calls."""
    import asyncio
    import inspect

    loop = asyncio.new_event_loop()
    try:
        problems = [] if loop_selector(loop) is not None else ["asyncio's event loop keeps no _selector with select"]
        run_once = getattr(type(loop), "_run_once", None)
        if run_once is None or "self._selector.select(" not in inspect.getsource(run_once):
            problems.append("asyncio's loop turn no longer asks self._selector.select")
        return problems
    finally:
        loop.close()


def _c_getsignal() -> Any:
    try:
        from _signal import getsignal  # the one place the signal module's C half is reached
    except ImportError:  # another Python: the public function
        from signal import getsignal
    return getsignal


# The handler in place for a signal, as `signal.getsignal` gives it (see the module's text).
signal_handler = _c_getsignal()


def signal_handler_problems() -> list[str]:
    """Where `signal_handler` and `signal.getsignal` disagree ([] when they agree): for a function handler, the
    default and ignoring, on a signal nothing else uses here (SIGUSR2), its handler put back after."""
    import signal

    problems = []
    before = signal.getsignal(signal.SIGUSR2)

    def handler(signum: int, frame: Any) -> None:
        return None

    try:
        for setting in (handler, signal.SIG_DFL, signal.SIG_IGN):
            signal.signal(signal.SIGUSR2, setting)
            if signal_handler(signal.SIGUSR2) != signal.getsignal(signal.SIGUSR2):
                problems.append(f"the handler read for {setting!r} is {signal_handler(signal.SIGUSR2)!r}")
    finally:
        signal.signal(signal.SIGUSR2, before)
    return problems


def opens_modern_era(request: Any) -> bool:
    """Whether a connection whose first request is `request` (a JSONRPCRequest) serves the 2026-07-28 era, as the
    SDK's `serve_dual_era_loop` decides it."""
    from mcp.server import runner

    return request.method != "initialize" and runner._has_modern_envelope(request.params)  # noqa: SLF001


def serve_handshake_era(server: Any, read_stream: Any, write_stream: Any, init_options: Any) -> Awaitable[None]:
    """Serve a handshake-era connection as `Server.run` would (its lifespan entered, the SDK's handshake-era loop,
    the write stream closed at the end), without the relay task `serve_dual_era_loop` puts before it. Only for a
    connection whose first request does not open the modern era (`opens_modern_era`)."""
    from mcp.server import runner

    async def serve() -> None:
        async with server.lifespan(server) as state:
            try:
                await runner._serve_legacy_stream(  # noqa: SLF001 - the one place the SDK's era loop is reached
                    server, read_stream, write_stream, lifespan_state=state, session_id=None,
                    init_options=init_options, raise_exceptions=False)
            finally:
                await write_stream.aclose()

    return serve()


def problems_serving_without_relay() -> list[str]:
    """What `serve_handshake_era` and `opens_modern_era` count on in the SDK and it no longer has ([] when all is
    there): the functions and their parameters, `Server.run` entering the lifespan around `serve_dual_era_loop`,
    and that loop choosing the era by the first request's envelope and serving the handshake era with
    `_serve_legacy_stream`."""
    import inspect

    from mcp.server import runner
    from mcp.server.lowlevel.server import Server

    problems = []
    legacy = getattr(runner, "_serve_legacy_stream", None)
    if legacy is None or not inspect.iscoroutinefunction(legacy):
        return ["mcp.server.runner._serve_legacy_stream is gone"]
    wanted = ["server", "read_stream", "write_stream", "lifespan_state", "session_id", "init_options",
              "raise_exceptions"]
    if list(inspect.signature(legacy).parameters) != wanted:
        problems.append(f"_serve_legacy_stream takes {list(inspect.signature(legacy).parameters)}, not {wanted}")
    if not callable(getattr(runner, "_has_modern_envelope", None)):
        problems.append("mcp.server.runner._has_modern_envelope is gone")
    run = inspect.getsource(Server.run)
    if "self.lifespan(self)" not in run or "serve_dual_era_loop(" not in run:
        problems.append("Server.run no longer enters self.lifespan(self) around serve_dual_era_loop")
    dual = inspect.getsource(runner.serve_dual_era_loop)
    for said in ('opening.method != "initialize" and _has_modern_envelope(opening.params)', "_serve_legacy_stream(",
                 "_serve_modern_stream(", "await write_stream.aclose()"):
        if said not in dual:
            problems.append(f"serve_dual_era_loop no longer has {said!r}")
    return problems
