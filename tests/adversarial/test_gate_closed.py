"""The gate fails closed, played through a real `gateway serve`: a manifest deleted, emptied, replaced by a broken
link, misspelt in the config, a mistyped GATEWAY_CONFIG, an editor saving the manifest while a host calls."""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from gateway.commands.cli import main
from gateway.testing import serve_client, write_config
from tests.adversarial.gate_probe import CANARY, given, install_probe

CLOSED = "/srv/lawsuit"
MANIFEST = f'# my projects\n[[project]]\nid = "lawsuit"\nname = "Neighbour dispute"\npaths = ["{CLOSED}"]\n'


@pytest.fixture
def home(gateway_home, tmp_path):
    config = {"gateway": {"plugins": ["probe"]}, "access": {"projects": "projects.toml"},
              "plugins": {"probe": {"closed_path": f"{CLOSED}/brief.md"}}}
    write_config(gateway_home, config)
    (manifest_of(gateway_home)).write_text(MANIFEST)
    return gateway_home


@pytest.fixture
def env(tmp_path):
    return install_probe(tmp_path / "site")


def manifest_of(home: Path) -> Path:
    return home / ".config" / "gateway" / "projects.toml"


def config_of(home: Path) -> Path:
    return home / ".config" / "gateway" / "config.toml"


async def everything_refused(client, reason: str) -> list[str]:
    """Every method that gives something, asked for the closed item and an open one: each refused with `reason`."""
    answers = []
    for path in (f"{CLOSED}/brief.md", "/srv/open/plan.md"):
        result = await client.call_tool("probe_path", {"path": path})
        answers.append(given(result))
        assert result.is_error and reason in given(result), given(result)
        with pytest.raises(Exception, match=reason) as refused:
            await client.read_resource(f"probe://items{path}")
        answers.append(str(refused.value))
        with pytest.raises(Exception, match=reason) as refused:
            await client.get_prompt("recall", {"path": path})
        answers.append(str(refused.value))
    with pytest.raises(Exception, match=reason) as refused:
        await client.list_resources()
    answers.append(str(refused.value))
    # tools/list keeps the last good list: the host still knows the tools.
    assert [tool.name for tool in (await client.list_tools()).tools] == ["probe_path", "probe_url", "probe_app"]
    return answers


def test_an_editor_saving_the_manifest_while_a_host_calls_never_opens_the_closed_project(home, env):
    manifest = manifest_of(home)
    stop = threading.Event()
    saves = 0

    def editor():
        nonlocal saves
        rng = random.Random(7)
        while not stop.is_set():
            with open(manifest, "w") as file:  # truncate...
                file.flush()
                time.sleep(rng.uniform(0.0005, 0.005))
                file.write(MANIFEST)  # ...then write, as editors save
            saves += 1
            time.sleep(rng.uniform(0.02, 0.2))

    outcomes = {"refused by the gate": 0, "gate in error": 0}
    leaked: list[str] = []

    async def session():
        async with serve_client(home, extra_env=env) as client:
            assert (await client.call_tool("probe_path", {"path": "/srv/open/a"})).content[0].text.endswith(CANARY)
            thread = threading.Thread(target=editor)
            thread.start()
            try:
                deadline = time.monotonic() + 10
                for _ in range(1500):
                    if time.monotonic() > deadline:
                        break
                    text = given(await client.call_tool("probe_path", {"path": f"{CLOSED}/brief.md"}))
                    if CANARY in text:
                        leaked.append(text)
                    elif "configuration is unusable" in text:
                        outcomes["gate in error"] += 1
                    else:
                        assert "closed to AI agents" in text, text
                        outcomes["refused by the gate"] += 1
            finally:
                stop.set()
                thread.join()
            # Once the editor is done the gate serves again: the open item is given, the closed one not.
            manifest.write_text(MANIFEST)
            await anyio.sleep(0.1)
            assert CANARY in given(await client.call_tool("probe_path", {"path": "/srv/open/a"}))
            assert CANARY not in given(await client.call_tool("probe_path", {"path": f"{CLOSED}/b"}))

    anyio.run(session)
    calls = sum(outcomes.values()) + len(leaked)
    print(f"save race: {calls} calls during {saves} saves: {outcomes}, {len(leaked)} leaked")
    assert saves > 10 and calls > 50
    assert leaked == []


@pytest.mark.parametrize(
    ("breakage", "reason"),
    [
        ("deleted", "does not exist"),
        ("emptied", "is empty"),
        ("broken link", "a link to a file that does not exist"),
        ("misspelt", "projetcs.toml"),
        ("a folder", "cannot be read"),
    ],
)
def test_a_broken_manifest_refuses_every_call_with_the_reason(home, env, breakage, reason):
    manifest = manifest_of(home)

    async def session():
        async with serve_client(home, extra_env=env) as client:
            assert CANARY in given(await client.call_tool("probe_path", {"path": "/srv/open/a"}))
            if breakage == "deleted":
                manifest.unlink()
            elif breakage == "emptied":
                manifest.write_text("")
                stamp = time.time() - 5  # long emptied: no editor mid-save, just an empty file
                os.utime(manifest, (stamp, stamp))
            elif breakage == "broken link":
                manifest.unlink()
                manifest.symlink_to(manifest.parent / "moved-away.toml")
            elif breakage == "a folder":
                manifest.unlink()
                manifest.mkdir()
            else:
                config = config_of(home)
                config.write_text(config.read_text().replace('"projects.toml"', '"projetcs.toml"'))
            answers = await everything_refused(client, reason)
            assert not any(CANARY in answer for answer in answers)

    anyio.run(session)
    doctor = CliRunner().invoke(main, ["doctor"], catch_exceptions=False)
    assert doctor.exit_code == 1 and reason in doctor.output and "All good" not in doctor.output


def test_a_mistyped_gateway_config_refuses_every_call(home, env, tmp_path):
    mistyped = str(tmp_path / "conifg.toml")

    async def session():
        async with serve_client(home, extra_env={**env, "GATEWAY_CONFIG": mistyped}) as client:
            with pytest.raises(Exception, match="conifg.toml"):
                await client.list_resources()
            for path in (f"{CLOSED}/brief.md", "/srv/open/plan.md"):
                result = await client.call_tool("probe_path", {"path": path})
                assert result.is_error and "does not exist" in given(result) and CANARY not in given(result)

    anyio.run(session)
    for args, variables in ((["--config", mistyped, "doctor"], {}), (["doctor"], {"GATEWAY_CONFIG": mistyped})):
        doctor = CliRunner().invoke(main, args, env=variables, catch_exceptions=False)
        assert doctor.exit_code == 1 and "conifg.toml" in doctor.output and "does not exist" in doctor.output
