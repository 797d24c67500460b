"""Contact cards and notes from strangers, read without a server: nothing binary reaches vobject, a big card file
is read by its summary, and a file whose reading fails in any way is recorded unreadable until it changes."""

from __future__ import annotations

import os
import time
from pathlib import Path

from gateway_mail import docindex
from gateway_mail.notes import contacts, notes


def _card(uid: str, *lines: str) -> bytes:
    return ("\r\n".join(["BEGIN:VCARD", "VERSION:3.0", f"UID:{uid}", *lines, "END:VCARD"]) + "\r\n").encode()


def test_a_photo_logo_sound_or_key_never_reaches_vobject(tmp_path: Path, monkeypatch) -> None:
    import vobject

    given: list[str] = []
    real = vobject.readComponents

    def reading(text, *args, **kwargs):
        given.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(vobject, "readComponents", reading)
    blob = "\r\n ".join(["QUJD" * 18] * 200)
    path = tmp_path / "ada.vcf"
    path.write_bytes(_card("ada", "FN:Ada Example", f"PHOTO;ENCODING=b;TYPE=JPEG:{blob}", f"LOGO;ENCODING=b:{blob}",
                           f"SOUND;ENCODING=b:{blob}", f"item1.KEY;ENCODING=b:{blob}", "EMAIL:ada@example.com"))
    found = contacts.read_file(path, "book/ada.vcf")
    assert found.problem == "" and found.docs[0].extra["emails"] == ["ada@example.com"]
    assert given and not any(name in given[0] for name in ("PHOTO", "LOGO", "SOUND", "KEY", "QUJD"))


def test_a_card_file_over_the_bound_is_read_by_its_summary_fields_only(tmp_path: Path) -> None:
    path = tmp_path / "big.vcf"
    padding = "\r\n".join(f"X-PADDING-{n}:{'p' * 60}" for n in range(contacts.MAX_FILE // 70 + 10))
    path.write_bytes(_card("big", "FN:Big Card", "TITLE:Not in a summary", padding, "EMAIL:big@example.net",
                           "ORG:Example Org", "NOTE:kept", "TEL:+1 555 0100"))
    assert path.stat().st_size > contacts.MAX_FILE
    found = contacts.read_file(path, "book/big.vcf")
    doc, = found.docs
    assert found.problem == docindex.SUMMARY_ONLY
    assert (doc.extra["fn"], doc.extra["emails"], doc.extra["org"], doc.extra["note"], doc.extra["tels"]) == (
        "Big Card", ["big@example.net"], "Example Org", "kept", ["+1 555 0100"])
    assert not doc.extra["title"]


def test_a_file_whose_reading_fails_in_any_way_is_recorded_unreadable_and_not_read_again_until_it_changes(
        tmp_path: Path) -> None:
    root = tmp_path / "contacts"
    (root / "book").mkdir(parents=True)
    (root / "book" / "ada.vcf").write_bytes(_card("ada", "FN:Ada Example"))
    broken = root / "book" / "broken.vcf"
    broken.write_bytes(_card("broken", "FN:Broken", "NOTE;ENCODING=b:!!!notbase64"))
    read: list[str] = []

    def reader(path: Path, relative: str):
        read.append(relative)
        if relative.endswith("ada.vcf"):
            return contacts.read_file(path, relative)
        raise KeyError("a reader gone wrong in a way nobody listed")

    connection = docindex.connect(tmp_path / "index.sqlite", root)
    docindex.refresh(connection, root, contacts.SUFFIXES, reader)
    assert docindex.problems(connection) == [("book/broken.vcf", docindex.UNREADABLE)]
    assert [r["key"] for r in connection.execute("SELECT key FROM docs")] == ["ada"]
    read.clear()
    docindex.refresh(connection, root, contacts.SUFFIXES, reader, now=time.time() + docindex.SWEEP_SECONDS + 1)
    assert read == []  # every file looked at, none read again: neither changed
    broken.write_bytes(_card("broken", "FN:Mended"))
    os.utime(broken, ns=(time.time_ns(), time.time_ns() + 3_000_000_000))
    docindex.refresh(connection, root, contacts.SUFFIXES, contacts.read_file,
                     now=time.time() + 2 * docindex.SWEEP_SECONDS + 2)
    assert docindex.problems(connection) == []
    assert {r["title"] for r in connection.execute("SELECT title FROM docs")} == {"Ada Example", "Mended"}
    # vobject's own failure is one too: the broken card of the start, read by the real reader.
    broken.write_bytes(_card("broken", "FN:Broken", "NOTE;ENCODING=b:!!!notbase64"))
    assert contacts.read_file(broken, "book/broken.vcf").problem == docindex.UNREADABLE
    connection.close()


def test_a_note_whose_reading_fails_is_counted_and_the_others_are_indexed(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "fine.md").write_text("# Fine\n\nwords\n")
    (root / "odd.md").write_text("# Odd\n\nwords\n")
    real = notes.title_of

    def title_of(text: str, relative: str) -> str:
        if relative == "odd.md":
            raise UnicodeError("a title no one could make")
        return real(text, relative)

    monkeypatch.setattr(notes, "title_of", title_of)
    connection = docindex.connect(tmp_path / "index.sqlite", root)
    docindex.refresh(connection, root, notes.SUFFIXES, notes.read_file)
    assert docindex.problems(connection) == [("odd.md", docindex.UNREADABLE)]
    assert [r["key"] for r in connection.execute("SELECT key FROM docs")] == ["fine.md"]
    connection.close()
