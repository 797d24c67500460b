"""The three read-only tools: get_timeline, query_events, get_status (inputs, outputs, and their plumbing)."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from gateway import Answer, Context, ToolError, left_out_sentence, tool
from gateway_timeline import limits, settings
from gateway_timeline.timeexpr import FORMS, local_zone, resolve_range, to_ms

if TYPE_CHECKING:  # the store and the queries are imported when a tool first runs, not when the gateway starts
    from gateway_timeline.store import Store

TIME_HELP = f"Accepted forms: {FORMS}."
NOTHING_YET = (
    "Nothing has been imported into the timeline yet; the person can run `gateway timeline import "
    "activitywatch` (or `gateway timeline ingest FILE.jsonl`)."
)

Since = Annotated[str, Field(description=f"Start of the range (included). {TIME_HELP}")]
Until = Annotated[str, Field(description=f"End of the range (excluded); default now. {TIME_HELP}")]
Format = Annotated[
    Literal["markdown", "structured"],
    Field(description="markdown: a heading and a few bullets per session; structured: a sessions[] array."),
]
MaxTokens = Annotated[
    int,
    Field(
        ge=200,
        le=32000,
        description="Bound on the answer's size (tokens estimated as characters / 4); older sessions are cut first.",
    ),
]
Types = Annotated[
    Annotated[list[Annotated[str, Field(min_length=1)]], Field(max_length=50)] | None,
    Field(description="Event types to keep: exact (app.focus) or a prefix with .* (browser.*). Default: all."),
]
App = Annotated[
    str | None, Field(description="Only this app (its name, any case). Narrows; not a privacy boundary.")
]
BundleId = Annotated[str | None, Field(description="Only this bundle id (com.google.Chrome).")]
Limit = Annotated[
    int,
    Field(
        ge=1,
        le=limits.MAX_LIMIT,
        description=f"At most this many events (default {limits.DEFAULT_LIMIT}, at most {limits.MAX_LIMIT}); "
        "count still says how many matched.",
    ),
]
Order = Annotated[
    Literal["oldest_first", "newest_first"],
    Field(description="Which end of the range comes first, and is kept when the limit cuts."),
]

RANGE_OUTPUT = {
    "type": "object",
    "properties": {"since": {"type": "string"}, "until": {"type": "string"}},
    "required": ["since", "until"],
}

TIMELINE_OUTPUT = {
    "type": "object",
    "properties": {
        "range": RANGE_OUTPUT,
        "format": {"enum": ["markdown", "structured"]},
        "content": {"type": "string"},
        "sessions": {"type": "array", "items": {"type": "object"}},
        "token_estimate": {"type": "integer"},
        "truncated": {"type": "boolean"},
        "left_out": {"type": "integer"},
    },
    "required": ["range", "format", "token_estimate", "truncated"],
}

EVENTS_OUTPUT = {
    "type": "object",
    "properties": {
        "range": RANGE_OUTPUT,
        "count": {"type": "integer"},
        "truncated": {"type": "boolean"},
        "events": {"type": "array", "items": {"type": "object"}},
        "left_out": {"type": "integer"},
    },
    "required": ["range", "count", "truncated", "events"],
}

STATUS_OUTPUT = {
    "type": "object",
    "properties": {
        "running": {"type": "boolean"},
        "paused": {"type": "boolean"},
        "last_event_ts": {"type": "string", "description": "absent when the store holds no event in the period kept"},
        "events_dropped": {"type": "integer"},
        "degraded": {"type": "object"},
        "retention_hours": {"type": "number"},
        "oldest_event_ts": {"type": "string", "description": "absent when the store holds no event in the period kept"},
        "capture": {"type": "object"},
        "permissions_ok": {"type": "boolean"},
    },
    "required": ["running", "paused", "retention_hours"],
}


def now() -> datetime:
    return datetime.now(UTC)


def open_store(ctx: Context) -> Store | None:
    """The store, read-only; None before the first import; a ToolError saying why when it cannot be read."""
    import sqlite3

    from gateway_timeline.store import Store

    path = settings.store_path(ctx)
    try:
        return Store.reader(path)
    except sqlite3.DatabaseError as error:
        raise ToolError(
            f"the timeline's event store {path} cannot be read ({error}); the person can check its permissions, "
            "or move it aside and import again"
        ) from error


def _left_out_line(left_out: int) -> str:
    return f"\n{left_out_sentence(left_out, 'event')}" if left_out else ""


def timeline_answer(ctx: Context, since: str, until: str, format: str, max_tokens: int) -> Answer:  # noqa: A002
    from gateway_timeline import queries
    from gateway_timeline.gating import Gatekeeper

    zone = local_zone(ctx.settings.get("timezone"))
    start, end = resolve_range(since, until, now(), zone)
    store = open_store(ctx)
    try:
        result = queries.timeline(
            store,
            Gatekeeper(ctx.gate),
            to_ms(start),
            to_ms(end),
            oldest_ms=to_ms(now()) - settings.retention_ms(ctx.settings),
            zone=zone,
            format=format,
            max_tokens=max_tokens,
        )
    finally:
        if store is not None:
            store.close()
    span = f"{result['range']['since']} to {result['range']['until']}"
    if format == "structured":
        body = json.dumps(result["sessions"], ensure_ascii=False, indent=1)
        found = len(result["sessions"])
    else:
        body, found = result["content"], bool(result["content"])
    if not found:
        head = f"No activity recorded from {span}." + (f" {NOTHING_YET}" if store is None else "")
        text = head + _left_out_line(result["left_out"])
    else:
        cut = " Older sessions were cut to fit max_tokens." if result["truncated"] else ""
        text = (
            f"Timeline from {span} (headings in the person's local time), about {result['token_estimate']} "
            f"tokens.{cut}\n{ctx.frame(body)}{_left_out_line(result['left_out'])}"
        )
    given = (f"timeline://range/{result['range']['since']}/{result['range']['until']}",) if found else ()
    return Answer(text=text, data=result, given=given, left_out=result["left_out"])


@tool(title="Activity timeline", read_only=True, idempotent=True, output_schema=TIMELINE_OUTPUT)
def get_timeline(
    ctx: Context, since: Since = "1h", until: Until = "now", format: Format = "markdown",  # noqa: A002 - the seed's name
    max_tokens: MaxTokens = limits.DEFAULT_MAX_TOKENS,
) -> Answer:
    """The person's activity over a range as sessions (app, what, when), small enough for a model's context.

    Start narrow (the last hour), widen only when needed. Use query_events for the raw events behind it.
    """
    return timeline_answer(ctx, since, until, format, max_tokens)


@tool(title="Activity events", read_only=True, idempotent=True, output_schema=EVENTS_OUTPUT)
def query_events(
    ctx: Context, since: Since = "15m", until: Until = "now", types: Types = None, app: App = None,
    bundle_id: BundleId = None, limit: Limit = limits.DEFAULT_LIMIT, order: Order = "oldest_first",
) -> Answer:
    """Raw activity events in the tadoru envelope for a range, filtered by type, app or bundle id."""

    from gateway_timeline import queries
    from gateway_timeline.gating import Gatekeeper

    check_types(types)
    zone = local_zone(ctx.settings.get("timezone"))
    start, end = resolve_range(since, until, now(), zone)
    store = open_store(ctx)
    try:
        result = queries.events(
            store,
            Gatekeeper(ctx.gate),
            to_ms(start),
            to_ms(end),
            oldest_ms=to_ms(now()) - settings.retention_ms(ctx.settings),
            types=types,
            app=app,
            bundle_id=bundle_id,
            limit=limit,
            newest_first=order == "newest_first",
        )
    finally:
        if store is not None:
            store.close()
    span = f"{result['range']['since']} to {result['range']['until']}"
    shown = len(result["events"])
    if not shown:
        text = f"No events matched from {span}." + (f" {NOTHING_YET}" if store is None else "")
    else:
        more = f"; the first {shown} ({order.replace('_', ' ')}) are below, narrow the range for the rest" if result[
            "truncated"] else ""
        lines = "\n".join(_event_line(e) for e in result["events"])
        text = (
            f"{result['count']} events from {span}{more}. One per line (time UTC, type, app, window, URL or file; "
            f"the full envelopes are in the structured content):\n{ctx.frame(lines)}"
        )
    text += _left_out_line(result["left_out"])
    given = tuple(limits.EVENT_ADDRESS.format(e["id"]) for e in result["events"])
    return Answer(text=text, data=result, given=given, left_out=result["left_out"])


def _event_line(event: dict[str, Any]) -> str:
    """One event on one line for the model: when, what kind, in which app and window, and its page or file."""
    parts = [event["ts"][11:23], event["type"]]
    if event.get("app") and event["app"].get("name"):
        parts.append(event["app"]["name"])
    if event.get("window") and event["window"].get("title"):
        parts.append(f"“{event['window']['title']}”")
    data = event.get("data") or {}
    for key in ("url", "path"):
        if isinstance(data.get(key), str):
            parts.append(data[key])
    return " ".join(parts)


def live_activitywatch(port: int = 5600, timeout: float = 0.3) -> bool:
    """Is an ActivityWatch server answering on loopback (127.0.0.1, its port 5600)? Never asks elsewhere."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{int(port)}/api/0/info", timeout=timeout) as response:
            return response.status == 200
    except (OSError, urllib.error.URLError, ValueError):
        return False


