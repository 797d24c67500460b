"""The three read-only tools: get_timeline, query_events, get_status (inputs, outputs, and their plumbing)."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict  # pydantic reads a TypedDict from here before Python 3.12

from gateway import Answer, Context, ToolError, plural, tool
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

class Range(TypedDict):
    since: str
    until: str


# The whole answer's count, and how to get more: said once, shared by the three shapes.
LeftOut = Annotated[int, Field(description="events kept back because their projects are closed to AI agents (the "
                                           "whole answer's count)")]
Hint = Annotated[str, Field(description="how to get more: how the person fills an empty store, or how to narrow a "
                                        "cut query (else absent)")]
Absent = Annotated[str, Field(description="absent when the store holds no event in the period kept")]


class TimelineAnswer(TypedDict):
    range: Range
    format: Literal["markdown", "structured"]
    content: NotRequired[str]
    sessions: NotRequired[list[dict[str, Any]]]
    token_estimate: int
    truncated: bool
    left_out: LeftOut
    hint: NotRequired[Hint]


class EventsAnswer(TypedDict):
    range: Range
    count: int
    truncated: bool
    events: list[dict[str, Any]]
    left_out: LeftOut
    hint: NotRequired[Hint]


class StatusAnswer(TypedDict):
    running: bool
    paused: bool
    last_event_ts: NotRequired[Absent]
    events_dropped: NotRequired[int]
    degraded: NotRequired[dict[str, Any]]
    retention_hours: float
    oldest_event_ts: NotRequired[Absent]
    capture: NotRequired[dict[str, Any]]
    permissions_ok: NotRequired[bool]
    hint: NotRequired[Hint]


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


def json_answer(data: dict[str, Any], given: tuple[str, ...] = (), left_out: int = 0) -> Answer:
    """The answer whose text is its data serialised (compact, keys in the seed's order): hosts that give the
    model the text alone still show it `truncated`, `token_estimate` and `left_out`, as MCP asks."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return Answer(text=text, data=data, given=given, left_out=left_out)


def timeline_result(
    ctx: Context, since: str, until: str, format: str, max_tokens: int  # noqa: A002
) -> tuple[dict[str, Any], bool]:
    """get_timeline's object as queries makes it (content not framed yet), and whether the store exists."""
    from gateway_timeline import queries
    from gateway_timeline.gating import Gatekeeper

    zone = local_zone(ctx.settings.get("timezone") or ctx.timezone or None)
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
    return result, store is not None


def timeline_given(result: dict[str, Any]) -> tuple[str, ...]:
    found = result["sessions"] if result["format"] == "structured" else result["content"]
    return (f"timeline://range/{result['range']['since']}/{result['range']['until']}",) if found else ()


def timeline_answer(ctx: Context, since: str, until: str, format: str, max_tokens: int) -> Answer:  # noqa: A002
    from gateway_timeline.render import token_estimate

    result, stored = timeline_result(ctx, since, until, format, max_tokens)
    given = timeline_given(result)
    if result.get("content"):
        # The markdown is a whole text of others' words: framed inside the JSON string, and estimated so.
        result["content"] = ctx.frame(result["content"])
        result["token_estimate"] = token_estimate(result["content"])
    if not stored:
        result["hint"] = NOTHING_YET
    return json_answer(result, given, result["left_out"])


@tool(title="Activity timeline", read_only=True, idempotent=True)
def get_timeline(
    ctx: Context, since: Since = "1h", until: Until = "now", format: Format = "markdown",  # noqa: A002 - the seed's name
    max_tokens: MaxTokens = limits.DEFAULT_MAX_TOKENS,
) -> Answer[TimelineAnswer]:
    """The person's activity over a range as sessions (app, what, when), small enough for a model's context.

    Start narrow (the last hour), widen only when needed. Use query_events for the raw events behind it.
    Headings are in the person's local time; the range is UTC.
    """
    return timeline_answer(ctx, since, until, format, max_tokens)


@tool(title="Activity events", read_only=True, idempotent=True)
def query_events(
    ctx: Context, since: Since = "15m", until: Until = "now", types: Types = None, app: App = None,
    bundle_id: BundleId = None, limit: Limit = limits.DEFAULT_LIMIT, order: Order = "oldest_first",
) -> Answer[EventsAnswer]:
    """Raw activity events in the tadoru envelope for a range, filtered by type, app or bundle id."""

    from gateway_timeline import queries
    from gateway_timeline.gating import Gatekeeper

    check_types(types)
    zone = local_zone(ctx.settings.get("timezone") or ctx.timezone or None)
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
    if store is None:
        result["hint"] = NOTHING_YET
    elif result["truncated"]:
        shown = len(result["events"])
        result["hint"] = (
            f"Only the {plural(shown, 'event')} at the {'newest' if order == 'newest_first' else 'oldest'} end are "
            "given: narrow the range, the types or the app for the rest."
        )
    given = tuple(limits.EVENT_ADDRESS.format(e["id"]) for e in result["events"])
    return json_answer(result, given, result["left_out"])


def status_of(ctx: Context) -> dict[str, Any]:
    """get_status's fields, from the store and the importers' own records in it only: nothing is asked of the
    network (a server answering on ActivityWatch's port says nothing about what this store holds)."""
    from gateway_timeline import queries

    try:
        store = open_store(ctx)
    except ToolError as error:
        unreadable = queries.status(
            None, now_ms=int(time.time() * 1000), retention_ms=settings.retention_ms(ctx.settings),
            running_within_ms=settings.running_within_ms(ctx.settings),
        )
        return {**unreadable, "degraded": {"store": str(error)}, "permissions_ok": False}
    try:
        result = queries.status(
            store,
            now_ms=int(time.time() * 1000),
            retention_ms=settings.retention_ms(ctx.settings),
            running_within_ms=settings.running_within_ms(ctx.settings),
        )
        return {**result, "hint": NOTHING_YET} if store is None else result
    finally:
        if store is not None:
            store.close()


@tool(title="Recording status", read_only=True, idempotent=True)
def get_status(ctx: Context) -> Answer[StatusAnswer]:
    """Is activity being recorded right now, and what does the store hold? If running is false, say so."""
    return json_answer(status_of(ctx))


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
