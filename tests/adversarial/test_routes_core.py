"""Routes match what the computer means, and a refusal names nothing, played through a real `gateway serve`.

The server runs with a `$HOME` of its own (not the account's), as a host may start it: `~` routes still mean
the account's home too.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import anyio
import pytest

from gateway.testing import serve_client, write_config
from tests.adversarial.gate_probe import CANARY, given, install_probe

ACCOUNT_HOME = pwd.getpwuid(os.getuid()).pw_dir
PRIVATE = "zz-gate-test-private-7f3a"  # under the account's home in name only: nothing is made there


@pytest.fixture
def layout(gateway_home, tmp_path):
    real = tmp_path / "real"
    (real / "lawsuit" / "letters").mkdir(parents=True)
    (real / "garden").mkdir()
    (real / "garden" / "shortcut").symlink_to(real / "lawsuit" / "letters")  # a link into the closed folder
    (tmp_path / "via").symlink_to(real)  # a linked way to everything
    projects = [
        {"id": "garden", "name": "Community garden", "ai": True, "paths": [str(real / "garden")],
         "urls": ["garden.example.org"], "apps": ["Planner"]},
        {"id": "lawsuit", "name": "Neighbour dispute (private)", "paths": [str(real / "lawsuit")]},
        {"id": "vault", "name": "Old vault", "paths": [str(tmp_path / "via" / "vault"), f"~/{PRIVATE}"]},
        {"id": "clinic", "name": "Clinic letters", "urls": ["portal.example.com/records"], "apps": ["Signal"]},
    ]
    (real / "vault").mkdir()
    write_config(gateway_home, {"gateway": {"plugins": ["probe"]},
                                "plugins": {"probe": {"closed_path": str(real / "lawsuit" / "x")}}}, projects=projects)
    return tmp_path, projects


def kept_cases(tmp: Path) -> list[tuple[str, dict[str, str]]]:
    return [
        # A session whose cwd is a link into a closed project.
        ("probe_path", {"path": f"{tmp}/real/garden/shortcut"}),
        ("probe_path", {"path": f"{tmp}/real/garden/shortcut/reply.md"}),
        ("probe_path", {"path": f"{tmp}/real/garden/shortcut/../notes.md"}),
        # The route written through a linked folder, the item carrying the physical path.
        ("probe_path", {"path": f"{tmp}/real/vault/keys.txt"}),
        # `~` in a route: the account's home, whatever $HOME the server was started with.
        ("probe_path", {"path": f"{ACCOUNT_HOME}/{PRIVATE}/diary.md"}),
        # URLs as a browser means them.
        ("probe_url", {"url": "https://PORTAL.Example.COM./records/1"}),
        ("probe_url", {"url": "https://portal.example.com/%72ecords/2"}),
        ("probe_url", {"url": "https://portal.example.com/x/../records//3"}),
        ("probe_url", {"url": "https://portal.example.com:443/./records"}),
        # An app route takes the app's longer names.
        ("probe_app", {"app": "Signal Desktop"}),
        ("probe_app", {"app": "signal-desktop"}),
    ]


def test_routes_take_what_the_computer_means(layout, tmp_path, gateway_home):
    tmp, _projects = layout
    env = {**install_probe(tmp_path / "site"), "HOME": str(tmp_path / "another-home")}

    async def session():
        async with serve_client(gateway_home, extra_env=env) as client:
            for tool, arguments in kept_cases(tmp):
                result = await client.call_tool(tool, arguments)
                assert result.is_error and CANARY not in given(result), (tool, arguments, given(result))
                assert "closed to AI agents" in given(result)
            # What is open stays open: the test can tell a refusal from a broken probe.
            for tool, arguments in [("probe_path", {"path": f"{tmp}/real/garden/plan.md"}),
                                    ("probe_url", {"url": "https://GARDEN.example.org./board"}),
                                    ("probe_app", {"app": "Planner Pro"}),
                                    ("probe_app", {"app": "Signalis"})]:
                result = await client.call_tool(tool, arguments)
                assert not result.is_error and CANARY in given(result), (tool, arguments, given(result))

    anyio.run(session)


def test_a_refusal_over_the_wire_names_no_project(layout, tmp_path, gateway_home):
    tmp, projects = layout
    env = install_probe(tmp_path / "site")
    write_config(gateway_home, {"gateway": {"plugins": ["probe"]}, "access": {"outside_projects": False},
                                "plugins": {"probe": {"closed_path": str(tmp / "real" / "lawsuit" / "x")}}})
    refusals: list[str] = []

    async def session():
        async with serve_client(gateway_home, extra_env=env) as client:
            for tool, arguments in [*kept_cases(tmp), ("probe_path", {"path": "/srv/in-no-project"})]:
                result = await client.call_tool(tool, arguments)
                assert result.is_error
                refusals.append(given(result))
            for path in (f"{tmp}/real/lawsuit/x", f"{tmp}/real/garden/shortcut/y"):
                with pytest.raises(Exception, match="closed to AI agents") as refused:
                    await client.read_resource(f"probe://items{path}")
                refusals.append(str(refused.value))
                with pytest.raises(Exception, match="closed to AI agents") as refused:
                    await client.get_prompt("recall", {"path": path})
                refusals.append(str(refused.value))

    anyio.run(session)
    assert len(refusals) == len(kept_cases(tmp)) + 5
    for text in refusals:
        assert CANARY not in text
        for project in projects:
            assert project["id"] not in text and project["name"] not in text, text
