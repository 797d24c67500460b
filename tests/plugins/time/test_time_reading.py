"""Timewarrior's data as the real `timew` writes it: read as `timew export` reads it back, found where timewarrior
looks, read again only when a file changed, and a malformed line counted and skipped, never a failed call."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import gateway_time
import pytest
from gateway_time import sample, store, timewarrior

from gateway.testing import make_gateway
from tests.plugins.time.hostile import MALFORMED

TAGS = ["acme", "deep work", 'say "hi"', "back\\slash", "it's", "#hash", "a-b", "é ü", "project:acme"]


def _config(db: Path, folder: Path) -> dict:
    return {"gateway": {"plugins": ["time"], "refresh_budget_ms": 60_000},
            "plugins": {"time": {"timewarrior": str(db), "invoices": str(folder), "timezone": "UTC"}}}


def test_data_written_by_timew_reads_as_timew_exports_it(tmp_path: Path) -> None:
    db = tmp_path / "tw"
    start = datetime(2026, 11, 2, 9, tzinfo=UTC)
    for number, tag in enumerate(TAGS):
        begin = start + timedelta(hours=2 * number)
        sample.timew(db, "track", begin.strftime("%Y-%m-%dT%H:%M:%SZ"), "-",
                     (begin + timedelta(minutes=45)).strftime("%Y-%m-%dT%H:%M:%SZ"), tag, "acme")
    sample.timew(db, "track", "2026-11-03T09:00:00Z", "-", "2026-11-03T10:00:00Z")  # no tag at all
    exported = json.loads(sample.timew(db, "export"))
    read = [i for path in timewarrior.data_files(db) for i in timewarrior.read_file(path, 1 << 20).intervals]
    assert [(i.start, i.end, sorted(i.tags)) for i in read] == [
        (_seconds(e["start"]), _seconds(e["end"]), sorted(e.get("tags", []))) for e in exported]
    assert any('say "hi"' in i.tags for i in read) and any("back\\slash" in i.tags for i in read)
    assert not any(timewarrior.read_file(p, 1 << 20).malformed for p in timewarrior.data_files(db))


def _seconds(written: str) -> int:
    return int(datetime.strptime(written, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC).timestamp())


def test_a_line_of_the_documented_format_with_an_annotation_and_an_open_interval() -> None:
    line = 'inc 20261103T090000Z - 20261103T100000Z # back\\slash "say \\"hi\\"" # "note with \\"quotes\\" and # hash"'
    interval = timewarrior.parse(line)
    assert interval.tags == ("back\\slash", 'say "hi"') and interval.annotation == 'note with "quotes" and # hash'
    running = timewarrior.parse("inc 20261201T181337Z # writing")
    assert running.end is None and running.tags == ("writing",)
    assert timewarrior.parse("inc 20261201T181337Z - 20261201T191337Z").tags == ()
    for bad in MALFORMED:
        with pytest.raises(ValueError):
            timewarrior.parse(bad.strip())


def test_the_database_is_found_where_timewarrior_looks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.delenv("TIMEWARRIORDB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    assert timewarrior.database(None, home) == home / ".local" / "share" / "timewarrior"
    (home / ".timewarrior").mkdir(parents=True)
    assert timewarrior.database(None, home) == home / ".timewarrior"  # only the old folder exists
    (home / ".local" / "share" / "timewarrior").mkdir(parents=True)
    assert timewarrior.database(None, home) == home / ".local" / "share" / "timewarrior"
    monkeypatch.setenv("TIMEWARRIORDB", str(tmp_path / "elsewhere"))
    assert timewarrior.database(None, home) == tmp_path / "elsewhere"
    assert timewarrior.database(tmp_path / "set", home) == tmp_path / "set"


def test_a_malformed_line_is_counted_and_skipped(gateway_home: Path) -> None:
    db = gateway_home / "tw"
    (db / "data").mkdir(parents=True)
    good = sample.interval_line(datetime(2026, 11, 2, 9, tzinfo=UTC), datetime(2026, 11, 2, 11, tzinfo=UTC),
                                ["acme"])
    (db / "data" / "2026-11.data").write_text(good + "".join(MALFORMED) + good.replace("T09", "T12").replace("T11", "T13"))
    (db / "data" / "tags.data").write_text("{not an interval file}")
    gateway = make_gateway([gateway_time], home=gateway_home, config=_config(db, gateway_home / "Invoices"))
    answer = gateway.call("time_spent", {"since": "2026-11-01", "until": "2026-11-30"})
    assert not answer.is_error
    assert "3:00 (3.00 h) in 2 intervals" in answer.text
    assert f"{len(MALFORMED)} malformed lines of the timewarrior data skipped" in answer.text
    assert answer.data["malformed_lines"] == len(MALFORMED)
    connection = sqlite3.connect(gateway_home / ".cache" / "gateway" / "plugins" / "time" / store.STORE_FILE)
    connection.row_factory = sqlite3.Row
    try:
        said = store.problems(connection)
    finally:
        connection.close()
    assert said == [("time", f"{db / 'data' / '2026-11.data'}: {len(MALFORMED)} malformed lines skipped "
                             "(lines 2,3,4,5,6,7)")]


def test_an_unchanged_file_is_not_read_again(gateway_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = sample.everything(gateway_home, "otter", real_timew=False)
    gateway = make_gateway([gateway_time], home=gateway_home, config=made["config"], projects=made["projects"])
    first = gateway.call("time_spent", {"since": str(made["day"] - timedelta(days=5))})
    assert "acme" in first.text

    def never(*_arguments: object) -> None:
        raise AssertionError("an unchanged file was read again")

    monkeypatch.setattr(timewarrior, "read_file", never)
    monkeypatch.setattr(gateway_time.invoices, "read_pdfs", never)
    gateway_time._seen.clear()  # a new process: only the store's sizes and times say what is known
    again = gateway.call("time_spent", {"since": str(made["day"] - timedelta(days=5))})
    assert again.text == first.text
    assert "INV-2026-0042" in gateway.call("invoices").text
    monkeypatch.undo()
    month = sorted((made["db"] / "data").glob("*.data"))[-1]
    today = made["day"]
    with month.open("a") as handle:
        handle.write(sample.interval_line(datetime(today.year, today.month, today.day, 0, 10, tzinfo=UTC),
                                          datetime(today.year, today.month, today.day, 0, 40, tzinfo=UTC), ["otterly"]))
    assert "otterly" in gateway.call("time_spent", {"since": str(today - timedelta(days=5))}).text


def test_timew_is_the_real_one() -> None:
    version = subprocess.run(["timew", "--version"], capture_output=True, text=True, check=True).stdout
    assert version.strip()[0].isdigit()
