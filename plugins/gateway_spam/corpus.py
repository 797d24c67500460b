"""The corpus the filter learns from: each account's spam and ham folders, what spam_fetch brought, and labels.

- Folders: `spam_folders` and `ham_folders` name folders per account, written with `/` (`Junk`, `Archive/2026`),
  compared without case; a folder's mail is labelled by the list that names it.
- Fetched: `<data>/corpus/<spam|ham>/<id>.eml` (0600), id = the first 16 hex digits of the message's SHA-256;
  its place is `spam:corpus/<id>`.
- Labels: `<data>/labels.jsonl` (labels.py: one line per message and client, who gave it and when). A label
  wins over the folder.

A message's key is its Message-ID (`mid:<id>`), else `sha:<hash of the file>`: what labels and training
remember it by, whatever folder or name the file has now.
"""

from __future__ import annotations

import email.utils
import hashlib
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from attrs import define
from maildirs import Account, folders, messages
from spamfilter import read_message

from gateway_spam import labels
from gateway_spam.tokens import header_text, parse

CORPUS_PLACE = re.compile(r"^spam:corpus/([0-9a-f]{16})$")


@define
class Place:
    """One message the corpus can read: where it is, and what it is labelled by its folder."""

    path: Path
    label: str | None  # by its folder (None: in no spam or ham folder)
    account: str
    folder: str  # its folder's name, or "corpus" for what spam_fetch brought
    corpus_id: str = ""


def matches(folder: str, names: list[str]) -> bool:
    wanted = {n.strip("/").lower() for n in names}
    return folder.lower() in wanted


def folder_places(accounts: list[Account], spam_folders: list[str], ham_folders: list[str],
                  every_folder: bool = False) -> Iterator[Place]:
    """The messages of the accounts' spam and ham folders (or of every folder, labelled where a list names it)."""
    for account in accounts:
        for folder in folders(account.maildir):
            label = "spam" if matches(folder.name, spam_folders) else "ham" if matches(folder.name, ham_folders) \
                else None
            if label is None and not every_folder:
                continue
            for entry in messages(folder.path):
                yield Place(Path(entry.path), label, account.name, folder.name)


def corpus_folder(data: Path) -> Path:
    return data / "corpus"


def fetched_places(data: Path) -> Iterator[Place]:
    for label in ("spam", "ham"):
        folder = corpus_folder(data) / label
        if not folder.is_dir():
            continue
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if entry.name.endswith(".eml") and entry.is_file(follow_symlinks=False):
                yield Place(Path(entry.path), label, "", "corpus", entry.name[:-4])


def corpus_id(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:16]


def add_fetched(data: Path, raw: bytes, label: str, account: str) -> bool:
    """Keep one fetched message in the corpus (0600, written whole then renamed); False when it is already there."""
    identity = corpus_id(raw)
    for other in ("spam", "ham"):
        if (corpus_folder(data) / other / f"{identity}.eml").exists():
            return False
    folder = corpus_folder(data) / label
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = folder / f".{identity}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(raw)
    os.replace(temporary, folder / f"{identity}.eml")
    return True


def find_fetched(data: Path, identity: str) -> Place | None:
    for label in ("spam", "ham"):
        path = corpus_folder(data) / label / f"{identity}.eml"
        if path.is_file():
            return Place(path, label, "", "corpus", identity)
    return None


# -- labels (kept in labels.py: who gave each, and when) ------------------------------------------------------

labels_path, read_labels, write_label = labels.labels_path, labels.read_labels, labels.write_label


# -- one message ----------------------------------------------------------------------------------------------


def read_raw(path: Path) -> bytes | None:
    try:
        return read_message(path)
    except OSError:
        return None


def message_id_of(path: Path) -> str:
    """A file's Message-ID, from its headers alone (what finding a message by its mid: needs)."""
    import email.parser

    try:
        with open(path, "rb") as handle:
            head = handle.read(64 * 1024).replace(b"\r\n", b"\n").partition(b"\n\n")[0]
    except OSError:
        return ""
    message = email.parser.BytesHeaderParser().parsebytes(head)
    return header_text(message, "message-id").strip().strip("<>").strip()


def key_of(raw: bytes, message: Any = None) -> str:
    message = message if message is not None else parse(raw)
    message_id = header_text(message, "message-id").strip().strip("<>").strip()
    if message_id and len(message_id) < 500 and not any(c.isspace() for c in message_id):
        return f"mid:{message_id}"
    return "sha:" + hashlib.sha256(raw).hexdigest()[:32]


def body_digest(raw: bytes) -> str:
    """What two copies of one message share, whatever their headers: the body, spaces aside (for dedupe)."""
    _head, _sep, body = raw.replace(b"\r\n", b"\n").partition(b"\n\n")
    return hashlib.sha256(b" ".join(body.split())).hexdigest()


def when_of(message: Any, path: Path) -> float:
    written = header_text(message, "date")
    try:
        parsed = email.utils.parsedate_to_datetime(written) if written else None
    except (TypeError, ValueError, IndexError):
        parsed = None
    if parsed is not None:
        try:
            return parsed.timestamp()
        except (OverflowError, ValueError, OSError):
            pass
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def sender_of(message: Any) -> tuple[str, str]:
    """(display name, address) of From."""
    name, address = email.utils.parseaddr(header_text(message, "from"))
    return name, address.lower()


def label_of(place: Place, key: str, labels: Mapping[str, Mapping[str, Any]]) -> str | None:
    labelled = labels.get(key)
    return labelled["label"] if labelled else place.label
