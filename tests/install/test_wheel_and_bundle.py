"""One-click install: the wheel built from this tree installs into an empty environment, where `gateway demo` runs
and `gateway serve` answers tools/list to the SDK's own client; `gateway bundle` writes an MCP Bundle whose manifest
is valid by the MCPB schema and whose launcher maps its settings to a config the gateway serves with; `server.json`
says what the MCP Registry needs and matches the README's `mcp-name` line.

The environment is made once for the whole run and shared by every worker (a file lock in the run's temporary root
lets the first worker make it and the others wait for it): the wheel built by the build backend (hatchling, from the
package index, in an isolated build environment), an empty venv, and the wheel with its `[all]` extra installed into
it from the index. uv (a test dependency) builds and installs when it is there, with the package sources pip is
configured with: a minute or two less than pip on two cores, its own cache making it quick after the first run;
pip does the same work when uv is missing.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from gateway_mail.demo import write_maildir

from gateway.api.context import home_environment

# Building the wheel and installing it with its extras takes minutes on a loaded machine: more than the suite's
# default bound of 120 s a test, which is for tests that run the gateway alone.
pytestmark = pytest.mark.timeout(900)

ROOT = Path(__file__).resolve().parents[2]
MCPB_SCHEMA = ROOT / "tests" / "data" / "mcpb" / "mcpb-manifest-v0.4.schema.json"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
PIP_SECONDS = 170


def _run(command: list[str], what: str) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_SECONDS)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what} did not finish within {PIP_SECONDS} s: is the package index reachable?")
    if done.returncode != 0:
        said = "\n".join(line for line in done.stderr.splitlines() if not line.startswith("WARNING: Location"))
        pytest.fail(f"{what} failed (is the package index reachable?):\n{said[-1500:]}")


def _pip(*arguments: str) -> None:
    _run([sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", *arguments],
         f"pip {' '.join(arguments[:2])}")


def _pip_sources() -> list[str]:
    """pip's configured package sources (index, extra indexes, find-links, constraints) as uv's options, so that
    uv installs from where pip would; a local folder or file:// index that does not exist is left out, as pip
    ignores it."""
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                            timeout=60).stdout
    settings: dict[str, str] = {}
    for line in listed.splitlines():
        key, _, value = line.partition("=")
        settings[key.split(".", 1)[-1]] = value.strip().strip("'\"")
    for variable, key in (("PIP_INDEX_URL", "index-url"), ("PIP_EXTRA_INDEX_URL", "extra-index-url"),
                          ("PIP_FIND_LINKS", "find-links"), ("PIP_CONSTRAINT", "constraint")):
        settings[key] = os.environ.get(variable) or settings.get(key, "")

    def present(source: str) -> bool:
        local = source.removeprefix("file://")
        return "://" in local or Path(local).exists()

    options: list[str] = []
    for key, option in (("index-url", "--default-index"), ("extra-index-url", "--index"),
                        ("find-links", "--find-links"), ("constraint", "--constraint")):
        options += [part for source in settings.get(key, "").split() if present(source) for part in (option, source)]
    return options


def _build_and_install(work: Path) -> Path:
    """The wheel built from this tree, installed with its `[all]` extra into a fresh venv in `work`; its bin."""
    uv = Path(sys.executable).parent / "uv"
    if uv.exists():
        _run([str(uv), "build", "--quiet", "--wheel", "--out-dir", str(work / "dist"), str(ROOT)], "uv build")
    else:
        _pip("wheel", "--no-deps", "-w", str(work / "dist"), str(ROOT))
    wheels = sorted((work / "dist").glob("mcp_gateway-*.whl"))
    assert [w.name for w in wheels] == [f"mcp_gateway-{VERSION}-py3-none-any.whl"]
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(work / "env")], check=True, timeout=60)
    bin_folder = work / "env" / "bin"
    if uv.exists():
        _run([str(uv), "pip", "install", "--quiet", "--python", str(bin_folder / "python"),
              "--index-strategy", "unsafe-best-match", *_pip_sources(), f"{wheels[0]}[all]"], "uv pip install")
    else:
        _pip("--python", str(bin_folder / "python"), "install", "--no-compile", f"{wheels[0]}[all]")
    return bin_folder


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin folder of a fresh venv holding only the wheel built from this tree and what it depends on: made
    once a run, by whichever worker asks first, in the temporary root the workers share."""
    shared = tmp_path_factory.getbasetemp().parent  # every xdist worker's base is a folder of this one
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        shared = tmp_path_factory.getbasetemp()
    work = shared / "installed-wheel"
    with open(shared / "installed-wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when the making fails
        made = work / "made"
        if made.exists():
            return Path(made.read_text())
        if work.exists():  # a worker before this one failed half-way: start again
            shutil.rmtree(work)
        work.mkdir()
        bin_folder = _build_and_install(work)
        made.write_text(str(bin_folder))
        return bin_folder


def _home_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), **home_environment(home)}


