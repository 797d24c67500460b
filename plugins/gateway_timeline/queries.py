"""The three answers as pure functions of a store, the gate's verdicts, a range and a clock.

The tools (tools.py) only resolve arguments, open the store and wrap these in an Answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import tzinfo
from typing import Any

from gateway_timeline import render, sessions
from gateway_timeline.envelope import Cleaner, envelope_of, for_agent, is_private
from gateway_timeline.gating import Gatekeeper, private_rows, repeats, without
from gateway_timeline.limits import DEFAULT_LIMIT, DEFAULT_MAX_TOKENS, EVENT_ADDRESS, MAX_LIMIT  # noqa: E402, F401
from gateway_timeline.store import StoreReader, filter_clause
from gateway_timeline.timeexpr import iso_ms


def _range(since_ms: int, until_ms: int) -> dict[str, str]:
    return {"since": iso_ms(since_ms).replace(".000Z", "Z"), "until": iso_ms(until_ms).replace(".000Z", "Z")}


def timeline(
    store: StoreReader | None,
    keeper: Gatekeeper,
    since_ms: int,
    until_ms: int,
    *,
    oldest_ms: int,
    zone: tzinfo | None,
    format: str = "markdown",
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> dict[str, Any]:
    """get_timeline's result: range, format, content or sessions, token_estimate, truncated, left_out.

    Sessions are found from per-minute counts; only those that fit the budget, newest first, get their
    details read and rendered.
    """
    start = max(since_ms, oldest_ms)
    found: list[sessions.Session] = []
    details: Callable[[Sequence[sessions.Session]], list[list[tuple[Any, ...]]]] = lambda group: [[] for _ in group]  # noqa: E731
    left_out = 0
    if store is not None and start < until_ms:
        # Private windows a store may still hold: in no session and no count.
        visible = without("", [], private_rows(store, start, until_ms, reach_back=True))
        if keeper.uniform or keeper.gate.outside_projects:
            closed = None if keeper.uniform else keeper.closed(store, start, until_ms, reach_back=True)
            where, params = without(*visible, closed)
            rows = store.summary(start, until_ms, True, where, params) if keeper.default else []
            if not keeper.default:
                left_out = store.count(start, until_ms, *visible)
            elif closed is not None:
                # Every event of the range is in these rows' counts or left out (spans begun before the range
                # come with no count): what is missing from them is what was left out.
                left_out = store.count(start, until_ms, *visible) - sum(row[sessions.N] for row in rows)

            def details(group: Sequence[sessions.Session]) -> list[list[tuple[Any, ...]]]:
                span = (max(group[0].start_ms, start), min(group[-1].end_ms, until_ms))
                return _by_session(group, store.summary(*span, False, where, params))
        else:
            # Things outside projects are closed: each row is judged (row: minute, type, app, bundle_id,
            # label, url, path, n, ...).
            rows, closed = keeper.screen(store.summary(start, until_ms, False, *visible),
                                         lambda row: (row[2], row[5], row[6], row[4]))
            left_out = sum(row[7] for row in closed)

            def details(group: Sequence[sessions.Session]) -> list[list[tuple[Any, ...]]]:
                return _by_session(group, rows)
        found = sessions.spans(rows, start, until_ms)
    result: dict[str, Any] = {"range": _range(since_ms, until_ms), "format": format}
    newest_first = _filled_newest_first(found, details)
    if format == "structured":
        items, truncated, tokens = render.structured(newest_first, len(found), max_tokens)
        result.update(sessions=items, token_estimate=tokens, truncated=truncated)
    else:
        content, truncated = render.markdown(newest_first, len(found), zone, max_tokens)
        result.update(content=content, token_estimate=render.token_estimate(content), truncated=truncated)
    result["left_out"] = left_out
    return result


def _by_session(
    group: Sequence[sessions.Session], rows: Sequence[tuple[Any, ...]]
) -> list[list[tuple[Any, ...]]]:
    """The rows of each session's minutes; spans begun before a session (clipped, no count) count in its first.

    A row whose span goes on past its minute is also given to the later sessions it reaches (`sessions.fill`
    takes its time and title there, not its count): the session of a minute that an event begun late in the
    minute before holds is that event's app's, and needs its title.
    """
    first_minute = group[0].first_minute
    by_minute: dict[int, list[tuple[Any, ...]]] = {}
    reaching: list[tuple[Any, ...]] = []
    for row in rows:
        minute = max(row[0], first_minute)
        by_minute.setdefault(minute, []).append(row)
        if row[sessions.LAST] > (minute + 1) * sessions.MINUTE_MS:
            reaching.append(row)
    return [
        [row for minute in range(s.first_minute, s.last_minute + 1) for row in by_minute.get(minute, ())]
        + [row for row in reaching if max(row[0], first_minute) < s.first_minute and row[sessions.LAST] > s.start_ms]
        for s in group
    ]


def _filled_newest_first(
    found: Sequence[sessions.Session],
    details: Callable[[Sequence[sessions.Session]], list[list[tuple[Any, ...]]]],
    chunk: int = 12,
) -> Iterator[sessions.Session]:
    """Sessions with their contents, newest first, reading details for a few sessions at a time."""
    for end in range(len(found), 0, -chunk):
        group = found[max(end - chunk, 0):end]
        for session, rows in reversed(list(zip(group, details(group), strict=True))):
            yield sessions.fill(session, rows, session.start_ms)


def events(
    store: StoreReader | None,
    keeper: Gatekeeper,
    since_ms: int,
    until_ms: int,
    *,
    oldest_ms: int,
    types: Sequence[str] | None = None,
    app: str | None = None,
    bundle_id: str | None = None,
    limit: int = DEFAULT_LIMIT,
    newest_first: bool = False,
) -> dict[str, Any]:
    """query_events' result: range, count (of every match), truncated, events (at most `limit`), left_out.

    `left_out` counts what the gate kept back in the whole range, whatever the filters, so that narrowing
    by app or type cannot tell which closed events exist.
    """
    result: dict[str, Any] = {"range": _range(since_ms, until_ms), "count": 0, "truncated": False, "events": []}
    start = max(since_ms, oldest_ms)
    if store is None or start >= until_ms:
        return {**result, "left_out": 0}
    # Private windows a store may still hold are in no count; closed projects' events are in left_out only.
    visible = without("", [], private_rows(store, start, until_ms))
    narrowed, values = filter_clause(types, app, bundle_id)
    where, params = f"{visible[0]}{narrowed}", [*visible[1], *values]
    if keeper.uniform:
        if not keeper.default:
            everything = store.count(start, until_ms, *visible)
            return {**result, "left_out": everything}
        count, left_out, closed = store.count(start, until_ms, where, params), 0, None
    elif keeper.gate.outside_projects:
        closed, left_out = None, 0
        shut = keeper.closed(store, start, until_ms)  # the gate's verdicts are remembered across calls
        if shut is not None:
            condition, values = shut.condition()
            left_out = store.count(start, until_ms, f"{visible[0]} AND {condition}", [*visible[1], *values])
            where, params = without(where, params, shut)
        count = store.count(start, until_ms, where, params)
    else:
        _kept, left = keeper.screen(store.owner_groups(start, until_ms, *visible), lambda group: group[:4])
        closed = {group[:4] for group in left}
        left_out = sum(group[4] for group in left)
        count = sum(
            group[4] for group in store.owner_groups(start, until_ms, where, params) if group[:4] not in closed
        ) if closed else store.count(start, until_ms, where, params)
    given: list[dict[str, Any]] = []
    cleaner = Cleaner()
    for row in store.events(start, until_ms, where, params, newest_first):
        if closed and (row.app, row.url, row.path, row.label) in closed:
            continue
        event = envelope_of(row)
        if is_private(event):  # never stored by our importers; a store written by others may hold some
            count -= 1
            continue
        given.append(for_agent(event, cleaner))
        if len(given) >= limit:
            break
    result.update(count=count, truncated=count > len(given), events=given, left_out=left_out)
    return result


def event(store: StoreReader | None, keeper: Gatekeeper, event_id: str, oldest_ms: int) -> dict[str, Any] | None:
    """One event by id, or None when there is none to give; PermissionError(owners) when its project is closed."""
    found = store.event_by_id(event_id) if store is not None else None
    if found is None:
        return None
    ts_ms, app, label, url, path, private = found.ts_ms, found.app, found.label, found.url, found.path, found.private
    envelope = envelope_of(found)
    if private or is_private(envelope) or ts_ms < oldest_ms:
        return None
    # A refusal is given the event's own owners only (its traits', or those of the page whose title its window
    # repeats), never the other closed things of its hour.
    if not keeper.allows(app, url, path, label):
        raise PermissionError(keeper.owners(app, url, path, label))
    if keeper.routed and label:
        # Its title may be that of a page kept back (see gating.py): judged against the pages of the same hour.
        hour = 3_600_000
        repeated = [
            group for group in store.owner_groups(ts_ms - hour, ts_ms + hour)
            if group[1] and group[3] and repeats(label, group[3])
            and not keeper.allows(*group[:4])
        ]
        if repeated:
            raise PermissionError(frozenset(o for group in repeated for o in keeper.owners(*group[:4])))
    return for_agent(envelope)


def status(
    store: StoreReader | None,
    *,
    now_ms: int,
    retention_ms: int,
    running_within_ms: int,
) -> dict[str, Any]:
    """get_status's fields; `running` from a fresh heartbeat (written by an import or a recorder's ingest)."""
    beat = (store.meta("heartbeat") if store is not None else None) or {}
    fresh = bool(beat) and now_ms - int(beat.get("at_ms", 0)) <= running_within_ms
    oldest, newest = store.bounds() if store is not None else (None, None)
    limit = now_ms - retention_ms
    if oldest is not None and oldest < limit:
        oldest = limit if newest is not None and newest >= limit else None
    if newest is not None and newest < limit:
        newest = None
    degraded = dict(beat.get("degraded") or {}) if isinstance(beat.get("degraded"), dict) else {}
    if store is None:
        degraded["store"] = "no event store yet: run `gateway timeline import activitywatch` or `gateway timeline ingest`"
    last_import = store.meta("last_import_error") if store is not None else None
    if last_import:
        degraded["import"] = str(last_import)[:300]
    seen = store.seen_types() if store is not None else []
    capture = beat.get("capture") if isinstance(beat.get("capture"), dict) else {}
    dropped = beat.get("events_dropped")
    bad_lines = int(store.meta("bad_lines", 0)) if store is not None else 0
    # The two times are left out, not null, when the store holds no event in the period kept.
    times = {
        key: iso_ms(ms).replace(".000Z", "Z") for key, ms in (("last_event_ts", newest), ("oldest_event_ts", oldest))
        if ms is not None
    }
    return {
        "running": fresh,
        "paused": bool(beat.get("paused", False)) if fresh else False,
        **({"last_event_ts": times["last_event_ts"]} if "last_event_ts" in times else {}),
        "events_dropped": (int(dropped) if isinstance(dropped, int) else 0) + bad_lines,
        "degraded": degraded,
        "retention_hours": round(retention_ms / 3_600_000, 2) if retention_ms % 3_600_000 else retention_ms // 3_600_000,
        **({"oldest_event_ts": times["oldest_event_ts"]} if "oldest_event_ts" in times else {}),
        "capture": {
            "sources": capture.get("sources") or sorted({kind.split(".", 1)[0] for kind in seen}),
            "text_content": bool(capture.get("text_content", False)),
        },
        "permissions_ok": bool(beat.get("permissions_ok", True)),
    }
