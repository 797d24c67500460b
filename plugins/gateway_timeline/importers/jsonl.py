"""Envelope events as JSON lines, from any recorder: good lines kept, bad ones counted with their reasons.

A `recorder.heartbeat` event is not stored: it tells get_status that the recorder is alive (and may carry
`paused`, `events_dropped`, `degraded`, `capture`, `permissions_ok` in its data).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from typing import Any

from attrs import define, field

from gateway_timeline.envelope import EnvelopeError, is_private, normalise, traits
from gateway_timeline.store import Store, row_of
from gateway_timeline.timeexpr import iso_ms

HEARTBEAT_TYPE = "recorder.heartbeat"
STATUS_KEYS = ("paused", "events_dropped", "degraded", "capture", "permissions_ok")
BATCH = 2000
KEPT_PROBLEMS = 20


@define
class IngestReport:
    lines: int = 0
    stored: int = 0  # events kept from the lines, new or not
    new: int = 0  # of those, the events the store did not hold yet (the others replaced themselves)
    bad: int = 0
    private_dropped: int = 0
    too_old: int = 0
    heartbeats: int = 0
    pruned: int = 0
    problems: list[str] = field(factory=list)  # the first few, "line N: why"


def _heartbeat(store: Store, envelope: dict[str, Any], ts_ms: int, source: str) -> None:
    data = envelope.get("data") or {}
    beat = {"at_ms": ts_ms, "source": envelope.get("source") or source}
    beat.update({k: data[k] for k in STATUS_KEYS if k in data})
    previous = store.meta("heartbeat") or {}
    if ts_ms >= previous.get("at_ms", 0):
        store.set_meta("heartbeat", beat)


def ingest_lines(
    lines: Iterable[str | bytes],
    store: Store,
    *,
    retention_ms: int,
    now_ms: int | None = None,
    live: bool = False,
    progress: Callable[[int], None] | None = None,
) -> IngestReport:
    """Store the envelope events of `lines`; with `live` (a recorder piping in), each batch is also a heartbeat."""
    now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
    oldest_ms = now_ms - retention_ms
    report = IngestReport()
    rows: list[tuple] = []
    last_flush = time.monotonic()

    def flush() -> None:
        nonlocal last_flush
        last_flush = time.monotonic()
        report.new += store.add(rows, count_new=True)
        report.stored += len(rows)
        rows.clear()
        if live:
            _heartbeat(store, {"source": "jsonl"}, int(time.time() * 1000), "jsonl")
        store.commit()
        store.begin()

    store.begin()
    store.forget_private()  # not in private_dropped, which counts what this import read
    try:
        for number, line in enumerate(lines, start=1):
            report.lines += 1
            if isinstance(line, bytes):
                line = line.decode("utf-8", errors="replace")
            if not line.strip():
                report.lines -= 1
                continue
            try:
                envelope = normalise(json.loads(line))
            except (ValueError, EnvelopeError) as error:
                report.bad += 1
                if len(report.problems) < KEPT_PROBLEMS:
                    reason = str(error) if isinstance(error, EnvelopeError) else "not valid JSON"
                    report.problems.append(f"line {number}: {reason}")
                continue
            ts_ms = envelope.pop("_ts_ms")
            envelope["ts"] = iso_ms(ts_ms)
            if envelope["type"] == HEARTBEAT_TYPE:
                report.heartbeats += 1
                _heartbeat(store, envelope, ts_ms, "jsonl")
                continue
            if is_private(envelope):
                report.private_dropped += 1
                continue
            if ts_ms < oldest_ms:
                report.too_old += 1
                continue
            duration = (envelope.get("data") or {}).get("duration_s")
            end_ms = ts_ms + int(duration * 1000) if isinstance(duration, int | float) and duration > 0 else None
            rows.append(row_of(envelope, ts_ms, end_ms, traits(envelope)))
            # A recorder piping in live gets its events committed every second or so.
            if len(rows) >= BATCH or (live and time.monotonic() - last_flush > 1):
                if progress is not None:
                    progress(len(rows))
                flush()
        report.new += store.add(rows, count_new=True)
        report.stored += len(rows)
        if live:
            _heartbeat(store, {"source": "jsonl"}, int(time.time() * 1000), "jsonl")
        report.pruned = store.prune(oldest_ms)
        store.add_to_counter("bad_lines", report.bad)
        store.commit()
    except BaseException:
        if store.db.in_transaction:
            store.commit()  # what was read before the interruption is kept
        raise
    return report