def test_the_wheel_ships_the_commands_and_runs_the_demo(installed: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert (installed / "gateway").exists() and (installed / "mcp-gateway").exists()
    done = subprocess.run([str(installed / "gateway"), "demo", str(tmp_path / "demo")], env=_home_env(home),
                          cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    # Every plugin imported and answered (a plugin's fault is said "... failed inside the NAME plugin").
    assert "→ tools/call" in done.stdout and "failed inside the" not in done.stdout, done.stdout[-3000:]
    # The installed gateway is the one from the environment, not this tree.
    where = subprocess.run([str(installed / "python"), "-c", "import gateway; print(gateway.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=60).stdout
    assert str(installed.parent) in where and str(ROOT) not in where


async def _tools_listed(command: str, args: list[str], env: dict[str, str], cwd: Path,
                        call: tuple[str, dict[str, Any]] | None = None) -> tuple[list[str], Any]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp_types import Implementation

    params = StdioServerParameters(command=command, args=args, env=env, cwd=cwd)
    async with Client(stdio_client(params), mode="legacy", client_info=Implementation(name="install-check",
                                                                                        version="1"),
                      read_timeout_seconds=60) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        answer = await client.call_tool(*call) if call else None
        return names, answer


def test_the_installed_server_answers_tools_list(installed: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    names, _ = anyio.run(_tools_listed, str(installed / "mcp-gateway"), ["serve"], _home_env(home), tmp_path)
    for expected in ("rousseau_search_sessions", "rousseau_cron_list", "get_timeline", "porch", "spam_status"):
        assert expected in names
    assert "hello" not in names and "test_simple_text" not in names  # nothing of the development tree's extras


def test_the_bundle_is_valid_and_its_settings_become_the_config(installed: Path, tmp_path: Path) -> None:
    out = tmp_path / "gateway.mcpb"
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run([str(installed / "gateway"), "bundle", "--out", str(out)], env=_home_env(home),
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(out) as bundle:
        assert sorted(bundle.namelist()) == ["manifest.json", "pyproject.toml", "server/main.py"]
        manifest = json.loads(bundle.read("manifest.json"))
        project = tomllib.loads(bundle.read("pyproject.toml").decode())
        bundle.extractall(tmp_path / "unpacked")
    schema = json.loads(MCPB_SCHEMA.read_text())
    problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
                for e in jsonschema.Draft7Validator(schema).iter_errors(manifest)]
    assert not problems, problems
    assert manifest["version"] == VERSION and manifest["server"]["entry_point"] == "server/main.py"
    assert project["project"]["dependencies"] == [f"mcp-gateway[all]=={VERSION}"]
    assert set(manifest["user_config"]) == {"maildir", "tasks", "calendars", "contacts", "notes"}
    env_of = manifest["server"]["mcp_config"]["env"]
    assert all(f"${{user_config.{key}}}" in env_of.values() for key in manifest["user_config"])

    # The host runs server/main.py in the environment it made, with the settings the person chose; a setting the
    # person left empty arrives as the host's own placeholder and means: the plugin's default.
    mail = tmp_path / "Mail"
    write_maildir(mail / "personal", datetime.now(UTC).timestamp())
    notes = tmp_path / "Notes"
    (notes / "garden").mkdir(parents=True)
    (notes / "garden" / "compost.md").write_text("# Compost\nTurn the heap on Saturday.\n")
    settings = {variable: value.replace("${user_config.maildir}", str(mail))
                .replace("${user_config.notes}", str(notes)) for variable, value in env_of.items()}
    names, found = anyio.run(_tools_listed, str(installed / "python"),
                             [str(tmp_path / "unpacked" / "server" / "main.py")], {**_home_env(home), **settings},
                             tmp_path, ("search_notes", {"query": "compost"}))
    assert "porch" in names and "search_notes" in names
    assert not found.is_error and "compost" in found.content[0].text.lower()
    written = tomllib.loads((home / ".config" / "gateway" / "bundle.toml").read_text())
    assert written["plugins"]["mail"] == {"accounts": [{"name": "personal", "maildir": str(mail / "personal")}],
                                          "notes": str(notes)}
    assert (home / ".config" / "gateway" / "bundle.toml").stat().st_mode & 0o777 == 0o600


def test_server_json_names_the_pypi_package_and_the_readmes_mcp_name() -> None:
    server = json.loads((ROOT / "server.json").read_text())
    assert re.fullmatch(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+", server["name"]) and len(server["name"]) <= 200
    assert 1 <= len(server["description"]) <= 100 and server["version"] == VERSION
    [package] = server["packages"]
    assert package["registryType"] == "pypi" and package["identifier"] == "mcp-gateway"
    assert package["version"] == VERSION and package["transport"] == {"type": "stdio"}
    assert package.get("registryBaseUrl", "https://pypi.org") == "https://pypi.org"
    named = re.findall(r"mcp-name:\s*(\S+)", (ROOT / "README.md").read_text())
    assert named == [server["name"]]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts.get(package["identifier"]) == "gateway.commands.start:main"  # `uvx --from ... mcp-gateway serve` runs it
