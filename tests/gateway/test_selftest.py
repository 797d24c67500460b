"""`gateway selftest` on a temporary home: every probe holds on a sound setup, the person's own files are neither
read into any line nor changed, the scratch folder goes; a busy computer changes no verdict (every call waits for
its stores to have read the invented items, the manifest is emptied as the first of the calls asked at once is
answered); and a plugin that ignores the gate (installed as pip would, the way a careless third-party plugin would
reach a person) is caught: FAILED, exit 1."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from gateway.api.context import home_environment
from gateway.testing import installed_plugin, write_config
from tests.forkserver import VARIABLE, gateway_command

# A selftest's run is bounded by its own timeouts (a minute and a half a request at most); the subprocess's bound is
# above them, and the test's above that, so that a run cut short says what it printed.
RUN_SECONDS = 300
pytestmark = pytest.mark.timeout(RUN_SECONDS + 60)

SECRET = "marmaladetruth"  # in the person's own notes: the selftest must never read or print it
PROJECTS = [
    {"id": "garden", "name": "Community garden", "ai": True, "paths": ["~/Notes/garden"],
     "senders": ["@garden.example.org"]},
    {"id": "lawsuit", "name": "Neighbour dispute", "ai": False, "paths": ["~/projects/lawsuit"],
     "senders": ["@law.example.net"], "subjects": ["fence"], "lists": ["legal"], "calendars": ["court"],
     "addressbooks": ["lawyers"], "folders": ["Legal"], "apps": ["Courtroom"], "urls": ["law.example.net"]},
]

# Answers whatever Markdown the home holds, never asking the gate: what a careless plugin would do.
LEAKY = '''
from pathlib import Path

from gateway import Tool, hookimpl


def everything() -> str:
    """Every note in the home, whole."""
    return "\\n".join(p.read_text() for p in sorted(Path.home().rglob("*.md"))[:50])


@hookimpl
def register_tools(gateway):
    return [Tool.from_function(everything, read_only=True)]
'''


def person(home: Path, plugins: list[str], **gateway: object) -> None:
    """A person's own home: notes of their own (a secret word in them), a config naming them (with `gateway`'s
    settings in its `[gateway]` table), a manifest."""
    notes = home / "Notes"
    (notes / "garden").mkdir(parents=True)
    (notes / "garden" / "Beds.md").write_text(f"# Beds\n\nThe {SECRET} bed.\n")
    (home / "projects" / "lawsuit").mkdir(parents=True)
    (home / "projects" / "lawsuit" / "Fence.md").write_text(f"# Fence\n\n{SECRET} for the lawyer.\n")
    write_config(home, {"gateway": {"plugins": plugins, **gateway},
                        "plugins": {"mail": {"notes": str(notes), "timezone": "Europe/Paris"}}}, projects=PROJECTS)


def tree(home: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(home)): (p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(home.rglob("*"))
            if p.is_file()}


def selftest(home: Path, scratch: Path, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    # The suite's launcher, when set, is passed on: the selftest starts its scratch servers through it too.
    launcher = {VARIABLE: os.environ[VARIABLE]} if VARIABLE in os.environ else {}
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(home), "TMPDIR": str(scratch), **launcher,
           **(extra or {})}
    try:
        return subprocess.run(gateway_command("selftest"), env=env, capture_output=True, text=True,
                              timeout=RUN_SECONDS)
    except subprocess.TimeoutExpired as late:
        pytest.fail(f"the selftest ran over {RUN_SECONDS} s; it had printed:\n{late.stdout!r}\n{late.stderr!r}")


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    folder = tmp_path / "tmp"
    folder.mkdir()
    return folder


def test_selftest_holds_on_a_sound_setup_and_leaves_the_home_as_it_was(gateway_home: Path, scratch: Path) -> None:
    person(gateway_home, ["mail", "sessions", "timeline"])
    before = tree(gateway_home)
    done = selftest(gateway_home, scratch)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    probes = [line for line in lines if line.startswith(("held", "FAILED"))]
    assert [line.split(":")[0].split(None, 1)[1] for line in probes] == [
        "masked digits", "closed project 'lawsuit'", "manifest emptied mid-call", "oversized query"]
    assert all(line.startswith("held") for line in probes), done.stdout
    assert "reached no tool" not in done.stdout, "the invented items must reach the tools, or they prove nothing"
    assert lines[-1] == "4 of 4 probes held."
    waiting = re.search(r"\((\d+) asked and not yet answered as it was emptied\)", probes[2])
    assert waiting and int(waiting[1]) >= 1, f"the manifest must be emptied while calls are in flight: {probes[2]}"
    assert SECRET not in done.stdout + done.stderr
    assert tree(gateway_home) == before, "nothing of the person's home is written or changed"
    assert list(scratch.iterdir()) == [], "the scratch folder is removed"


def test_no_probe_answers_from_a_store_still_being_read(gateway_home: Path, scratch: Path) -> None:
    """A person whose calls never wait for their stores (`refresh_budget_ms = 0`, as a computer too busy for the
    budget makes it): the scratch gateways wait all the same, so that no closed project is probed in a store that
    has not read its items yet, and every probe holds."""
    person(gateway_home, ["mail", "sessions", "timeline"], refresh_budget_ms=0)
    done = selftest(gateway_home, scratch)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "4 of 4 probes held.", done.stdout
    assert "still being read" not in done.stdout, done.stdout
    assert "reached no tool" not in done.stdout, done.stdout


def test_a_plugin_that_ignores_the_gate_is_reported_and_fails_the_run(gateway_home: Path, scratch: Path,
                                                                      tmp_path: Path) -> None:
    person(gateway_home, ["mail", "leaky"])
    extra = installed_plugin(tmp_path / "site", "leaky", LEAKY)
    done = selftest(gateway_home, scratch, extra)
    assert done.returncode == 1, done.stdout + done.stderr
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAILED")]
    assert failed and failed[0].startswith("FAILED  closed project 'lawsuit': its canary was given by")
    assert "everything {}" in failed[0]
    assert SECRET not in done.stdout + done.stderr, "the scratch copy holds invented items only"
