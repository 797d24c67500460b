"""The labels: which message someone said is spam or ham, who said it (the client), and when.

`<data>/labels.jsonl`, 0600, one JSON line per (message, client): {key, label, place, at, client, client_version}.
`client` is the MCP client's name as its initialize gave it, or `cli` for the person's own command line
(`gateway call spam_label`); a client's next label of the same message replaces its own line. The file is written
whole under a lock, then renamed, so several gateway processes and the person's terminal never lose a line.

A message's label is the person's (`cli`) when they gave one, else the latest an agent gave: undoing a client's
labels (`gateway spam labels --undo-client NAME`) lets the others' show again, as if it had never labelled.
"""

from __future__ import annotations

import calendar
import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PERSON = "cli"  # the client name of labels given on the person's command line
UNRECORDED = "unrecorded"  # labels written before the client was recorded
DAY = 24 * 3600


def labels_path(data: Path) -> Path:
    return data / "labels.jsonl"


def client_of(entry: dict[str, Any]) -> str:
    return str(entry.get("client") or UNRECORDED)


def moment_of(entry: dict[str, Any]) -> float:
    """When a label was given (0 when its line does not say)."""
    try:
        return float(calendar.timegm(time.strptime(str(entry.get("at", "")), "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return 0.0


def entries(data: Path) -> list[dict[str, Any]]:
    """Every label line, in the file's order (the oldest first); broken lines skipped."""
    found: list[dict[str, Any]] = []
    try:
        lines = labels_path(data).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return found
    for line in lines:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict) and entry.get("label") in ("spam", "ham") and isinstance(entry.get("key"), str):
            found.append(entry)
    return found


def effective(lines: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """key -> the label that counts: the person's when there is one, else the latest an agent gave."""
    chosen: dict[str, dict[str, Any]] = {}
    for entry in sorted(lines, key=moment_of):  # stable: the file's order breaks ties
        key = entry["key"]
        if client_of(chosen.get(key, {})) == PERSON and client_of(entry) != PERSON:
            continue
        chosen[key] = entry
    return chosen


def read_labels(data: Path) -> dict[str, dict[str, Any]]:
    """key -> its label line (the one that counts)."""
    return effective(entries(data))


def agent_labels_since(lines: list[dict[str, Any]], moment: float) -> list[dict[str, Any]]:
    """The lines agents (every client but the person's command line) gave since `moment`, oldest first."""
    return sorted((e for e in lines if client_of(e) != PERSON and moment_of(e) >= moment), key=moment_of)


@contextlib.contextmanager
def locked(data: Path) -> Iterator[None]:
    """Held while the labels are read and rewritten (other gateway processes and the terminal wait)."""
    data.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(data / ".labels.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


def _write(data: Path, lines: list[dict[str, Any]]) -> None:
    path = labels_path(data)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.writelines(json.dumps(entry, sort_keys=True) + "\n" for entry in lines)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)


def new_entry(key: str, label: str, place: str, client: str = PERSON, client_version: str = "") -> dict[str, Any]:
    return {"key": key, "label": label, "place": place, "client": client, "client_version": client_version,
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def write_label(data: Path, key: str, label: str, place: str, client: str = PERSON,
                client_version: str = "") -> str | None:
    """Label one message for `client` (replacing that client's earlier line); the label it had before, if any."""
    with locked(data):
        return put(data, new_entry(key, label, place, client, client_version))


def put(data: Path, entry: dict[str, Any]) -> str | None:
    """Write one label line (the caller holds `locked`); the message's label before it, if any."""
    lines = entries(data)
    before = effective(lines).get(entry["key"], {}).get("label")
    lines = [e for e in lines if not (e["key"] == entry["key"] and client_of(e) == client_of(entry))]
    _write(data, [*lines, entry])
    return before


def remove_client(data: Path, client: str) -> list[dict[str, Any]]:
    """Take away every label `client` gave; the lines removed."""
    with locked(data):
        lines = entries(data)
        removed = [e for e in lines if client_of(e) == client]
        if removed:
            _write(data, [e for e in lines if client_of(e) != client])
        return removed


def by_client(lines: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """client -> {labels, spam, ham, versions, first, last} (what `gateway spam labels` prints)."""
    summary: dict[str, dict[str, Any]] = {}
    for entry in lines:
        row = summary.setdefault(client_of(entry), {"labels": 0, "spam": 0, "ham": 0, "versions": [],
                                                    "first": entry.get("at", ""), "last": entry.get("at", "")})
        row["labels"] += 1
        row[entry["label"]] += 1
        version = str(entry.get("client_version", ""))
        if version and version not in row["versions"]:
            row["versions"].append(version)
        at = str(entry.get("at", ""))
        row["first"], row["last"] = min(row["first"], at), max(row["last"], at)
    return summary
