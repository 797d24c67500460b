"""Which files of the organizer's folders (task lists, calendars, contacts, notes) the last reading could read only
by their summary, or not at all: one sentence a folder for `gateway doctor` (freshness.py's sources), naming them.

Doctor parses no file itself: it reads what the plan's cache and the contacts' and notes' indexes recorded.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gateway import Context, plural

MOST_NAMED = 20  # files named per folder and kind; the others are counted


def _names(paths: list[str], root: Path) -> str:
    named = [str(Path(p).relative_to(root)) if Path(p).is_relative_to(root) else p for p in paths[:MOST_NAMED]]
    more = f" and {len(paths) - MOST_NAMED} more" if len(paths) > MOST_NAMED else ""
    return ", ".join(named) + more


def _sentence(found: list[tuple[str, str]], root: Path, summary: str, unreadable: str) -> str:
    parts = []
    read_in_part = [path for path, problem in found if problem == "summary"]
    not_read = [path for path, problem in found if problem != "summary"]
    if read_in_part:
        parts.append(f"{plural(len(read_in_part), 'file')} read by summary only ({summary}): "
                     f"{_names(read_in_part, root)}")
    if not_read:
        parts.append(f"{plural(len(not_read), 'file')} {unreadable}: {_names(not_read, root)}")
    return "; ".join(parts)


def _indexed(index: Path, root: Path) -> list[tuple[str, str]]:
    if not index.exists():
        return []
    from gateway_mail import docindex

    try:
        connection = sqlite3.connect(f"file:{index}?mode=ro", uri=True, timeout=10)
    except sqlite3.Error:
        return []
    try:
        return [(str(root / relative), problem) for relative, problem in docindex.problems(connection)]
    except sqlite3.Error:  # an index made by an older version, without the column: nothing recorded
        return []
    finally:
        connection.close()


def said(ctx: Context, key: str, root: Path) -> str:
    """What doctor says of the folder set by `key` ("tasks", "calendars", "contacts", "notes"); "" when every
    file was read whole."""
    from gateway_mail.notes import contacts, notes
    from gateway_mail.plan import vdir

    cache = Path(ctx.folders.cache)
    if key in ("tasks", "calendars"):
        return _sentence(vdir.problems_of(cache, root), root,
                         f"over {vdir.MAX_FILE // (1 << 20)} MiB or {vdir.MAX_LINES:,} lines: the main fields of "
                         "their first tasks or events",
                         "could not be read as iCalendar (left out until it changes)")
    if key == "contacts":
        return _sentence(_indexed(cache / contacts.INDEX_FILE, root), root,
                         f"over {contacts.MAX_FILE // (1 << 20)} MiB or {contacts.MAX_LINES:,} lines: FN, EMAIL, TEL, "
                         "ORG and NOTE of their first cards, or their first lines",
                         "could not be read as vCard (left out until it changes)")
    if key == "notes":
        return _sentence(_indexed(cache / notes.INDEX_FILE, root), root, "their first megabyte",
                         "could not be read (left out until it changes)")
    return ""
