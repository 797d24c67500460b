"""Streamable HTTP on loopback: the SDK's session manager, behind an Origin check and a bearer token, with every
connection and session bounded so that no client, with the token or without, can take the server down."""

from __future__ import annotations

import errno
import hmac
import ipaddress
import json
import os
import secrets
import socket
import time
from pathlib import Path
from typing import Any

import click

from gateway.engine.core import Gateway
from gateway.engine.log import get_logger
from gateway.engine.tokens import DEFAULT_NAME, TOKEN_SCOPE_KEY, TokenStore

log = get_logger("gateway.wire.http")

# Connections open at once. Past it, the one idle the longest is closed to make room; when none is idle (all are
# busy with a request), the new one is closed. Kept well below the usual limit of 1,024 open files.
MAX_CONNECTIONS = 256
# Seconds a connection has to send a whole request line and headers, from when it opens or its last answer ends.
HEADER_TIMEOUT = 10.0
# Seconds an idle kept-alive connection stays open between two requests.
KEEP_ALIVE_TIMEOUT = 5
# Bytes of a request line and headers, at most (h11's own bound on an incomplete event).
MAX_HEADER_BYTES = 64 * 1024
# MCP sessions alive at once; past it a new one is refused (503, with a sentence). A host keeps one.
MAX_SESSIONS = 100
# Seconds without a request after which a session ends (its memory freed); the host starts a new one.
SESSION_IDLE_TIMEOUT = 600.0


TOKEN_FILE = "http-token"


class AddressInUse(Exception):
    """The address cannot be served (a port in use, an address not on this computer); the message says what to do."""


def token_path(gateway: Gateway) -> Path:
    return gateway.folders.state / TOKEN_FILE


def bearer_token(gateway: Gateway) -> str:
    """The token hosts must send; made on first use and kept readable by the person alone."""
    path = token_path(gateway)
    try:
        token = path.read_text().strip()
        if token:
            return token
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(token + "\n")
    return token


def parse_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
        if not 0 < number < 65536:
            raise ValueError
    except ValueError:
        raise click.BadParameter(f"{address!r}: give HOST:PORT, e.g. 127.0.0.1:8765", param_hint="--http") from None
    if host != "localhost":
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise click.BadParameter(
                f"{host} is not a loopback address; the gateway serves HTTP on this computer only "
                "(127.0.0.1, ::1 or localhost)",
                param_hint="--http",
            )
    return host, number


class RequireToken:
    """ASGI middleware: every request carries `Authorization: Bearer <token>`, or gets 401.

    The token is the served one (the file http-token: the profile `serve --profile` names, or none) or one of
    the named tokens of `gateway token add` (gateway.engine.tokens: the profile it names), looked up again on every
    request, so a token revoked is refused from the next request on. The one accepted is left in the request's
    scope (`TOKEN_SCOPE_KEY`: its name and profile) for the server's handlers, which serve that profile.

    The scheme's name is read whatever its case (`bearer`, `BEARER`: RFC 7235 section 2.1 makes it
    case-insensitive), with the spaces around the token ignored; the token itself is compared exactly, in constant
    time.
    """

    def __init__(self, app: Any, token: str, token_file: Path, store: TokenStore | None = None) -> None:
        self.app = app
        self.expected = token.encode()
        self.store = store
        self.refusal = json.dumps({
            "error": f"a bearer token is required: send the header `Authorization: Bearer TOKEN`, TOKEN being the "
                     f"line kept in {token_file} on the computer the gateway runs on, or a token made by `gateway "
                     f"token add` (one revoked is refused)",
        }).encode()

    def accepted(self, given: bytes) -> tuple[str, str | None] | None:
        """(name, profile) of the token presented, profile None for the served one; None for no token of ours."""
        if hmac.compare_digest(given, self.expected):
            return DEFAULT_NAME, None
        try:
            found = self.store.find(given) if self.store is not None and given else None
        except OSError as error:  # the tokens folder cannot be read: no named token is accepted meanwhile
            log.error("the tokens folder cannot be read", folder=str(self.store.folder), error=str(error))
            found = None
        return (found.name, found.profile) if found is not None else None

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scheme, _space, given = dict(scope.get("headers") or []).get(b"authorization", b"").strip().partition(b" ")
            accepted = self.accepted(given.strip()) if scheme.lower() == b"bearer" else None
            if accepted is None:
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="gateway"')]})
                await send({"type": "http.response.body", "body": self.refusal})
                return
            scope[TOKEN_SCOPE_KEY] = accepted
        await self.app(scope, receive, send)


class ExplainRefusal:
    """ASGI middleware: the session manager's 503 (too many sessions) said as a sentence a person can act on."""

    SENTENCE = (
        f"The gateway already has {MAX_SESSIONS} MCP sessions open, its limit. End one (an HTTP DELETE with its "
        f"Mcp-Session-Id), or wait: a session idle for {SESSION_IDLE_TIMEOUT / 60:g} minutes ends on its own."
    )

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = False

        async def say_why(message: dict) -> None:
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] == 503:
                refused = True
                return
            if refused and message["type"] == "http.response.body":
                if message.get("more_body"):
                    return
                body = json.dumps({"jsonrpc": "2.0", "id": None,
                                   "error": {"code": -32000, "message": self.SENTENCE}}).encode()
                await send({"type": "http.response.start", "status": 503,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode()), (b"retry-after", b"60")]})
                await send({"type": "http.response.body", "body": body})
                return
            await send(message)

        await self.app(scope, receive, say_why)


