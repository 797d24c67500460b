"""What an importer hands the store: one agent session, its messages as content blocks, and the line count it could not read."""

from __future__ import annotations

import datetime as dt
from typing import Any

from attrs import define, field


@define
class Message:
    """One turn; `key` is the agent's own message id (or a stable stand-in), unique within its session."""

    key: str
    role: str
    blocks: list[dict[str, Any]]
    timestamp: str = ""


@define
class Session:
    """One session as an agent recorded it: `id` is the agent's own id, `cwd` the folder it ran in."""

    agent: str
    id: str
    title: str = ""
    cwd: str = ""
    created_at: str = ""
    updated_at: str = ""
    parent_id: str = ""
    messages: list[Message] = field(factory=list)


def iso(value: Any) -> str:
    """A timestamp (ISO text, epoch seconds or milliseconds) as UTC ``YYYY-MM-DDTHH:MM:SSZ``; '' when unreadable.

    One fixed form, so that text order is time order in the store's indexes.
    """
    if value is None or value == "":
        return ""
    try:
        if isinstance(value, int | float):
            seconds = value / 1000 if value > 1e11 else value
            moment = dt.datetime.fromtimestamp(seconds, dt.UTC)
        else:
            moment = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=dt.UTC)
    except (ValueError, OverflowError, OSError):
        return ""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def text_of(blocks: list[dict[str, Any]]) -> str:
    """The words a reader sees in a message: its text blocks, joined (tool calls, results and thinking left out)."""
    return "\n\n".join(
        block["text"]
        for block in blocks
        if block.get("type") == "text" and isinstance(block.get("text"), str)
    ).strip()


def first_words(session: Session, limit: int = 80) -> str:
    """A title made of the first words the person typed, on one line."""
    for message in session.messages:
        if message.role != "user":
            continue
        text = " ".join(text_of(message.blocks).split())
        if text and not text.startswith("<"):
            return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
    return ""
