"""Test helpers for the gateway and its plugins, shipped as a pytest plugin (``-p gateway.testing`` is automatic).

- ``gateway_home``: a temporary HOME with every XDG folder inside it.
- ``make_gateway(plugins=[...], entrypoints=False, config={...}, projects=[...], home=path)``: a gateway
  built from the given plugin modules; ``.call(tool, arguments)`` answers exactly as a host's call would
  (arguments checked, gate, masks, audit), ``.read(uri)``, ``.list_tools()``, ``.list_resources()``.
- ``audit_lines``: the parsed audit log of ``gateway_home``.
- ``computer_zone_is``: call it with an IANA name to make that the computer's zone for the test ($TZ, read by
  the C library and ``gateway.computer_zone``); the zone before is put back after.
- ``serve_client(home, ...)``: the SDK's own client connected to a real ``gateway serve`` subprocess.
- ``check_closed_project(home, plugin=..., canary=..., samples=[Sample(kind, route), ...])``: the closed-project
  check a plugin runs on itself (see ``gateway.canary``): a canary in things placed by each route kind is in no
  answer of any tool, resource or prompt once the project is closed, and lists say they left something out.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from gateway.api.context import home_environment
from gateway.api.items import Answer
from gateway.canary import CanaryLeak, CanaryReport, Sample, check_closed_project
from gateway.engine.audit import AuditLog
from gateway.engine.config import ConfigSource
from gateway.engine.core import Caller, Gateway
from gateway.engine.registry import Registry
from gateway.served import folders_of, listed_resources, read_audit, serve_client, write_config

__all__ = [
    "CanaryLeak", "CanaryReport", "Sample", "TestGateway", "audit_lines", "captured_logs", "check_closed_project",
    "folders_of", "gateway_home", "inline_plugin", "installed_plugin", "listed_resources", "make_gateway",
    "read_audit", "serve_client", "write_config",
]


class TestGateway(Gateway):
    """A Gateway with synchronous helpers for tests."""

    __test__ = False

    def call(self, tool: str, arguments: Mapping[str, Any] | None = None, client: str = "test") -> Answer:
        return anyio.run(self.call_tool, tool, dict(arguments or {}), Caller(client, "1", "test"))

    def read(self, uri: str, client: str = "test") -> Answer:
        answer, _mime = anyio.run(self.read_resource, uri, Caller(client, "1", "test"))
        return answer

    def prompt(self, name: str, arguments: Mapping[str, Any] | None = None) -> Answer:
        return anyio.run(self.get_prompt, name, dict(arguments or {}), Caller("test", "1", "test"))

    def list_tools(self) -> list[str]:
        return [listed.name for listed in self.catalogue().tools]

    def all_resources(self) -> list[dict[str, Any]]:
        found, cursor = [], None
        while True:
            page, cursor = self.list_resources(cursor)
            found.extend(page)
            if not cursor:
                return found


def make_gateway(
    plugins: Iterable[Any] = (),
    *,
    entrypoints: bool = False,
    config: Mapping[str, Any] | None = None,
    projects: Iterable[Mapping[str, Any]] | None = None,
    home: Path,
) -> TestGateway:
    """A gateway on `home`'s folders, with the given plugin modules (and the installed ones if asked)."""
    path = write_config(home, config, projects)
    folders = folders_of(home)
    registry = Registry(folders, plugins=list(plugins), entrypoints=entrypoints)
    return TestGateway(registry, ConfigSource(path), folders, AuditLog(folders.state / "audit"))


def installed_plugin(site: Path, name: str, source: str, version: str = "0.0.1") -> dict[str, str]:
    """Install a plugin written in `source` into the folder `site`, as pip would, for a real `gateway serve`.

    The module `gateway_<name>` and a dist-info announcing it in the `gateway.plugins` group are written
    there; the environment returned (PYTHONPATH) makes the server find it through ordinary discovery. Pass
    it as `serve_client(home, extra_env=...)`; several calls with one `site` install several plugins.
    """
    import textwrap

    module = f"gateway_{name}"
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    dist = site / f"{module}-{version}.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: {version}\n")
    (dist / "entry_points.txt").write_text(f"[gateway.plugins]\n{name} = {module}\n")
    return {"PYTHONPATH": str(site)}


@pytest.fixture
def gateway_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh home in a temporary folder; HOME and XDG_* point inside it for the whole test."""
    home = tmp_path / "home"
    home.mkdir()
    for key, value in home_environment(home).items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("GATEWAY_CONFIG", raising=False)
    return home


@pytest.fixture
def computer_zone_is() -> Iterator[Callable[[str], None]]:
    """Call it with an IANA name ("Europe/Paris") to make that the computer's zone for the rest of the test."""
    before = os.environ.get("TZ")

    def computer_zone_is(name: str) -> None:
        os.environ["TZ"] = name
        time.tzset()

    yield computer_zone_is
    if before is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = before
    time.tzset()


@pytest.fixture
def audit_lines(gateway_home: Path) -> Callable[[], list[dict[str, Any]]]:
    """Call it to get the audit log's entries so far, parsed."""
    return lambda: read_audit(gateway_home)


def inline_plugin(
    name: str,
    *,
    tools: Iterable[Any] = (),
    resources: Iterable[Any] = (),
    templates: Iterable[Any] = (),
    prompts: Iterable[Any] = (),
    settings: type | None = None,
    version: str = "0.0.1",
) -> tuple[str, Any]:
    """A plugin made on the spot from items, for `make_gateway(plugins=[inline_plugin("x", tools=[...])])`;
    `settings` is its settings' pydantic model class."""
    from types import SimpleNamespace

    from gateway.api.hookspecs import hookimpl

    def hook(items: Iterable[Any]) -> Callable[..., list[Any]]:
        frozen_items = list(items)
        return hookimpl(lambda gateway: list(frozen_items))

    plugin = SimpleNamespace(
        __version__=version,
        register_tools=hook(tools),
        register_resources=hook(resources),
        register_resource_templates=hook(templates),
        register_prompts=hook(prompts),
        register_settings=hookimpl(lambda gateway: settings),
    )
    return name, plugin


@pytest.fixture
def captured_logs() -> Iterator[list[dict[str, Any]]]:
    """What the gateway logged during the test, as a list of structlog event dicts."""
    import structlog.testing

    with structlog.testing.capture_logs() as logs:
        yield logs
