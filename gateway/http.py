"""Streamable HTTP on loopback: the SDK's session manager, behind an Origin check and a bearer token."""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
from pathlib import Path
from typing import Any

import click
import structlog

from gateway.core import Gateway

log = structlog.get_logger("gateway.http")


def token_path(gateway: Gateway) -> Path:
    return gateway.folders.state / "http-token"


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
    """ASGI middleware: every request carries `Authorization: Bearer <token>`, or gets 401."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="gateway"')]})
                await send({"type": "http.response.body",
                            "body": b'{"error":"a bearer token is required: see gateway serve --help"}'})
                return
        await self.app(scope, receive, send)


def http_app(gateway: Gateway, host: str, port: int) -> Any:
    from mcp.server.transport_security import TransportSecuritySettings

    from gateway.server import build_server

    server = build_server(gateway, "http")
    names = {host, "127.0.0.1", "localhost", "[::1]"}
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:{port}" for name in names] + [f"{name}:*" for name in names],
        allowed_origins=[f"http://{name}:{port}" for name in names] + [f"http://{name}:*" for name in names],
    )
    app = server.streamable_http_app(host=host, transport_security=security)
    return RequireToken(app, bearer_token(gateway))


def serve_http(gateway: Gateway, address: str) -> None:
    import uvicorn

    host, port = parse_address(address)
    app = http_app(gateway, host, port)
    click.echo(
        f"Serving MCP on http://{host}:{port}/mcp; hosts must send the bearer token kept in "
        f"{token_path(gateway)}",
        err=True,
    )
    uvicorn.run(app, host=host, port=port, log_level="warning")
