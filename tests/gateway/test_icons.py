"""Icons: every built-in ships a small, inert SVG; the core gives it as a data URI on each of that plugin's tools,
resources, templates and prompts (and the gateway's own on its Implementation info) to hosts whose revision knows
icons, and to no other; an icon holding a script or a reference outside itself is refused, and its plugin serves
without one."""

from __future__ import annotations

import base64
import importlib.metadata
import textwrap
from pathlib import Path

import anyio
import pytest

from gateway.api.icons import (
    MAX_ICON_BYTES,
    IconRefused,
    checked_svg,
    gateway_icon,
    icon_from_svg,
    packaged_icon,
)
from gateway.served import listed_resources, serve_client
from gateway.testing import write_config
from tests.gateway.test_spec_schema import RawClient

BUILT_INS = sorted(entry.value for entry in importlib.metadata.distribution("mcp-gateway").entry_points
                   if entry.group == "gateway.plugins")
PLAIN = b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle cx="12" cy="12" r="9"/></svg>'


def _svg(inner: str, attributes: str = "") -> bytes:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
            f'viewBox="0 0 24 24" {attributes}>{inner}</svg>').encode()


@pytest.mark.parametrize("package", [*BUILT_INS, "gateway"])
def test_each_built_in_ships_a_small_svg_that_passes_the_checks(package: str) -> None:
    icon = packaged_icon(package)
    assert icon is not None, f"{package} ships no usable icon.svg"
    assert icon.mime_type == "image/svg+xml" and icon.sizes == ("any",)
    prefix = "data:image/svg+xml;base64,"
    assert icon.src.startswith(prefix)
    svg = base64.b64decode(icon.src[len(prefix):])
    assert len(svg) < 1024 and svg.lstrip().startswith(b"<svg")


def test_a_plain_picture_is_accepted_and_given_as_a_data_uri() -> None:
    assert checked_svg(PLAIN) == PLAIN
    icon = icon_from_svg(PLAIN)
    assert base64.b64decode(icon.src.split(",", 1)[1]) == PLAIN
    assert checked_svg(_svg('<defs><linearGradient id="g"/></defs><rect fill="url(#g)" width="4" height="4"/>'
                            '<use href="#g"/>'))  # references inside the document itself are fine


@pytest.mark.parametrize("svg, said", [
    (_svg("<script>alert(1)</script>"), "<script"),
    (_svg("<SCRIPT>alert(1)</SCRIPT>"), "<script"),
    (_svg('<circle r="4"/>', 'onload="alert(1)"'), "event handler"),
    (_svg('<image href="https://tracker.example.com/pixel.png" width="1" height="1"/>'), "outside itself"),
    (_svg('<use xlink:href="file:///etc/passwd#x"/>'), "outside itself"),
    (_svg('<rect fill="url(https://example.com/p.svg#g)" width="4" height="4"/>'), "outside itself"),
    (_svg('<style>rect { fill: url("https://example.com/x") }</style><rect width="4" height="4"/>'), "outside"),
    (_svg('<style>@import "https://example.com/a.css";</style>'), "@import"),
    (_svg('<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">hi</div></foreignObject>'), "foreignobject"),
    (_svg('<a href="javascript:alert(1)"><circle r="4"/></a>'), "javascript:"),
    (b'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaa">]><svg xmlns="http://www.w3.org/2000/svg">&a;</svg>',
     "<!doctype"),
    (b"<html><body>not a picture</body></html>", "root element"),
    (b'<svg xmlns="http://www.w3.org/2000/svg"><circle r="4">', "well-formed"),
    (b"\xff\xfe<svg/>", "UTF-8"),
    (_svg("<!--" + "x" * MAX_ICON_BYTES + "-->"), "at most"),
])
def test_an_unfit_icon_is_refused_with_the_reason(svg: bytes, said: str) -> None:
    with pytest.raises(IconRefused) as refused:
        checked_svg(svg)
    assert said.lower() in str(refused.value).lower()


def _icon_package(site: Path, name: str, svg: bytes) -> dict[str, str]:
    """A plugin installed as pip would install a package that ships `svg` as its icon.svg."""
    package = site / f"gateway_{name}"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent('''
        from gateway import Prompt, Resource, Tool, hookimpl

        def shout(word: str) -> str:
            """The word, loud."""
            return word.upper()

        @hookimpl
        def register_tools(gateway):
            return [Tool.from_function(shout, read_only=True)]

        @hookimpl
        def register_resources(gateway):
            return [Resource(uri="loud://about", name="about", read=lambda ctx: "loud words")]

        @hookimpl
        def register_prompts(gateway):
            return [Prompt(name="be_loud", render=lambda ctx: "Say it loud.", description="Loudly.")]
    '''))
    (package / "icon.svg").write_bytes(svg)
    dist = site / f"gateway_{name}-0.0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: gateway-{name}\nVersion: 0.0.1\n")
    (dist / "entry_points.txt").write_text(f"[gateway.plugins]\n{name} = gateway_{name}\n")
    return {"PYTHONPATH": str(site)}


