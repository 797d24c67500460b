"""The audit log is a chain the person can check: each line carries the hash of the one before, and `gateway audit
verify` names the first line where someone edited, removed, swapped or cut it, or rewrote the whole log."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from gateway.commands.cli import main
from gateway.engine.audit import AuditLog


def _log(folder: Path, lines: int = 5, tool: str = "t") -> AuditLog:
    log = AuditLog(folder)
    for number in range(lines):
        log.write({"tool": tool, "i": number})
    return log


def _lines(log: AuditLog) -> tuple[Path, list[bytes]]:
    (path,) = log.folder.glob("*.jsonl")
    return path, path.read_bytes().splitlines(keepends=True)


def test_each_line_carries_the_hash_of_the_one_before(tmp_path: Path) -> None:
    log = _log(tmp_path / "audit")
    _path, lines = _lines(log)
    entries = [json.loads(line) for line in lines]
    assert entries[0]["prev"] == ""
    for before, entry in zip(lines, entries[1:], strict=False):
        assert entry["prev"] == hashlib.sha256(before.rstrip(b"\n")).hexdigest()
    assert log.verify() == []


@pytest.mark.parametrize("damage", ["edit", "delete", "swap", "insert"])
def test_a_line_edited_removed_swapped_or_inserted_is_named(tmp_path: Path, damage: str) -> None:
    log = _log(tmp_path / "audit")
    path, lines = _lines(log)
    if damage == "edit":
        lines[2] = lines[2].replace(b'"i":2', b'"i":7')
    elif damage == "delete":
        del lines[2]
    elif damage == "swap":
        lines[1], lines[2] = lines[2], lines[1]
    else:
        lines.insert(2, lines[1])
    path.write_bytes(b"".join(lines))
    problems = log.verify()
    assert problems and "the chain breaks here" in problems[0]
    assert problems[0].startswith(f"{path.name}:{2 if damage == 'swap' else 3}:" if damage != "edit"
                                  else f"{path.name}:4:")


def test_a_log_cut_mid_line_or_cut_back_is_named(tmp_path: Path) -> None:
    log = _log(tmp_path / "audit")
    assert log.verify() == []  # the head is kept: 5 lines
    path, lines = _lines(log)
    path.write_bytes(b"".join(lines[:3]))  # the last two lines removed: the chain still holds on its own
    assert any("fewer than the 5 verified before" in p for p in log.verify())
    path.write_bytes(b"".join(lines)[:-7])
    assert any("cut short" in p for p in log.verify())


def test_a_whole_log_made_anew_with_a_consistent_chain_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "audit"
    log = _log(folder)
    assert log.verify() == []
    for path in folder.glob("*.jsonl"):
        path.unlink()
    # A chain that holds, but not the one verified before (other lines: written within the same millisecond, lines
    # of the same entries would be the very lines verified, not a rewrite).
    forged = _log(folder, 6, tool="forged")
    problems = forged.verify()
    assert problems and "rewritten since" in problems[0]


def test_the_chain_goes_on_across_months(tmp_path: Path) -> None:
    folder = tmp_path / "audit"
    folder.mkdir(mode=0o700)
    earlier = folder / "2026-10.jsonl"
    first = json.dumps({"time": "2026-10-31T23:59:00Z", "tool": "t", "prev": ""}, separators=(",", ":")).encode()
    earlier.write_bytes(first + b"\n")
    log = _log(folder, 1)
    (current,) = [p for p in folder.glob("*.jsonl") if p != earlier]
    assert json.loads(current.read_bytes())["prev"] == hashlib.sha256(first).hexdigest()
    assert log.verify() == []


def _append(folder: str, writer: int) -> None:
    log = AuditLog(Path(folder))
    for number in range(5000):
        log.write({"tool": "t", "writer": writer, "i": number})


def test_three_processes_appending_at_once_keep_one_chain(tmp_path: Path) -> None:
    folder = tmp_path / "audit"
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_append, args=(str(folder), n)) for n in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert all(worker.exitcode == 0 for worker in workers)
    log = AuditLog(folder)
    assert log.verify() == []
    assert sum(1 for _ in log.read()) == 15000


def test_gateway_audit_verify_says_it_holds_or_where_it_breaks(gateway_home: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["call", "echo", '{"text": "hi"}']).exit_code == 0
    assert runner.invoke(main, ["call", "echo", '{"text": "again"}']).exit_code == 0
    held = runner.invoke(main, ["audit", "verify"])
    assert held.exit_code == 0 and "The audit chain holds" in held.output
    (path,) = (gateway_home / ".local" / "state" / "gateway" / "audit").glob("*.jsonl")
    os.chmod(path, 0o600)
    path.write_bytes(path.read_bytes().replace(b'"echo"', b'"ECHO"', 1))
    broken = runner.invoke(main, ["audit", "verify"])
    assert broken.exit_code == 1 and "BROKEN" in broken.output
    assert runner.invoke(main, ["audit"]).exit_code == 0  # reading back still works


def test_audit_project_says_what_agents_got_of_one_project(gateway_home: Path) -> None:
    from gateway.testing import folders_of, write_config

    cards = folders_of(gateway_home).data / "plugins" / "hello" / "cards"
    cards.mkdir(parents=True)
    (cards / "ada.txt").write_text("To: ada@garden.example.org\nHappy birthday!\n")
    (cards / "lee.txt").write_text("To: lee@law.example.net\nThank you.\n")
    write_config(gateway_home, {"gateway": {"plugins": ["hello"]},
                                "plugins": {"hello": {"cards": str(cards)}}},
                 projects=[{"id": "garden", "ai": True, "senders": ["@garden.example.org"]},
                           {"id": "dupont", "ai": True, "senders": ["@law.example.net"]}])
    runner = CliRunner()
    for name in ("ada", "lee"):
        assert runner.invoke(main, ["read", f"hello://cards/{name}"]).exit_code == 0
    garden = runner.invoke(main, ["audit", "--project", "garden"])
    assert "hello://cards/ada" in garden.output and "hello://cards/lee" not in garden.output
    unknown = runner.invoke(main, ["audit", "--project", "nosuch"])
    assert unknown.exit_code != 0 and "no project 'nosuch'" in unknown.output
