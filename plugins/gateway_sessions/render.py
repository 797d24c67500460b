"""The lines hosts and the command line see: search hits, list rows, transcripts, and the snippets in hits."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from gateway_sessions.store import Row, StoredMessage

SNIPPET_LENGTH = 200
_MARKED = re.compile("\x02(.*?)\x03", re.DOTALL)
_MOST_DECIMALS = 20


def hit_lines(session_id: str, rank: float | str, title: str, snippet: str) -> list[str]:
    """A hit's three lines; `rank` as `rank_texts` wrote it (a float is written with two decimals)."""
    shown = rank if isinstance(rank, str) else f"{rank:.2f}"
    return [f"session {session_id} (rank {shown})", f"title: {title}", f"snippet: {snippet}"]


def rank_texts(ranks: Sequence[float]) -> list[str]:
    """The ranks of one answer's hits as decimals (never an exponent), each as precise as it needs to be.

    Two decimals at least (the seed's `0.42`), and two significant digits of each rank, so that a word found in most
    messages (BM25 near zero) is not `-0.00` on every hit; then, for ranks that differ but would read the same, one
    more digit at a time, up to twenty decimals.
    """
    decimals = [max(2, 1 - math.floor(math.log10(abs(rank)))) if rank else 2 for rank in ranks]
    while True:
        shown = [_decimal(rank, min(places, _MOST_DECIMALS)) for rank, places in zip(ranks, decimals, strict=True)]
        values: dict[str, set[float]] = {}
        for text, rank in zip(shown, ranks, strict=True):
            values.setdefault(text, set()).add(rank)
        unclear = [i for i, text in enumerate(shown) if len(values[text]) > 1 and decimals[i] < _MOST_DECIMALS]
        if not unclear:
            return shown
        for i in unclear:
            decimals[i] += 1


def _decimal(rank: float, decimals: int) -> str:
    text = f"{rank:.{decimals}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text  # never "-0.00"


def row_line(session_id: str, title: str, message_count: int, updated_at: str) -> str:
    return f"{session_id} {title} msgs={message_count} updated={updated_at}"


def header_lines(row: Row, title: str, messages: int | None = None) -> list[str]:
    """The transcript's header; `messages` is how many messages follow (all those stored when None)."""
    return [
        f"id: {row.id}",
        f"title: {title}",
        f"created: {row.created_at}",
        f"updated: {row.updated_at}",
        f"messages: {row.message_count if messages is None else messages}",
    ]


def transcript_lines(messages: Iterable[tuple[int, str, str]]) -> list[str]:
    """``[i] role`` then the text, for each (index, role, text) given."""
    lines: list[str] = []
    for index, role, text in messages:
        lines.append(f"[{index}] {role}")
        lines.append(text)
    return lines


def snippet(marked: str) -> str:
    """About 200 characters of a message around its first match, cut from the message masked whole.

    `marked` is the stored message (masked whole at import, as the index holds it) with the query's matches between
    \\x02 and \\x03 (FTS5's highlight, made on that masked text): nothing is masked after the cut, so no secret is cut
    in half first. The result is on one line, with … where it was cut.
    """
    terms = [term.casefold() for term in _MARKED.findall(marked) if term.strip()]
    text = marked.replace("\x02", "").replace("\x03", "")
    folded = text.casefold()
    found = [position for position in (folded.find(term) for term in terms) if position >= 0]
    centre = min(found) if found else 0
    start = max(0, centre - SNIPPET_LENGTH // 3)
    end = min(len(text), start + SNIPPET_LENGTH)
    start = max(0, end - SNIPPET_LENGTH)
    if start > 0:
        space = text.find(" ", start, centre)
        start = space + 1 if space >= 0 else start
    if end < len(text):
        space = text.rfind(" ", max(centre, start), end)
        end = space if space > start else end
    piece = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + piece + ("…" if end < len(text) else "")


def block_lines(block: dict[str, Any]) -> str:
    """One content block as the command line shows it (tool calls and results included)."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "thinking":
        return f"(thinking) {block.get('thinking', '')}"
    if kind == "tool_use":
        return f"tool_use {block.get('name', '')} {json.dumps(block.get('input'), ensure_ascii=False)}"
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            content = "\n".join(
                str(item.get("text", "")) if isinstance(item, dict) else str(item) for item in content
            )
        error = " error" if block.get("is_error") else ""
        return f"tool_result{error} ({block.get('tool_use_id', '')}) {content if content is not None else ''}"
    return f"({kind})"


def full_transcript(row: Row, messages: Iterable[StoredMessage]) -> str:
    """The transcript with every block, for ``gateway sessions show``."""
    lines = header_lines(row, row.title)
    lines.extend(
        transcript_lines(
            (message.index, message.role, "\n".join(block_lines(block) for block in message.blocks))
            for message in messages
        )
    )
    return "\n".join(lines)
