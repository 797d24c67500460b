"""Every address a tool hands out can be read back: `gateway read` (and a host's resources/read) serves
`sioul:project/…`, `sioul:task/…`, `sioul:event/…` and `sioul:contact/…`, each through the gate; a kept thing and
an unknown one get the same sentence."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from gateway_mail.demo import CLOSED_WORD, write_organizer

from gateway.commands.cli import main
from gateway.testing import write_config

PROJECTS = [
    {"id": "garden", "name": "Community garden", "ai": True, "paths": ["~/Notes/garden"]},
    {"id": "lawsuit", "name": "Neighbour dispute", "ai": False, "client": "lee@law.example.net"},
]


@pytest.fixture
def home(gateway_home: Path) -> Path:
    table = write_organizer(gateway_home, datetime.now(UTC))
    write_config(gateway_home, {"gateway": {"plugins": ["mail"]}, "plugins": {"mail": table}}, projects=PROJECTS)
    return gateway_home


def _read(uri: str):
    return CliRunner().invoke(main, ["read", uri])


def test_each_kind_of_address_a_tool_gives_is_read_back(home: Path) -> None:
    handed_out = CliRunner().invoke(main, ["call", "find", '{"query": "compost"}']).output
    assert "sioul:task/demo-compost" in handed_out and "sioul:contact/demo-bo" in handed_out
    task = _read("sioul:task/demo-compost")
    assert task.exit_code == 0 and "Task: Turn the compost" in task.output and "Projects: garden" in task.output
    event = _read("sioul:event/demo-workday")
    assert event.exit_code == 0 and "Event: Garden work day" in event.output and "Where: The allotments" in event.output
    contact = _read("sioul:contact/demo-bo")
    assert contact.exit_code == 0 and "Bo Gardener" in contact.output
    page = _read("sioul:project/garden")
    assert page.exit_code == 0 and "Project: Community garden" in page.output


def test_a_kept_thing_and_an_unknown_one_are_refused_alike(home: Path) -> None:
    kept_task, unknown_task = _read("sioul:task/demo-survey"), _read("sioul:task/no-such-task")
    kept_contact, unknown_contact = _read("sioul:contact/demo-lee"), _read("sioul:contact/nobody")
    for result in (kept_task, unknown_task, kept_contact, unknown_contact):
        assert result.exit_code != 0 and "closed to AI agents; only the person can open it" in result.output
        assert CLOSED_WORD not in result.output and "Lee Counsel" not in result.output
    assert kept_task.output.replace("demo-survey", "X") == unknown_task.output.replace("no-such-task", "X")
    assert kept_contact.output.replace("demo-lee", "X") == unknown_contact.output.replace("nobody", "X")
    closed_page, unknown_page = _read("sioul:project/lawsuit"), _read("sioul:project/zz")
    assert closed_page.output == unknown_page.output
