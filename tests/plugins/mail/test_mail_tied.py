"""The mail plugin's tie store read through the core's `tied_projects` hook, as every other plugin reads it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import gateway_mail
import pytest
from gateway_mail.projects.tied import projects_tied
from gateway_mail.projects.ties import FILE_NAME, Ties

from gateway import ToolError
from gateway.testing import folders_of, make_gateway

PROJECTS = [{"id": "lawsuit", "name": "Dispute"}, {"id": "Garden", "name": "Garden", "ai": True}]


def _store(folder: Path) -> Path:
    store = folder / FILE_NAME
    with Ties.at(store) as ties:
        ties.add("mid:root@example.org", "sioul:project/lawsuit")
        ties.add("sioul:project/garden", "sioul:task/seeds%20list")  # written either way round
        ties.add("mid:other@example.org", "sioul:task/seeds%20list")  # a tie to a task places nothing here
        ties.add("sioul:project/lawsuit", "sioul:project/garden")  # nor a tie between two projects
        ties.add("mid:root@example.org", "https://example.com/case")
    return store


def test_tied_addresses_are_answered_as_asked_and_the_others_left_out(tmp_path: Path) -> None:
    store = _store(tmp_path)
    asked = ["mid:root@example.org", "mid:<root@example.org>", "sioul:task/seeds%20list", "mid:other@example.org",
             "sioul:project/lawsuit", "mid:unknown@example.org", "no address at all", "mid:bad\nid"]
    assert projects_tied(store, asked) == {"mid:root@example.org": ["lawsuit"],
                                           "mid:<root@example.org>": ["lawsuit"],
                                           "sioul:task/seeds%20list": ["garden"]}


def test_no_store_is_no_tie_and_makes_no_file(tmp_path: Path) -> None:
    assert projects_tied(tmp_path / FILE_NAME, ["mid:root@example.org"]) == {}
    assert not (tmp_path / FILE_NAME).exists()


def test_a_store_that_cannot_be_read_raises(tmp_path: Path) -> None:
    store = tmp_path / FILE_NAME
    store.write_bytes(b"this is no database, but long enough to be read as one" * 20)
    with pytest.raises(sqlite3.DatabaseError):
        projects_tied(store, ["mid:root@example.org"])


def test_every_plugin_reads_the_mail_ties_through_the_core(gateway_home: Path) -> None:
    gateway = make_gateway([("mail", gateway_mail)], home=gateway_home, projects=PROJECTS,
                           config={"gateway": {"plugins": ["mail"]}})
    data = folders_of(gateway_home).for_plugin("mail").data
    data.mkdir(parents=True, exist_ok=True)
    store = _store(data)
    snapshot = gateway.snapshot()
    tied = gateway.tied(snapshot, ("mid:root@example.org", "sioul:task/seeds%20list", "mid:unknown@example.org"))
    # Ids spelt as the manifest spells them, whatever the tie wrote.
    assert tied == {"mid:root@example.org": frozenset({"lawsuit"}), "sioul:task/seeds%20list": frozenset({"Garden"})}
    store.write_bytes(b"this is no database, but long enough to be read as one" * 20)
    with pytest.raises(ToolError, match="ties cannot be read"):
        gateway.tied(snapshot, ("mid:root@example.org",))