def bounded_protocol() -> type:
    """uvicorn's h11 protocol with a header deadline and a bound on open connections (uvicorn has neither: an
    open connection that never sends a byte is kept for ever, and `limit_concurrency` only answers requests)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class BoundedH11(H11Protocol):
        _header_timer: Any = None
        _idle_since = 0.0

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._waiting_for_headers()
            # Closed connections stay in the set until the loop's next turn: they are not counted, nor closed again.
            open_ones = [c for c in self.connections if not c.transport.is_closing()]
            if len(open_ones) > MAX_CONNECTIONS:
                idle = [c for c in open_ones if c is not self and not _busy(c)]
                victim = min(idle, key=lambda c: getattr(c, "_idle_since", 0.0)) if idle else self
                log.debug("too many HTTP connections: closing one", idle=victim is not self, limit=MAX_CONNECTIONS)
                victim.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if _busy(self):
                self._stop_timer()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not _busy(self):
                self._waiting_for_headers()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_timer()
            super().connection_lost(exc)

        def _waiting_for_headers(self) -> None:
            self._idle_since = time.monotonic()
            self._stop_timer()
            self._header_timer = self.loop.call_later(HEADER_TIMEOUT, self._headers_late)

        def _stop_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_late(self) -> None:
            self._header_timer = None
            if not _busy(self) and not self.transport.is_closing():
                self.transport.close()

    return BoundedH11


def _busy(connection: Any) -> bool:
    """Whether a request is being served on this connection (its headers came, its answer has not ended)."""
    cycle = getattr(connection, "cycle", None)
    return cycle is not None and not cycle.response_complete


def http_app(gateway: Gateway, host: str, port: int) -> Any:
    from mcp.server.transport_security import TransportSecuritySettings

    from gateway.wire.server import build_server, notifier_for, notifying_lifespan

    # Subscriptions and notifications for the Streamable HTTP sessions (the handshake era: a session's GET stream
    # carries them; the 2026-07-28 era: the response stream of its subscriptions/listen request).
    notifier = notifier_for(gateway)
    server = build_server(gateway, "http", notifier)
    server.lifespan = notifying_lifespan(gateway, notifier)
    names = {host, "127.0.0.1", "localhost", "[::1]"}
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:{port}" for name in names] + [f"{name}:*" for name in names],
        allowed_origins=[f"http://{name}:{port}" for name in names] + [f"http://{name}:*" for name in names],
    )
    app = server.streamable_http_app(
        host=host,
        transport_security=security,
        max_sessions=MAX_SESSIONS,
        session_idle_timeout=SESSION_IDLE_TIMEOUT,
    )
    return RequireToken(ExplainRefusal(app), bearer_token(gateway), token_path(gateway),
                        TokenStore.of_state(gateway.folders.state))


def bind(host: str, port: int) -> socket.socket:
    """The socket, bound (a port in use fails here, with a sentence: AddressInUse) but not yet listening.

    uvicorn makes it listen once the server is ready, so a client that can connect is served at once.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    if host == "localhost":
        host = "127.0.0.1"
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        # As uvicorn does: a port whose last connections linger in TIME_WAIT can be bound again at once.
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        return listener
    except OSError as error:
        listener.close()
        if error.errno == errno.EADDRINUSE:
            raise AddressInUse(
                f"{host}:{port} is already in use (another gateway, or another program): choose another port, "
                f"e.g. --http {host}:{port + 1 if port < 65535 else 8765}"
            ) from None
        raise AddressInUse(f"cannot serve on {host}:{port}: {error.strerror or error}") from None


def serve_http(gateway: Gateway, address: str) -> None:
    """Serve until interrupted; raises AddressInUse (nothing announced, no plugin started) when the port is taken."""
    import uvicorn

    from gateway.engine.registry import lifecycle_of

    host, port = parse_address(address)
    bearer_token(gateway)  # made before the port opens: whoever can connect can then find it
    listener = bind(host, port)
    port = listener.getsockname()[1]  # the one chosen, when given 0
    app = http_app(gateway, host, port)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        http=bounded_protocol(),
        timeout_keep_alive=KEEP_ALIVE_TIMEOUT,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        # A backstop for requests being served at once; connections are bounded by the protocol above.
        limit_concurrency=MAX_CONNECTIONS + 16,
    )
    lifecycle = lifecycle_of(gateway)
    shown = f"[{host}]" if ":" in host else host

    class Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            try:
                await super().startup(sockets)
            except OSError as error:  # another process bound the port too and listened first
                raise AddressInUse(f"{host}:{port} cannot be listened on ({error.strerror or error}): choose "
                                   "another port") from None
            if self.started and not self.should_exit:
                # Said once the socket listens: a host told this address can connect from now on.
                click.echo(
                    f"Serving MCP on http://{shown}:{port}/mcp; hosts must send the bearer token kept in "
                    f"{token_path(gateway)}",
                    err=True,
                )

        # uvicorn raises SIGINT/SIGTERM again once it has shut down, ending the process there: the plugins'
        # shutdown must run inside its own shutdown, not after `run` returns.
        async def shutdown(self, sockets: Any = None) -> None:
            await super().shutdown(sockets)
            lifecycle.stop()

    lifecycle.start()  # before the first request is read, as on stdio
    try:
        with listener:
            Server(config).run(sockets=[listener])
    finally:
        lifecycle.stop()  # a failed start ends it too; stop() runs once whatever calls it
