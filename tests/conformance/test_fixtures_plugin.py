"""The conformance fixtures plugin is test-only: installed in the development environment, it offers nothing
until its table turns it on (not even with no config at all, when every installed plugin is on), and `gateway
setup`'s first config leaves it off. The suite's test proxy adds the token and moves nothing else."""

from __future__ import annotations

from pathlib import Path

from gateway.commands.setup import starter_config
from gateway.testing import make_gateway
from tests.conformance.test_official_suite import _with_token

FIXTURES = {"test_simple_text", "test_error_handling", "json_schema_2020_12_tool"}


def test_installed_it_offers_nothing_without_a_config(tmp_path: Path) -> None:
    gateway = make_gateway(entrypoints=True, home=tmp_path)
    catalogue = gateway.catalogue()
    assert "conformance" in gateway.registry.names()
    assert not FIXTURES & set(catalogue.tools_by_name)
    assert not [r for r in catalogue.resources if r.uri.startswith("test://")]
    assert not [p for p in catalogue.prompts if p.startswith("test_")]


def test_its_table_turns_it_on(tmp_path: Path) -> None:
    gateway = make_gateway(entrypoints=True, home=tmp_path, config={
        "gateway": {"plugins": ["conformance"]}, "plugins": {"conformance": {"enabled": True}}})
    catalogue = gateway.catalogue()
    assert set(catalogue.tools_by_name) >= FIXTURES
    assert {"test_simple_prompt", "test_prompt_with_arguments"} <= set(catalogue.prompts)


def test_setup_leaves_it_off() -> None:
    text = starter_config(["sessions", "cron"], ["conformance", "hello"])
    plugins_line = next(line for line in text.splitlines() if line.startswith("plugins = "))
    assert "conformance" not in plugins_line


def test_the_proxy_adds_the_token_and_keeps_host_and_origin() -> None:
    head = (b"POST /mcp HTTP/1.1\r\nHost: evil.example.com\r\nOrigin: http://evil.example.com\r\n"
            b"Authorization: Bearer forged\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n")
    fields = _with_token(head, "s3cret").split(b"\r\n")
    assert fields[0] == b"POST /mcp HTTP/1.1"
    assert b"Host: evil.example.com" in fields and b"Origin: http://evil.example.com" in fields
    assert b"Content-Length: 2" in fields and b"Connection: close" in fields
    assert [f for f in fields if f.lower().startswith(b"authorization")] == [b"Authorization: Bearer s3cret"]
    assert not [f for f in fields if f.lower().startswith(b"connection: keep")]
