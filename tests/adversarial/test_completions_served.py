"""completion/complete suggests what the person's data has, through a real `gateway serve`, and never what the gate
keeps: a project's page suggests the open projects' ids only; nothing is suggested while the manifest is broken."""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp_types import PromptReference, ResourceTemplateReference

from gateway.testing import serve_client, write_config

PROJECTS = [
    {"id": "garden", "name": "Community garden", "ai": True},
    {"id": "gallery", "name": "Gallery", "ai": True},
    {"id": "grievance", "name": "A closed matter", "ai": False},
]


def test_a_projects_page_suggests_the_open_projects_only(gateway_home: Path) -> None:
    write_config(gateway_home, {"gateway": {"plugins": ["mail", "hello"]}}, projects=PROJECTS)

    async def play() -> tuple[list[str], list[str], list[str]]:
        async with serve_client(gateway_home) as client:
            ref = ResourceTemplateReference(type="ref/resource", uri="sioul:project/{ident}")
            every = (await client.complete(ref, {"name": "ident", "value": ""})).completion.values
            some = (await client.complete(ref, {"name": "ident", "value": "gard"})).completion.values
            prompt = PromptReference(type="ref/prompt", name="greet")
            none = (await client.complete(prompt, {"name": "name", "value": "A"})).completion.values
            return every, some, none

    every, some, none = anyio.run(play)
    assert every == ["gallery", "garden"] and "grievance" not in every
    assert some == ["garden"]
    assert none == []  # a prompt that suggests nothing says nothing


def test_nothing_is_suggested_while_the_manifest_is_broken(gateway_home: Path) -> None:
    write_config(gateway_home, {"gateway": {"plugins": ["mail"]}, "access": {"projects": "projects.toml"}},
                 projects=PROJECTS)
    (gateway_home / ".config" / "gateway" / "projects.toml").write_text("[[project]\nid = ")

    async def play() -> list[str]:
        async with serve_client(gateway_home) as client:
            ref = ResourceTemplateReference(type="ref/resource", uri="sioul:project/{ident}")
            return (await client.complete(ref, {"name": "ident", "value": ""})).completion.values

    assert anyio.run(play) == []
