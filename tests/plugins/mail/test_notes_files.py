"""The two small stores of part 2: the tie store and new files with a name nothing has."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from gateway_mail import newfile
from gateway_mail.projects.ties import Ties, canonical, ident_of

from gateway import ToolError


def test_a_tie_is_made_once_and_read_from_either_side(tmp_path: Path) -> None:
    with Ties.at(tmp_path / "data" / "ties.sqlite3") as ties:
        assert ties.add("sioul:note/a.md", "mid:<x@example.com>") is True
        assert ties.add("mid:x@example.com", "sioul:note/a.md") is False
        assert ties.add("sioul:case/dupont", "sioul:note/a.md") is True
        assert ties.of("sioul:note/a.md") == ["mid:x@example.com", "sioul:project/dupont"]
        assert ties.of("sioul:project/dupont") == ["sioul:note/a.md"]
        assert ties.of("sioul:task/none") == []
        assert len(ties.all()) == 2
        before = ties.version()
        ties.add("sioul:note/a.md", "https://example.org/x")
        assert ties.version() != before
    mode = stat.S_IMODE(os.stat(tmp_path / "data" / "ties.sqlite3").st_mode)
    assert mode == 0o600


@pytest.mark.parametrize("bad", [
    "file:///etc/passwd", "/etc/passwd", "~/x", "javascript:alert(1)", "ftp://example.com/x", "smb://host/share",
    "https://example.com/\nSTATUS:COMPLETED", "sioul:note/a\r\nb", "sioul:nothing/x", "sioul:task/", "mid:",
    "https://user@example.com/", "https:///path", "https://example.com/a b", "", "sioul:note/a%0Ab.md",
    "sioul:task/x%0D%0ASTATUS:COMPLETED", "mid:a b@example.com",
])
def test_a_tie_goes_only_to_what_the_gateway_knows_or_a_web_page(bad: str, tmp_path: Path) -> None:
    with Ties.at(tmp_path / "ties.sqlite3") as ties:
        with pytest.raises(ToolError):
            ties.add("sioul:note/a.md", bad)
        assert ties.all() == []


def test_canonical_keeps_pages_and_reads_old_project_addresses() -> None:
    assert canonical("https://example.org/quote?id=3") == "https://example.org/quote?id=3"
    assert canonical("sioul:case/dupont") == "sioul:project/dupont"
    assert canonical("mid:<a@example.com>") == "mid:a@example.com"
    assert canonical("sioul:note/Plumber quote.md") == "sioul:note/Plumber%20quote.md"
    assert canonical("sioul:note/Plumber%20quote.md") == "sioul:note/Plumber%20quote.md"
    assert ident_of(canonical("sioul:note/a/100% sure.md"), "note") == "a/100% sure.md"
    assert ident_of("sioul:case/dupont", "project") == "dupont" and ident_of("mid:x@y", "note") is None
    with pytest.raises(ToolError):
        canonical("data:text/plain,x")


@pytest.mark.parametrize(("title", "expected"), [
    ("Plumber quote", "Plumber quote.md"),
    ("../../etc/passwd", "-..-etc-passwd.md"),
    ("/etc/passwd", "-etc-passwd.md"),
    ("C:\\Windows\\win.ini", "C--Windows-win.ini.md"),
    ("CON", "_CON.md"),
    ("nul.txt", "_nul.txt.md"),
    ("com1", "_com1.md"),
    ("..", "note.md"),
    (".hidden", "hidden.md"),
    ("trailing dots...", "trailing dots.md"),
    ("a\u2028b", "a b.md"),
])
def test_safe_names(title: str, expected: str) -> None:
    assert newfile.safe_name(title, ".md") == expected


def test_a_long_title_is_cut_by_bytes_at_a_character_edge() -> None:
    name = newfile.safe_name("é" * 300 + "🦊" * 50, ".md")
    assert len(name.encode()) <= newfile.MAX_NAME_BYTES + 3
    name.encode("utf-8").decode("utf-8")
    assert name.startswith("é" * 100) and name.endswith(".md")


def test_two_files_of_one_title_both_exist(tmp_path: Path) -> None:
    first = newfile.create(tmp_path, "Same", b"one")
    second = newfile.create(tmp_path, "Same", b"two")
    assert first == Path("Same.md") and second == Path("Same (2).md")
    assert (tmp_path / first).read_bytes() == b"one" and (tmp_path / second).read_bytes() == b"two"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Same (2).md", "Same.md"]


def test_many_writers_of_one_title_at_once_lose_nothing(tmp_path: Path) -> None:
    made: list[Path] = []

    def write(n: int) -> None:
        made.append(newfile.create(tmp_path, "Race", f"text {n}".encode()))

    threads = [threading.Thread(target=write, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(made)) == 12
    assert sorted((tmp_path / p).read_text() for p in made) == sorted(f"text {n}" for n in range(12))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_subfolders_are_made_inside_and_never_left(tmp_path: Path) -> None:
    assert newfile.create(tmp_path, "n", b"x", folder="clients/dupont") == Path("clients/dupont/n.md")
    for bad in ("../out", "/tmp", "C:/x", "c:x", "a/../../b", "CON/x", "a\nb", "~/x", "\\\\server\\share"):
        with pytest.raises(ToolError):
            newfile.create(tmp_path, "n", b"x", folder=bad)
    assert not (tmp_path.parent / "out").exists()


def test_a_link_on_the_way_is_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "notes", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "away").symlink_to(outside)
    (root / "file").write_text("x")
    with pytest.raises(ToolError):
        newfile.create(root, "n", b"x", folder="away")
    with pytest.raises(ToolError):
        newfile.create(root, "n", b"x", folder="away/deeper")
    with pytest.raises(ToolError):
        newfile.create(root, "n", b"x", folder="file")
    assert list(outside.iterdir()) == []


def test_a_name_taken_by_a_dangling_link_is_not_written_through(tmp_path: Path) -> None:
    target = tmp_path / "target"
    root = tmp_path / "notes"
    root.mkdir()
    (root / "Title.md").symlink_to(target)
    made = newfile.create(root, "Title", b"x")
    assert made == Path("Title (2).md") and not target.exists()


def test_a_folder_that_must_exist_is_not_made(tmp_path: Path) -> None:
    with pytest.raises(ToolError):
        newfile.create(tmp_path, "t", b"x", folder="nolist", make_folders=False)
    assert not (tmp_path / "nolist").exists()


def _count(connection) -> int:
    return connection.execute("SELECT count(*) FROM docs").fetchone()[0]


def test_an_index_stopped_at_a_deadline_keeps_what_it_did_and_goes_on(tmp_path: Path) -> None:
    from gateway_mail import docindex
    from gateway_mail.notes import notes

    root = tmp_path / "notes"
    for number in range(450):
        folder = root / f"f{number % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"n{number}.md").write_text(f"# Note {number}\n\nword{number}\n")
    connection = docindex.connect(tmp_path / "index.sqlite", root)
    calls = iter([False, True])
    assert docindex.refresh(connection, root, notes.SUFFIXES, notes.read_file, stop=lambda: next(calls)) is False
    assert _count(connection) == docindex.BATCH
    assert docindex.refresh(connection, root, notes.SUFFIXES, notes.read_file) is True
    assert _count(connection) == 450
    # Text changed in place, the folder's time unchanged: found at the next sweep of every file.
    note = root / "f0" / "n0.md"
    folder_time = os.stat(note.parent).st_mtime_ns
    note.write_text("# Note 0\n\nrewritten in place, longer than before\n")
    os.utime(note.parent, ns=(folder_time, folder_time))
    docindex.refresh(connection, root, notes.SUFFIXES, notes.read_file, now=9e12)
    assert connection.execute("SELECT count(*) FROM docs_fts WHERE docs_fts MATCH 'rewritten'").fetchone()[0] == 1
    assert _count(connection) == 450
    connection.close()
