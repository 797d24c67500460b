"""`gateway demo DIR` never spills into a real home: it refuses folders it did not make, and its host command sets HOME."""

from __future__ import annotations

import subprocess

import pytest

from gateway.api.items import ToolError
from gateway.commands.demo import MARKER, demo_home
from tests.forkserver import gateway_command


def test_the_demo_refuses_a_folder_holding_what_it_did_not_make(gateway_home, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.txt").write_text("the person's own words")
    result = subprocess.run(gateway_command("demo", str(mine)), capture_output=True, text=True,
                            timeout=60)
    assert result.returncode != 0
    assert "already holds files the demo did not make" in result.stderr
    assert sorted(p.name for p in mine.iterdir()) == ["thesis.txt"]  # nothing written beside it


@pytest.mark.parametrize("shape", ["file", "person_home"])
def test_the_demo_refuses_a_file_or_a_lived_in_home(tmp_path, shape):
    target = tmp_path / "target"
    if shape == "file":
        target.write_text("x")
    else:
        (target / ".config").mkdir(parents=True)
    with pytest.raises(ToolError):
        demo_home(target)
    assert not (target / MARKER).exists() if target.is_dir() else target.read_text() == "x"


def test_the_demo_takes_a_new_an_empty_or_its_own_folder(tmp_path):
    new = demo_home(tmp_path / "new")
    assert (new / MARKER).is_file()
    (new / ".config").mkdir()  # what a first demo leaves
    assert demo_home(new) == new  # its own folder is taken again
    empty = tmp_path / "empty"
    empty.mkdir()
    assert demo_home(empty) == empty.resolve()