def test_served_icons_reach_every_thing_of_each_plugin(gateway_home: Path, tmp_path: Path) -> None:
    env = _icon_package(tmp_path / "site", "loud", PLAIN)
    write_config(gateway_home, {"gateway": {"plugins": ["cron", "timeline", "loud"]}})
    timeline = packaged_icon("gateway_timeline")
    assert timeline is not None

    async def play():
        async with serve_client(gateway_home, extra_env=env) as client:
            info = (client.protocol_version, client.server_info)
            tools = (await client.list_tools()).tools
            resources = await listed_resources(client)
            templates = (await client.list_resource_templates()).resource_templates
            prompts = (await client.list_prompts()).prompts
            called = await client.call_tool("shout", {"word": "hi"})
            return info, tools, resources, templates, prompts, called

    info, tools, resources, templates, prompts, called = anyio.run(play)
    version, server_info = info
    assert version == "2025-11-25"
    own = gateway_icon()
    assert own is not None and [i.src for i in server_info.icons or []] == [own.src]
    loud = icon_from_svg(PLAIN).src

    def srcs(thing) -> list[str]:
        return [icon.src for icon in thing.icons or []]

    by_name = {tool.name: tool for tool in tools}
    assert srcs(by_name["get_timeline"]) == [timeline.src]
    assert srcs(by_name["rousseau_cron_list"]) == [packaged_icon("gateway_cron").src]
    assert all(icon.mime_type == "image/svg+xml" and icon.sizes == ["any"] for t in tools for icon in t.icons or [])
    assert srcs(next(r for r in resources if r.uri == "loud://about")) == [loud]
    assert srcs(next(r for r in resources if r.uri == "timeline://recent")) == [timeline.src]
    assert all(srcs(t) for t in templates) and srcs(next(p for p in prompts if p.name == "be_loud")) == [loud]
    assert srcs(next(p for p in prompts if p.name == "resume_my_work")) == [timeline.src]
    assert srcs(by_name["shout"]) == [loud] and not called.is_error


@pytest.mark.parametrize("svg", [_svg("<script>fetch('https://example.com')</script>"),
                                 _svg('<image href="https://tracker.example.com/p.png"/>')])
def test_a_hostile_icon_is_left_off_and_its_plugin_still_serves(gateway_home: Path, tmp_path: Path,
                                                                 svg: bytes) -> None:
    env = _icon_package(tmp_path / "site", "sneaky", svg)
    write_config(gateway_home, {"gateway": {"plugins": ["sneaky"]}})

    async def play():
        async with serve_client(gateway_home, extra_env=env) as client:
            tools = (await client.list_tools()).tools
            prompts = (await client.list_prompts()).prompts
            called = await client.call_tool("shout", {"word": "hi"})
            return tools, prompts, called

    tools, prompts, called = anyio.run(play)
    assert [t.name for t in tools] == ["shout"] and tools[0].icons is None
    assert prompts[0].icons is None
    assert not called.is_error and called.content[0].text == "HI"


def test_a_revision_that_does_not_know_icons_is_given_none_and_the_pinned_hashes_do_not_move(
    gateway_home: Path,
) -> None:
    write_config(gateway_home, {"gateway": {"plugins": ["cron", "timeline"]}})
    seen = {}
    for revision in ("2025-06-18", "2025-11-25"):
        client = RawClient(gateway_home, revision)
        try:
            started = client.request("initialize", {"protocolVersion": revision, "capabilities": {},
                                                    "clientInfo": {"name": "icons", "version": "1"}})["result"]
            client.notify("notifications/initialized")
            tools = client.request("tools/list")["result"]["tools"]
            resources = client.request("resources/list")["result"]["resources"]
            templates = client.request("resources/templates/list")["result"]["resourceTemplates"]
            prompts = client.request("prompts/list")["result"]["prompts"]
        finally:
            client.close()
        things = [*tools, *resources, *templates, *prompts]
        seen[revision] = (started, tools, things)
    old_start, old_tools, old_things = seen["2025-06-18"]
    new_start, new_tools, new_things = seen["2025-11-25"]
    assert "icons" not in old_start["serverInfo"] and not any("icons" in thing for thing in old_things)
    assert new_start["serverInfo"]["icons"] and all(thing.get("icons") for thing in new_things)
    # Icons are not part of a definition as `gateway lock` pins it: the hash a host may pin is the same either way.
    assert [t["_meta"] for t in old_tools] == [t["_meta"] for t in new_tools]