def status_of(ctx: Context) -> dict[str, Any]:
    from gateway_timeline import queries

    try:
        store = open_store(ctx)
    except ToolError as error:
        unreadable = queries.status(
            None, now_ms=int(time.time() * 1000), retention_ms=settings.retention_ms(ctx.settings),
            running_within_ms=settings.running_within_ms(ctx.settings), live_server=False,
        )
        return {**unreadable, "degraded": {"store": str(error)}, "permissions_ok": False}
    try:
        live = bool(ctx.settings.get("probe_activitywatch", True)) and live_activitywatch()
        return queries.status(
            store,
            now_ms=int(time.time() * 1000),
            retention_ms=settings.retention_ms(ctx.settings),
            running_within_ms=settings.running_within_ms(ctx.settings),
            live_server=live,
        )
    finally:
        if store is not None:
            store.close()


@tool(title="Recording status", read_only=True, idempotent=True, output_schema=STATUS_OUTPUT)
def get_status(ctx: Context) -> Answer:
    """Is activity being recorded right now, and what does the store hold? If running is false, say so."""
    result = status_of(ctx)
    if result["running"]:
        head = "Activity is being recorded" + (" (paused)." if result["paused"] else ".")
    else:
        head = "Activity is not being recorded right now: no recorder has written recently."
    last = result.get("last_event_ts") or "none"
    text = f"{head} Last event: {last}. Oldest kept: {result.get('oldest_event_ts') or 'none'}."
    if result["degraded"]:
        text += " Problems: " + "; ".join(f"{k}: {v}" for k, v in result["degraded"].items())
    return Answer(text=text, data=result)


def tool_list() -> list[Any]:
    return [get_timeline, query_events, get_status]


_TYPE_ENTRY = re.compile(r"^(\*|[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)*(\.\*)?)$")


def check_types(types: list[str] | None) -> None:
    for kind in types or ():
        if not _TYPE_ENTRY.match(kind):
            raise ToolError(
                f"types entry {kind!r} is not an event type; give exact types (app.focus) or prefixes "
                "ending in .* (browser.*)"
            )
