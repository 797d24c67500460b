"""A gateway home as tests and kits use it: its folders, a config and manifest written into it, its audit read
back, and the MCP SDK's own client talking to a real `gateway serve` on it. Shared by `gateway.testing` (the pytest
plugin) and `gateway.canary` (the closed-project kit), which both re-export it."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import tomli_w

from gateway.api.context import Folders, home_environment
from gateway.engine.audit import AuditLog


def folders_of(home: Path) -> Folders:
    env = home_environment(home)
    return Folders(
        config=Path(env["XDG_CONFIG_HOME"]) / "gateway",
        data=Path(env["XDG_DATA_HOME"]) / "gateway",
        state=Path(env["XDG_STATE_HOME"]) / "gateway",
        cache=Path(env["XDG_CACHE_HOME"]) / "gateway",
    )


def write_config(
    home: Path, config: Mapping[str, Any] | None = None, projects: Iterable[Mapping[str, Any]] | None = None
) -> Path:
    """Write config.toml (and projects.toml when `projects` is given) in `home`'s gateway config folder."""
    folder = folders_of(home).config
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.toml"
    if config is not None:
        path.write_text(tomli_w.dumps(dict(config)))
    if projects is not None:
        (folder / "projects.toml").write_text(tomli_w.dumps({"project": [dict(p) for p in projects]}))
    return path


def read_audit(home: Path) -> list[dict[str, Any]]:
    return list(AuditLog(folders_of(home).state / "audit").read())


@asynccontextmanager
async def serve_client(
    home: Path,
    *,
    mode: str = "legacy",
    extra_env: Mapping[str, str] | None = None,
    client_name: str = "test-host",
    message_handler: Any = None,
    config: Path | None = None,
) -> AsyncIterator[Any]:
    """The SDK's own client, talking to a real `gateway serve` subprocess whose home is `home`.

    `config`: run `gateway --config CONFIG serve`, as a host pointed at a config elsewhere does. The server is
    started with `gateway_command()` (GATEWAY_TEST_LAUNCHER, when set, replaces `python -m gateway`).
    """
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp_types import Implementation

    env = {"PATH": os.environ.get("PATH", ""), **home_environment(home), **(extra_env or {})}
    chosen = ["--config", str(config)] if config is not None else []
    command = gateway_command()
    params = StdioServerParameters(command=command[0], args=[*command[1:], *chosen, "serve"], env=env)
    # The SDK's default for the server's stderr is whatever sys.stderr was when mcp.client.stdio was first
    # imported: under click's CliRunner that is a stream with no descriptor, and every later launch fails.
    async with Client(
        stdio_client(params, errlog=_errlog()), mode=mode, client_info=Implementation(name=client_name, version="1.0"),
        read_timeout_seconds=60, message_handler=message_handler,
    ) as client:
        yield client


def gateway_command() -> list[str]:
    """The command that starts `python -m gateway` (its arguments follow): this Python's, or, when the environment
    variable GATEWAY_TEST_LAUNCHER is set (a command prefix, split as a shell would), that command: the test
    suite sets it to a faster launcher of the same program. `serve_client`, `gateway selftest` and `gateway demo`
    start their servers with it."""
    launcher = os.environ.get("GATEWAY_TEST_LAUNCHER")
    return shlex.split(launcher) if launcher else [sys.executable, "-m", "gateway"]


def _errlog() -> Any:
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return sys.__stderr__
    return sys.stderr


async def listed_resources(client: Any) -> list[Any]:
    """Every resource an SDK client is given by `resources/list`, following the cursors to the end."""
    resources: list[Any] = []
    page = await client.list_resources()
    resources.extend(page.resources)
    while page.next_cursor:
        page = await client.list_resources(cursor=page.next_cursor)
        resources.extend(page.resources)
    return resources
