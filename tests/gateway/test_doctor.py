"""`gateway doctor`: a broken gate is a problem (exit 1); everything open is a warning, never "All good"."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from gateway.commands.cli import main
from gateway.testing import write_config


@pytest.fixture
def run(gateway_home):
    def invoke(*args, env=None):
        return CliRunner().invoke(main, list(args), catch_exceptions=False, env=env)

    return invoke


def test_a_fresh_install_says_everything_is_open(run, gateway_home):
    write_config(gateway_home, {"gateway": {"plugins": ["hello"]}})
    result = run("doctor")
    assert result.exit_code == 0 and "All good" not in result.output
    assert "no projects yet (a fresh install)" in result.output
    assert "WARNING  every project and everything outside projects is open to agents" in result.output
    assert "read the warning above." in result.output


def test_projects_all_open_are_said_plainly(run, gateway_home):
    write_config(gateway_home, {"gateway": {"plugins": ["hello"]}}, projects=[{"id": "a", "ai": True}])
    assert "WARNING  every project and everything outside projects is open" in run("doctor").output


@pytest.mark.parametrize(
    ("projects", "outside"),
    [([{"id": "kept", "paths": ["/srv/kept"]}], True), ([{"id": "a", "ai": True}], False)],
)
def test_something_closed_is_all_good(run, gateway_home, projects, outside):
    write_config(gateway_home, {"gateway": {"plugins": ["hello"]}, "access": {"outside_projects": outside}},
                 projects=projects)
    result = run("doctor")
    assert result.exit_code == 0 and "All good." in result.output and "WARNING" not in result.output


def test_a_missing_explicit_config_is_a_problem(run, gateway_home, tmp_path):
    result = run("--config", str(tmp_path / "typo.toml"), "doctor")
    assert result.exit_code == 1 and "typo.toml" in result.output and "does not exist" in result.output
    by_env = run("doctor", env={"GATEWAY_CONFIG": str(tmp_path / "typo2.toml")})
    assert by_env.exit_code == 1 and "typo2.toml" in by_env.output


@pytest.mark.parametrize("breakage", ["deleted", "emptied", "broken link", "misspelt"])
def test_a_broken_manifest_is_a_problem(run, gateway_home, breakage):
    config = write_config(gateway_home, {"gateway": {"plugins": ["hello"]}, "access": {"projects": "projects.toml"}},
                          projects=[{"id": "kept", "paths": ["/srv/kept"]}])
    manifest = config.parent / "projects.toml"
    if breakage == "deleted":
        manifest.unlink()
    elif breakage == "emptied":
        manifest.write_text("")
    elif breakage == "broken link":
        manifest.unlink()
        manifest.symlink_to(config.parent / "nowhere.toml")
    else:
        config.write_text('[gateway]\nplugins = ["hello"]\n[access]\nprojects = "project.toml"\n')
    result = run("doctor")
    assert result.exit_code == 1 and "PROBLEM" in result.output and "projects manifest" in result.output
    assert "All good" not in result.output
