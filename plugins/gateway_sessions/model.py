"""What an importer hands the store: one agent session, its messages as content blocks, and the line count it could not read."""

from __future__ import annotations

import datetime as dt
import re
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


# The form agents write most (Claude Code on every line): UTC, with or without a fraction of a second. Taken apart by
# hand rather than through datetime (a third of the time Claude Code's reader spends outside json.loads); the date is
# still checked by datetime, once per day seen, and the time of day by its digits. Years before 1000 go the long way
# (strftime writes them without leading zeros, and the result must not change).
_UTC_STAMP = re.compile(
    r"([1-9][0-9]{3}-[0-9]{2}-[0-9]{2})T([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(?:\.[0-9]{1,6})?Z"
)
_valid_days: dict[str, bool] = {}


def _valid_day(day: str) -> bool:
    valid = _valid_days.get(day)
    if valid is None:
        try:
            dt.date.fromisoformat(day)
            valid = True
        except ValueError:
            valid = False
        if len(_valid_days) < 100_000:
            _valid_days[day] = valid
    return valid


def iso(value: Any) -> str:
    """A timestamp (ISO text, epoch seconds or milliseconds) as UTC ``YYYY-MM-DDTHH:MM:SSZ``; '' when unreadable.

    One fixed form, so that text order is time order in the store's indexes.
    """
    if value is None or value == "":
        return ""
    if type(value) is str:
        stamp = _UTC_STAMP.fullmatch(value)
        if stamp is not None and _valid_day(stamp[1]):
            return f"{stamp[1]}T{stamp[2]}:{stamp[3]}:{stamp[4]}Z"
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
