"""The gate's two ways of leaving closed projects' events out agree: in SQL (closed values found once per call,
the per-app sums taken from the import's where nothing is left out) and row by row in Python; and the store's
schema 4 indexes change no answer, on a store upgraded in place from schema 3."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from gateway_timeline import queries
from gateway_timeline.gating import Gatekeeper
from gateway_timeline.store import SCHEMA_VERSION, Store, _following

from gateway import Gate
from gateway.gate.access import Manifest
from tests.plugins.timeline.timeline_helpers import envelope, fill, minute_now

START = minute_now() - timedelta(hours=5)  # within the retention the ingester keeps
HOURS = 3
PROJECTS = [
    {"id": "vault", "name": "The vault", "ai": False, "apps": ["Vault App"], "urls": ["vault.example.com"],
     "paths": ["/home/ada/vault"]},
    {"id": "gw", "name": "Gateway", "ai": True, "apps": ["Code"], "urls": ["github.example.com"]},
]
GATES = {
    "closed": Gate(Manifest.from_dict({"project": PROJECTS})),
    "opened": Gate(Manifest.from_dict({"project": [{**PROJECTS[0], "ai": True}, PROJECTS[1]]})),
    "apps only": Gate(Manifest.from_dict({"project": [{"id": "v", "ai": False, "apps": ["Slack"]}]})),
    "outside closed": Gate(Manifest.from_dict({"project": PROJECTS}), outside_projects=False),
    "nothing open": Gate(outside_projects=False),
}


def ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def busy_hours(seed: int = 5) -> list[dict]:
    """Three invented hours: apps, pages of a closed site whose titles the browser's windows repeat, files of a
    closed folder, long (timed) events reaching across minutes, idle breaks."""
    rng = random.Random(seed)
    hosts = ["vault.example.com", "docs.example.org", "github.example.com", "news.example.net"]
    events, at, serial = [], START, 0
    while at < START + timedelta(hours=HOURS):
        serial += 1
        roll = rng.random()
        app = rng.choice(["Code", "Firefox", "Vault App", "Slack", "Terminal"])
        data: dict = {}
        if rng.random() < 0.2:
            data["duration_s"] = rng.randint(1, 400)
        if roll < 0.02:
            events.append(envelope(at, "user.idle", event_id=f"e{serial}", data=data))
        elif app == "Firefox" and roll < 0.4:
            host = rng.choice(hosts)
            title = f"{rng.choice(['Ledger', 'Plan', 'Notes', 'Home'])} {rng.randint(1, 6)} on {host[:4]}"
            data.update(url=f"https://{host}/p/{rng.randint(1, 9)}", tab_title=title, mode="normal")
            events.append(envelope(at, "browser.navigate", app, f"{title} — Mozilla Firefox", data=data,
                                   event_id=f"e{serial}"))
        elif app == "Firefox":
            title = f"{rng.choice(['Ledger', 'Plan', 'Notes', 'Home'])} {rng.randint(1, 6)} on {rng.choice(hosts)[:4]}"
            events.append(envelope(at, rng.choice(["window.focus", "ui.click"]), app, f"{title} — Mozilla Firefox",
                                   data=data, event_id=f"e{serial}"))
        elif app == "Code" and roll < 0.5:
            folder = rng.choice(["/home/ada/vault", "/home/ada/src/gateway"])
            data["path"] = f"{folder}/file{rng.randint(1, 5)}.md"
            events.append(envelope(at, "editor.activity", app, None, data=data, event_id=f"e{serial}"))
        else:
            kind = rng.choice(["app.focus", "input.key", "ui.scroll"])
            events.append(envelope(at, kind, app, f"{app} window {rng.randint(1, 4)}", data=data,
                                   event_id=f"e{serial}"))
        at += timedelta(milliseconds=rng.randint(200, 20_000))
    return events


@pytest.fixture(scope="module")
def busy_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fill(tmp_path_factory.mktemp("busy") / "timeline.db", busy_hours())


def ranges() -> list[tuple[int, int]]:
    """Whole-minute ranges and ranges cut inside minutes, short and long, some reaching past the events."""
    begin = ms(START)
    minute = 60_000
    return [
        (begin, begin + 3 * 3_600_000),
        (begin + 17 * minute, begin + 62 * minute),
        (begin + 17 * minute + 12_345, begin + 62 * minute + 5_000),
        (begin + 90 * minute + 59_999, begin + 91 * minute + 1),
        (begin + 30_000, begin + 50_000),
        (begin - 3_600_000, begin + 4 * 3_600_000 + 7),
    ]


def as_schema_3(path: Path, copy: Path) -> Path:
    """A copy of the store as schema 3 made it: the same tables, only its one index on minutes."""
    shutil.copy(path, copy)
    db = sqlite3.connect(copy)
    for name in ("minutes_by_group", "minutes_by_url", "minutes_by_label", "minutes_by_path"):
        db.execute(f"DROP INDEX {name}")
    db.execute("CREATE INDEX minutes_by_minute ON minutes (minute)")
    db.execute("PRAGMA user_version = 3")
    db.commit()
    db.close()
    return copy


def answers(path: Path) -> str:
    """Every answer of the three query functions, for each gate and range, as one text."""
    found = {}
    with Store.reader(path) as store:
        for name, gate in GATES.items():
            for since, until in ranges():
                key = f"{name} {since} {until}"
                found[f"events {key}"] = queries.events(store, Gatekeeper(gate), since, until, oldest_ms=0, limit=1000)
                found[f"browser {key}"] = queries.events(store, Gatekeeper(gate), since, until, oldest_ms=0,
                                                         types=["browser.*"], newest_first=True, limit=7)
                found[f"markdown {key}"] = queries.timeline(store, Gatekeeper(gate), since, until, oldest_ms=0,
                                                            zone=UTC)
                found[f"structured {key}"] = queries.timeline(store, Gatekeeper(gate), since, until, oldest_ms=0,
                                                              zone=UTC, format="structured", max_tokens=32000)
    return json.dumps(found, sort_keys=True)


def test_what_sql_leaves_out_is_what_the_row_by_row_screen_leaves_out(busy_store: Path) -> None:
    keeper = Gatekeeper(GATES["closed"])
    minute = 60_000
    with Store.reader(busy_store) as store:
        assert store.indexed
        for since, until in ranges():
            # Titles of pages left out are taken from the whole minutes around the range: screen those, keep the range.
            around = list(store.events(since // minute * minute, (until // minute + 1) * minute))
            kept, left = keeper.screen(around, lambda row: (row[5], row[8], row[9], row[7]))
            kept = [row[0] for row in kept if since <= row[1] < until]
            left = [row[0] for row in left if since <= row[1] < until]
            closed = keeper.closed(store, since, until)
            if closed is None:
                assert not left
                continue
            condition, params = closed.condition()
            assert [row[0] for row in store.events(since, until, f" AND NOT {condition}", params)] == kept
            assert store.count(since, until, f" AND {condition}", params) == len(left)
            data = queries.events(store, keeper, since, until, oldest_ms=0, limit=1000)
            assert data["left_out"] == len(left) and data["count"] == len(kept)
            assert [e["id"] for e in data["events"]] == kept[:1000]
            assert queries.timeline(store, keeper, since, until, oldest_ms=0, zone=UTC)["left_out"] == len(left)
            narrowed = queries.events(store, keeper, since, until, oldest_ms=0, app="Vault App")
            assert narrowed["left_out"] == len(left) and narrowed["count"] == 0
        whole = keeper.closed(store, ms(START), ms(START) + HOURS * 3_600_000)
        assert whole is not None and whole.labels and whole.apps and whole.urls and whole.paths
        assert any(label.endswith("Mozilla Firefox") for label in whole.labels), "windows repeating closed pages"


def test_the_indexes_change_no_answer_and_an_old_store_is_upgraded_in_place(busy_store: Path, tmp_path: Path) -> None:
    old = as_schema_3(busy_store, tmp_path / "old.db")
    with Store.reader(old) as store:
        assert not store.indexed  # read as before, from the grouped rows of every minute
    before = answers(old)
    assert "vault.example.com" not in json.dumps(
        {k: v for k, v in json.loads(before).items() if k.split(" ")[1] == "closed"})
    assert answers(busy_store) == before
    with Store.open(old) as store:  # what the next import does
        assert store.indexed
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        indexes = {row[0] for row in store.db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert "minutes_by_minute" not in indexes
    assert answers(old) == before


def test_a_change_of_manifest_is_never_answered_from_remembered_verdicts(busy_store: Path) -> None:
    since, until = ms(START), ms(START) + 3_600_000
    with Store.reader(busy_store) as store:
        closed = queries.events(store, Gatekeeper(GATES["closed"]), since, until, oldest_ms=0)["left_out"]
        opened = queries.events(store, Gatekeeper(GATES["opened"]), since, until, oldest_ms=0)["left_out"]
        again = queries.events(store, Gatekeeper(GATES["closed"]), since, until, oldest_ms=0)["left_out"]
    assert closed == again > 0 and opened == 0


@pytest.mark.parametrize("title", ["Ledger 3", "Plan é", "a\U0010ffff", "\U0010ffff\U0010ffff", "x\ud7ff", ""])
def test_the_bound_after_every_title_beginning_with_a_prefix(title: str) -> None:
    bound = _following(title)
    if bound is None:
        assert set(title) <= {"\U0010ffff"}
        return
    bound.encode()  # text SQLite can hold
    for longer in (title, title + "a", title + "\U0010ffff" * 3, title + "\x00"):
        assert title <= longer < bound
    assert not bound.startswith(title) or not title


def test_a_bulk_import_makes_the_indexes_again_and_a_failed_one_keeps_them(tmp_path: Path, monkeypatch) -> None:
    """Rebuilding more than a week of minutes, the URL, title and path indexes are dropped and made again at the
    end of the same transaction: the same store as kept up row by row, and nothing lost when the import fails."""
    from gateway_timeline.envelope import traits
    from gateway_timeline.store import row_of
    from gateway_timeline.store import writer as store_module

    begin = ms(minute_now()) - 9 * 86_400_000
    events = []
    for index in range(11_000):  # nine days, one event every 70 seconds: more minutes than a week's
        at = datetime.fromtimestamp((begin + index * 70_000) / 1000, UTC)
        events.append(envelope(at, "browser.navigate", "Firefox", f"Page {index % 40} — Mozilla Firefox",
                               data={"url": f"https://site{index % 7}.example.com/{index % 40}",
                                     "tab_title": f"Page {index % 40}"}, event_id=f"b{index}"))
    rows = [row_of(event, int(datetime.fromisoformat(event["ts"]).timestamp() * 1000), None, traits(event))
            for event in events]

    def build(path: Path, bulk: bool) -> list:
        with Store.open(path) as store:
            said: list[str] = []
            store.db.set_trace_callback(said.append)
            store.begin()
            store.add(rows)
            store.commit()
            assert ("DROP INDEX minutes_by_label" in said) == bulk
            store.db.set_trace_callback(None)
            assert store.indexed
            return [store.db.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
                    for table in ("minutes", "minute_apps")]

    bulk = build(tmp_path / "bulk.db", True)
    monkeypatch.setattr(store_module, "BULK_MINUTES", 10**9)
    assert build(tmp_path / "row_by_row.db", False) == bulk
    monkeypatch.undo()

    def failing(*_args, **_kwargs):
        raise RuntimeError("interrupted")
        yield

    with Store.open(tmp_path / "bulk.db") as store:
        store.begin()
        store.add([(f"x{row[0]}", *row[1:]) for row in rows])
        monkeypatch.setattr(store_module, "_runs", failing)
        with pytest.raises(RuntimeError):
            store.commit()
        store.db.execute("ROLLBACK")  # as the importers do
        store._indexed = None
        assert store.indexed
        assert store.db.execute("SELECT COUNT(*) FROM events").fetchone()[0] == len(rows)
