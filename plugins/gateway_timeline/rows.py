"""One stored event as a named row: the columns of the store's `events` table, in their order."""

from __future__ import annotations

from typing import NamedTuple

# How an event's body was kept: the envelope as JSON, or ActivityWatch's own data (the envelope made when read).
FORMAT_ENVELOPE, FORMAT_ACTIVITYWATCH = 0, 1


class EventRow(NamedTuple):
    """An event as the store keeps it: its envelope's id and times, the traits the gate routes on, and its body.

    A tuple (SQLite takes it as the parameters of an INSERT) whose fields are named (`row.app`, not `row[5]`).
    """

    id: str
    ts_ms: int
    end_ms: int | None
    type: str
    source: str | None
    app: str | None
    bundle_id: str | None
    label: str | None
    url: str | None
    path: str | None
    private: int
    format: int
    body: str


EVENT_COLUMNS = ", ".join(EventRow._fields)
