"""Window titles as routes and as private-window marks: the forms recognised, and those left alone."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from gateway_timeline.envelope import (
    PRIVATE_TITLE_WORDS,
    is_private,
    is_private_app,
    is_private_title,
    parse_ts,
    traits,
)
from gateway_timeline.gating import Gatekeeper, TitleFolders, title_paths
from gateway_timeline.store import Store, row_of

from gateway import Gate
from gateway.gate.access import Manifest
from tests.plugins.timeline.timeline_helpers import envelope

PRIVATE = [
    "Notes — Mozilla Firefox Private Browsing",
    "Mozilla Firefox Private Browsing",
    "Notes - Mozilla Firefox (Private Browsing)",
    "Notes — Private Browsing",
    "Notes — Firefox Nightly Private Browsing",
    "Notes — LibreWolf Private Browsing",
    "Private Browsing",
    "Inbox - Google Chrome (Incognito)",
    "Inbox - Chromium (Incognito)",
    "Gmail - Incognito",
    "Search - [InPrivate] - Microsoft\u200b Edge",
    "Bing - InPrivate",
    "New tab - Brave (Private)",
    "Private Window with Tor - Brave",
    "Onion — Tor Browser",
    "Onion — Mullvad Browser",
]
NOT_PRIVATE = [
    "Private browsing explained — Mozilla Firefox",
    "Incognito mode settings - Google Chrome",
    "private_notes.md — gateway — Visual Studio Code",
    "Inbox - Google Chrome",
    "Tor Browser download page — Mozilla Firefox",
    "",
]


@pytest.mark.parametrize("title", PRIVATE)
def test_private_window_titles_are_recognised(title: str) -> None:
    assert is_private_title(title)
    assert any(word in title.casefold() for word in PRIVATE_TITLE_WORDS), "the store's lookup words cover it"
    assert is_private({"window": {"title": title}}) and is_private({"data": {"tab_title": title}})


@pytest.mark.parametrize("title", NOT_PRIVATE)
def test_ordinary_titles_are_not_taken_for_private_windows(title: str) -> None:
    assert not is_private_title(title)


@pytest.mark.parametrize("app", ["Tor Browser", "tor-browser", "TorBrowser.exe", "Mullvad Browser"])
def test_browsers_whose_every_window_is_private(app: str) -> None:
    assert is_private_app(app) and is_private({"app": {"name": app}})


@pytest.mark.parametrize(("title", "path"), [
    ("ada@desk: ~/work/secret-client/src", "~/work/secret-client/src"),
    ("/home/ada/work/secret-client", "/home/ada/work/secret-client"),
    ("vim /home/ada/My Projects/secret/notes.md - VIM", "/home/ada/My Projects/secret/notes.md"),
    ("(/srv/data/secret) — Files", "/srv/data/secret"),
    ("bash: /home/ada/work/secret-client: No such file", "/home/ada/work/secret-client"),
])
def test_paths_named_in_titles(title: str, path: str) -> None:
    assert path in title_paths(title)


@pytest.mark.parametrize("title", ["PR #42 · ada/gateway", "https://example.com/a/b — Firefox", "1/2 done", "A / B"])
def test_what_is_not_a_path_in_a_title(title: str) -> None:
    assert title_paths(title) == []


CLOSED = Manifest.from_dict({"project": [
    {"id": "client", "name": "Client", "ai": False, "paths": ["~/work/secret-client", "/srv/clients/*"]},
]})


@pytest.mark.parametrize(("title", "named"), [
    ("settings.py — secret-client — Visual Studio Code", True),
    ("● settings.py — secret-client (Workspace) — Visual Studio Code", True),
    ("secret-client – settings.py", True),
    ("secret-client", True),
    ("file.txt (secret-client) - Sublime Text", True),
    ("notes — work on secret-client today — Editor", True),
    ("readme.md — secret-client-v2 — Visual Studio Code", False),
    ("Meeting about secret-client", False),
    ("secret-clients — Files", False),
])
def test_a_routes_folder_name_in_an_editors_title(title: str, named: bool) -> None:
    assert bool(TitleFolders(Gate(CLOSED)).routes_named(title)) is named
    assert Gatekeeper(Gate(CLOSED)).allows("Code", None, None, title) is not named


def test_a_titles_verdict_is_the_gates_for_the_paths_it_names() -> None:
    keeper = Gatekeeper(Gate(CLOSED))
    assert keeper.owners("xterm", None, None, "ada@desk: ~/work/secret-client/src") == {"client"}
    assert keeper.owners("xterm", None, None, "ada@desk: /srv/clients/acme") == {"client"}
    assert keeper.owners("xterm", None, None, "ada@desk: ~/work/other") == frozenset()


def test_the_sql_exclusion_and_the_row_by_row_screen_agree_on_titles(tmp_path: Path, now: datetime) -> None:
    titles = [
        ("Code", "a.py — secret-client — Visual Studio Code", True),
        ("xterm", "ada@desk: ~/work/secret-client/src", True),
        ("xterm", "/srv/clients/acme: bash", True),
        ("Firefox", "secret-client — Mozilla Firefox", True),
        ("Code", "a.py — secret-client-v2 — Visual Studio Code", False),
        ("xterm", "ada@desk: ~/work/other", False),
        ("Firefox", "Inbox — Mozilla Firefox Private Browsing", None),  # private: neither kept nor left out
    ]
    path = tmp_path / "store.db"
    with Store.open(path) as store:  # written row by row, as an import older than the private forms would
        store.begin()
        for i, (app, title, _closed) in enumerate(titles):
            event = {**envelope(now - timedelta(minutes=20 - i), "app.focus", app, title), "id": f"e{i}"}
            row = row_of(event, parse_ts(event["ts"]), None, traits(event))
            store.add([(*row[:10], 0, *row[11:])])
        store.commit()
    keeper = Gatekeeper(Gate(CLOSED))
    since, until = int((now - timedelta(hours=1)).timestamp() * 1000), int(now.timestamp() * 1000) + 60_000
    with Store.reader(path) as store:
        kept, screened = keeper.screen(store.owner_groups(since, until), lambda group: group[:4])
        condition, params = keeper.exclusion(store, since, until)
        excluded = store.count(since, until, f" AND {condition}", params)
    closed_titles = {title for _app, title, closed in titles if closed}
    assert {group[3] for group in screened} == closed_titles
    assert {group[3] for group in kept} == {title for _app, title, closed in titles if closed is False}
    assert excluded == sum(group[4] for group in screened) == len(closed_titles)


def test_the_titles_table_is_filled_on_upgrade_kept_up_and_forgets_titles_past_the_retention(
    tmp_path: Path, now: datetime
) -> None:
    import sqlite3

    from gateway_timeline.importers.jsonl import ingest_lines

    from tests.plugins.timeline.timeline_helpers import WEEK_MS, fill, lines_of

    old_title = "a.py — secret-client — Visual Studio Code"
    path = fill(tmp_path / "store.db", [envelope(now - timedelta(hours=30), "app.focus", "Code", old_title)])
    db = sqlite3.connect(path)  # as schema 4 left it: no titles table
    db.execute("DROP TABLE labels")
    db.execute("PRAGMA user_version = 4")
    db.commit()
    db.close()
    with Store.reader(path) as store:
        assert not store.has_labels
        keeper = Gatekeeper(Gate(CLOSED))
        day = (int((now - timedelta(hours=40)).timestamp() * 1000), int(now.timestamp() * 1000))
        closed = keeper.closed(store, *day)
        assert closed is not None and closed.labels == (old_title,), "read from the index of an older store"
    recent = "ada@desk: ~/work/secret-client"
    with Store.open(path) as store:  # the next import upgrades it
        assert store.has_labels and [row[0] for row in store.db.execute("SELECT label FROM labels")] == [old_title]
        ingest_lines(lines_of([envelope(now - timedelta(minutes=5), "app.focus", "xterm", recent)]), store,
                     retention_ms=WEEK_MS)
        assert {row[0] for row in store.db.execute("SELECT label FROM labels")} == {old_title, recent}
    with Store.reader(path) as store:
        closed = Gatekeeper(Gate(CLOSED)).closed(store, *day)
        assert closed is not None and set(closed.labels) == {old_title, recent}
    with Store.open(path) as store:  # a day's retention: the old title goes with its event
        ingest_lines([], store, retention_ms=24 * 3_600_000)
        assert [row[0] for row in store.db.execute("SELECT label FROM labels")] == [recent]


@pytest.mark.parametrize("swept", [True, False])
def test_private_titles_a_store_still_holds_are_found_marked_or_judged(tmp_path: Path, now: datetime, swept) -> None:
    """An import of this version marks private windows' titles in the titles table (read whole); a store no
    import of this version has swept is judged title by title over the range. Both find the same."""
    from gateway_timeline.gating import private_rows
    from gateway_timeline.importers.jsonl import ingest_lines

    from tests.plugins.timeline.timeline_helpers import WEEK_MS, lines_of

    path = tmp_path / "store.db"
    private = "Inbox — Mozilla Firefox Private Browsing"
    with Store.open(path) as store:
        ingest_lines(lines_of([envelope(now - timedelta(minutes=9), "app.focus", "Code", "a.py")]), store,
                     retention_ms=WEEK_MS)
        event = {**envelope(now - timedelta(minutes=5), "app.focus", "Firefox", private), "id": "old"}
        row = row_of(event, parse_ts(event["ts"]), None, traits(event))
        store.begin()
        store.add([(*row[:10], 0, *row[11:])])  # as an import older than the forms stored it
        if not swept:
            store.db.execute("DELETE FROM meta WHERE key = 'private_forms'")
        store.commit()
    since, until = int((now - timedelta(hours=1)).timestamp() * 1000), int(now.timestamp() * 1000)
    with Store.reader(path) as store:
        assert store.private_labels_known is swept
        for span in ((since, until), (until - 30 * 3_600_000, until)):
            found = private_rows(store, *span)
            assert found is not None and found.labels == (private,)
