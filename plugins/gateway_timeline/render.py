"""Sessions as an agent reads them: markdown (a heading and a few bullets each) or structured data.

Every window title, page title and URL is someone else's words: one line, masked, URL secrets removed.
Over the token budget (characters / 4), the oldest sessions are cut first: "resume my work" needs the
latest ones.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from datetime import tzinfo
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from gateway import plural
from gateway_timeline.envelope import Cleaner
from gateway_timeline.sessions import FOCUS_CHANGE_TYPES, Session
from gateway_timeline.timeexpr import iso_ms, to_local

CHARS_PER_TOKEN = 4
TITLE_LIMIT = 90
PAGES_SHOWN = 3
FILES_SHOWN = 4
TYPES_SHOWN = 4
# Kinds the other bullets already tell (window changes, pages, files): not counted again.
SUMMARISED_PREFIXES = ("app.", "window.", "browser.", "editor.", "user.")


def token_estimate(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def _clock(ms: int, zone: tzinfo | None) -> str:
    from datetime import UTC, datetime

    return to_local(datetime.fromtimestamp(ms / 1000, UTC), zone).strftime("%H:%M")


@lru_cache(maxsize=8192)
def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").removeprefix("www.")
    except ValueError:
        return ""


def _top_pages(session: Session, count: int) -> list[tuple[str, str]]:
    ranked = sorted(session.pages.items(), key=lambda item: -item[1][1])
    return [(url, label) for url, (label, _weight) in ranked[:count]]


def _more(shown: int, total: int) -> str:
    return f" and {total - shown} more" if total > shown else ""


def _title(session: Session, limit: int, clean: Cleaner) -> str:
    """The session's title, masked then cut; a file's name is taken from its path masked whole."""
    if any(session.labels) or not session.files:
        return clean.text(session.title, limit)
    return clean.file_name(max(session.files.items(), key=lambda item: item[1])[0], limit)


def markdown_of(session: Session, zone: tzinfo | None, clean: Cleaner | None = None) -> str:
    clean = clean or Cleaner()
    safe_text = clean.text
    title = session.title
    what = _title(session, TITLE_LIMIT, clean)
    heading = f"## {_clock(session.start_ms, zone)}-{_clock(session.end_ms, zone)} {safe_text(session.app, 60)}"
    lines = [heading + (f" — {what}" if what else "")]
    if session.pages:
        hosts = list(dict.fromkeys(h for h in (safe_text(_host(u), 100) for u in session.pages) if h))
        titles = [safe_text(label or url, 70) for url, label in _top_pages(session, PAGES_SHOWN)]
        pages = len(session.pages)
        lines.append(
            f"- Visited {plural(pages, 'page')}"
            + (f" on {', '.join(hosts[:3])}{_more(3, len(hosts))}" if hosts else "")
            + ": "
            + "; ".join(titles)
            + _more(len(titles), pages)
        )
    windows = [label for label, _w in session.labels.most_common() if label and label != title]
    page_titles = {label for label, _w in session.pages.values()}
    windows = [label for label in windows if label not in page_titles]
    if windows and not session.pages:
        shown = [safe_text(label, 70) for label in windows[:PAGES_SHOWN]]
        lines.append(f"- Also in windows: {'; '.join(shown)}{_more(len(shown), len(windows))}")
    if session.files:
        names = [clean.file_name(path, 60) for path, _w in session.files.most_common(FILES_SHOWN)]
        lines.append(f"- Files: {', '.join(names)}{_more(len(names), len(session.files))}")
    switches = sum(n for kind, n in session.counts.items() if kind in FOCUS_CHANGE_TYPES)
    if switches > 1:
        lines.append(f"- {switches} window changes")
    actions = Counter({k: n for k, n in session.counts.items() if not k.startswith(SUMMARISED_PREFIXES)})
    if actions:
        total = sum(actions.values())
        kinds = ", ".join(f"{n} {kind}" for kind, n in actions.most_common(TYPES_SHOWN))
        other = len(actions) - TYPES_SHOWN
        other_kinds = f" and {plural(other, 'other kind')}" if other > 0 else ""
        lines.append(f"- {plural(total, 'event')}: {kinds}{other_kinds}")
    if session.also:
        lines.append(f"- Brief switches to {', '.join(safe_text(a, 40) for a in session.also[:5])}")
    return "\n".join(lines)


def structured_of(session: Session, clean: Cleaner | None = None) -> dict[str, Any]:
    clean = clean or Cleaner()
    safe_text = clean.text
    return {
        "start": iso_ms(session.start_ms),
        "end": iso_ms(session.end_ms),
        "app": safe_text(session.app, 100),
        "bundle_id": session.bundle_id,
        "title": _title(session, TITLE_LIMIT, clean),  # read once per session
        "duration_s": round((session.end_ms - session.start_ms) / 1000),
        "event_count": session.events,
        "counts": dict(session.counts.most_common()),
        "pages": [
            {"title": safe_text(label, 200), "url": safe_text(url, 500)}
            for url, label in _top_pages(session, 10)
        ],
        "windows": [safe_text(label, 200) for label, _w in session.labels.most_common(5) if label],
        "files": [safe_text(path, 300) for path, _w in session.files.most_common(10)],
        "also": [safe_text(app, 100) for app in session.also],
    }


def _newest_within(parts: Iterable[str], budget_chars: int, separator: str) -> tuple[list[str], int]:
    """Parts (given newest first) while their joined length fits the budget, put back oldest first."""
    kept, used = [], 0
    for part in parts:
        cost = len(part) + len(separator)
        if used + cost > budget_chars:
            break
        kept.append(part)
        used += cost
    kept.reverse()
    return kept, used


def markdown(
    newest_first: Iterable[Session], total: int, zone: tzinfo | None, max_tokens: int
) -> tuple[str, bool]:
    """The markdown timeline and whether older sessions were cut to stay under `max_tokens`."""
    note_room = 220  # the note on what was cut, and the frame's two lines around the content
    clean = Cleaner()  # one per answer: the same titles come back in many sessions
    parts = (markdown_of(s, zone, clean) for s in newest_first)
    kept, _used = _newest_within(parts, max(max_tokens * CHARS_PER_TOKEN - note_room, 0), "\n\n")
    text = "\n\n".join(kept)
    truncated = len(kept) < total
    if truncated:
        cut = total - len(kept)
        note = f"_{plural(cut, 'older session')} cut to stay under max_tokens; narrow the range to see them._"
        text = note + ("\n\n" + text if text else "")
    return text, truncated


def structured(
    newest_first: Iterable[Session], total: int, max_tokens: int
) -> tuple[list[dict[str, Any]], bool, int]:
    """The sessions as data, newest kept within `max_tokens`; (sessions, truncated, token estimate)."""
    items: list[dict[str, Any]] = []
    used = 2
    clean = Cleaner()  # one per answer
    for session in newest_first:
        item = structured_of(session, clean)
        cost = len(json.dumps(item, ensure_ascii=False)) + 2
        if used + cost > max_tokens * CHARS_PER_TOKEN:
            break
        items.append(item)
        used += cost
    items.reverse()
    return items, len(items) < total, -(-used // CHARS_PER_TOKEN)
