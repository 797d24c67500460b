"""Hostile PDFs, each made for real with a library: a compression bomb, a page that never ends, a PDF encrypted
with a password, one of 2,000 pages and one cut short. Shared by the plugin's tests and the served attack test."""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

import pytest
from gateway_papers import sample


def _with_content(path: Path, decoded: bytes) -> Path:
    """A one-page PDF (pypdf's writer) whose content stream is `decoded`, stored FlateDecode-compressed."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    helvetica = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                                  NameObject("/BaseFont"): NameObject("/Helvetica")})
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): helvetica})})
    stream = DecodedStreamObject()
    stream.set_data(decoded)
    page.replace_contents(stream.flate_encode())
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        writer.write(handle)
    return path


def bomb(path: Path) -> Path:
    """A few hundred KiB that inflate to 100 MB: past pypdf's own bound on one stream."""
    return _with_content(path, b"0 0 m\n" * (100_000_000 // 6))


# What stops the endless page is whichever bound it meets first: its reading's time on a slow or loaded machine, its
# memory cap on a quick one (pypdf holds the decoded stream's operations), or, under the served default, the size
# its stream inflates to. Either way it is not read, and says which bound it met.
ENDLESS_BOUNDS = ("took more than 10 s (max_seconds)", "MiB allowed (max_memory_mb)", "inflates past the reader's bound")


def endless(path: Path) -> Path:
    """A page of 40 MB of drawing operators, under pypdf's bound: reading it takes longer than any file may."""
    return _with_content(path, b"BT /F1 12 Tf 10 10 Td (endless) Tj ET\n" * (40_000_000 // 39))


def encrypted(path: Path, password: str = "s3cret-Pass") -> Path:
    """A real PDF with words, then encrypted (AES-256) by pypdf's writer with a user password."""
    from pypdf import PdfReader, PdfWriter

    plain = sample.pdf(path.with_name(path.stem + "-plain.pdf"), "The locked words of a sealed letter.")
    writer = PdfWriter(clone_from=PdfReader(plain))
    writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm="AES-256")
    with path.open("wb") as handle:
        writer.write(handle)
    plain.unlink()
    return path


def long(path: Path, pages: int = 2000) -> Path:
    return sample.pdf(path, [f"Page {n} of the endless annual report. Keyword ledgerline." for n in range(1, pages + 1)])


def truncated(path: Path) -> Path:
    whole = sample.pdf(path.with_name(path.stem + "-whole.pdf"), ["A letter cut in half."] * 4)
    data = whole.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    whole.unlink()
    return path


def all_of(folder: Path) -> dict[str, Path]:
    """Every hostile file, in `folder`, by name."""
    return {"bomb": bomb(folder / "bomb.pdf"), "endless": endless(folder / "endless.pdf"),
            "encrypted": encrypted(folder / "encrypted.pdf"), "long": long(folder / "long.pdf"),
            "truncated": truncated(folder / "truncated.pdf")}


def made_once(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every hostile file, made once a run for every test and worker that asks (their making costs seconds of
    CPU: the bomb and the endless page are compressed from 140 MB), in the temporary root the xdist workers share,
    under a file lock. The files are the askers' to read or copy, never to change."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER") is not None:
        shared = shared.parent  # every worker's base is a folder of this one
    folder = shared / "papers-hostile"
    names = ("bomb", "endless", "encrypted", "long", "truncated")
    with open(shared / "papers-hostile.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when the making fails
        if not (folder / "made").exists():
            if folder.exists():  # an asker before this one failed half-way: start again
                shutil.rmtree(folder)
            folder.mkdir()
            all_of(folder)
            (folder / "made").touch()
    return {name: folder / f"{name}.pdf" for name in names}


def wide(path: Path) -> Path:
    """A page whose one stream inflates to 70 MB (under pypdf's bound): more than a small memory cap holds."""
    return _with_content(path, b"BT /F1 12 Tf 10 10 Td (wide) Tj ET\n" + b" " * 70_000_000)
