"""A call never answers from a manifest older than the one saved before it, while file notifications stand in for
the stat of the config, the manifest and the tools lock (a folder quiet since its files last matched their stamps
is not stat'ed): played through a real `gateway serve`, the project opened and closed again and again, each save
followed at once by a call, after enough calls that the notifications are trusted. The manifest saved in place, by
rename, and as a link or a hard link to a file in another folder (whose edits make no event in the manifest's folder)."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from gateway.testing import serve_client, write_config
from tests.adversarial.gate_probe import CANARY, given, install_probe

CLOSED = "/srv/lawsuit"


def manifest_text(open_to_agents: bool) -> str:
    return (f'[[project]]\nid = "lawsuit"\nname = "Neighbour dispute"\npaths = ["{CLOSED}"]\n'
            f"ai = {'true' if open_to_agents else 'false'}\n")


@pytest.fixture
def env(tmp_path):
    return install_probe(tmp_path / "site")


def served(home: Path, env: dict[str, str], save) -> list[tuple[bool, str]]:
    """Warm calls, then 12 saves each followed at once by a call for the project's item: (opened, answer) each."""
    seen: list[tuple[bool, str]] = []

    async def session():
        async with serve_client(home, extra_env=env) as client:
            for _ in range(30):  # the stamps matched again and again: the folders are trusted quiet by now
                assert CANARY not in given(await client.call_tool("probe_path", {"path": f"{CLOSED}/brief.md"}))
            for number in range(12):
                opened = number % 2 == 0
                save(manifest_text(opened))
                seen.append((opened, given(await client.call_tool("probe_path", {"path": f"{CLOSED}/brief.md"}))))

    anyio.run(session)
    return seen


def home_with(gateway_home: Path, manifest: str = "projects.toml") -> Path:
    write_config(gateway_home, {"gateway": {"plugins": ["probe"]}, "access": {"projects": manifest},
                                "plugins": {"probe": {"closed_path": f"{CLOSED}/brief.md"}}})
    return gateway_home / ".config" / "gateway" / "projects.toml"


def check(seen: list[tuple[bool, str]]) -> None:
    for opened, text in seen:
        if opened:
            assert CANARY in text, text
        else:
            assert CANARY not in text and "closed to AI agents" in text, text


def test_a_manifest_saved_in_place_just_before_a_call_is_the_one_it_answers_from(gateway_home, env):
    manifest = home_with(gateway_home)
    manifest.write_text(manifest_text(False))
    check(served(gateway_home, env, manifest.write_text))


def test_a_manifest_saved_by_rename_just_before_a_call_is_the_one_it_answers_from(gateway_home, env):
    manifest = home_with(gateway_home)
    manifest.write_text(manifest_text(False))

    def save(text: str) -> None:
        aside = manifest.with_suffix(".new")
        aside.write_text(text)
        os.replace(aside, manifest)

    check(served(gateway_home, env, save))


def test_a_manifest_linked_to_a_file_elsewhere_is_read_again_when_that_file_changes(gateway_home, env, tmp_path):
    manifest = home_with(gateway_home)
    elsewhere = tmp_path / "dotfiles" / "projects.toml"
    elsewhere.parent.mkdir()
    elsewhere.write_text(manifest_text(False))
    manifest.symlink_to(elsewhere)
    check(served(gateway_home, env, elsewhere.write_text))


def test_a_manifest_hard_linked_to_a_file_elsewhere_is_read_again_when_that_file_changes(gateway_home, env,
                                                                                         tmp_path):
    # An edit through the other name makes no event in the manifest's folder: such a file is stat'ed every call.
    manifest = home_with(gateway_home)
    elsewhere = tmp_path / "dotfiles" / "projects.toml"
    elsewhere.parent.mkdir()
    elsewhere.write_text(manifest_text(False))
    os.link(elsewhere, manifest)
    check(served(gateway_home, env, elsewhere.write_text))
