"""The three session tools and the ``rousseau://sessions/{id}`` resources, behind the gate and the masks.

A session belongs to the projects whose ``paths`` routes take its working directory. Closed sessions are left out of
every list and counted: the count is over the whole store (all closed sessions), never over what the words matched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from gateway import Answer, Context, ResourcePage, ToolError
from gateway_sessions import render, store

DEFAULT_LIMIT = 20
MAX_LIMIT = 200
# A real search is a few words; these bounds are far above that and far below what can hold the store up.
MAX_QUERY_CHARACTERS = 2_000
MAX_QUERY_TERMS = 32
_TERM = re.compile(r"\w+")
_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})
URI = "rousseau://sessions/{id}"


def _limit(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if not 1 <= limit <= MAX_LIMIT:
        raise ToolError(
            f"limit must be between 1 and {MAX_LIMIT} (the default is {DEFAULT_LIMIT}); it was {limit}"
        )
    return limit


def _reader(ctx: Context) -> store.Reader | None:
    found = store.reader(ctx.path_setting("store"))
    return found if found is not None and found.has_sessions_table() else None


def _scope(ctx: Context, reader: store.Reader) -> tuple[Sequence[str], int]:
    """The working directories whose sessions may not be given, and how many sessions that keeps back.

    The gate's verdict on each working directory is the same for equal gates (same manifest, same
    `outside_projects`), so it is kept with the store's counts until either changes: asking the gate about every
    directory on each call costs more than the search itself once there are a hundred of them.
    """
    if not ctx.gate.projects and ctx.gate.outside_projects:
        return (), 0
    counts = reader.cwd_counts()
    key = ("scope", ctx.gate)
    kept = reader.derived.get(key)
    if kept is None:
        if len(reader.derived) > 16:  # gates seen before a change of config; keep only the current ones
            reader.derived.clear()
        closed, left_out = [], 0
        for cwd, count in counts.items():
            if not ctx.gate.allows(ctx.gate.owners_of(path=cwd or None)):
                closed.append(cwd)
                left_out += count
        kept = reader.derived[key] = (tuple(closed), left_out)
    return kept


def _left_out_line(left_out: int) -> list[str]:
    if not left_out:
        return []
    noun = "session" if left_out == 1 else "sessions"
    return [f"{left_out} {noun} left out: their projects are closed to AI agents."]


def _title(ctx: Context, title: str) -> str:
    return ctx.one_line(ctx.mask(title))


def address(session_id: str) -> str:
    return f"rousseau://sessions/{session_id}"


def rousseau_search_sessions(ctx: Context, query: str, limit: int | None = None) -> Answer:
    if not query or not query.strip():
        raise ToolError("query is required")
    if len(query) > MAX_QUERY_CHARACTERS:  # the schema says so too; a direct call is bounded all the same
        raise ToolError(f"query is {len(query):,} characters long, over the limit of {MAX_QUERY_CHARACTERS:,}; "
                        "search for a few distinctive words instead")
    terms = sum(1 for term in _TERM.findall(query) if term not in _OPERATORS)
    if terms > MAX_QUERY_TERMS:
        raise ToolError(f"query has {terms:,} words, over the limit of {MAX_QUERY_TERMS}; search for a few "
                        "distinctive words or a short phrase instead")
    limit = _limit(limit)
    reader = _reader(ctx)
    hits: list[dict[str, Any]] = []
    left_out, notes = 0, []
    data: dict[str, Any] = {}
    if reader is not None:
        closed, left_out = _scope(ctx, reader)
        with ctx.interruptible(reader.connection):  # stopped at the call's deadline
            try:
                found = reader.search(query, limit, closed)
            except store.SearchError as error:
                raise ToolError(str(error)) from error
            marked = reader.marked(query, [hit.message_rowid for hit in found.hits]) if found.hits else {}
        for hit in found.hits:
            hits.append(
                {
                    "id": hit.session.id,
                    "agent": hit.session.agent,
                    "rank": hit.rank,
                    "title": _title(ctx, hit.session.title),
                    "snippet": render.snippet(marked[hit.message_rowid], ctx.mask),
                    "updated_at": hit.session.updated_at,
                }
            )
        data = {"ranked": found.ranked, "complete": found.complete}
        if not found.complete:
            notes.append(
                f"More messages match than were ranked: these are the best of the {found.ranked:,} newest that "
                "match. Add words, a phrase or NOT to narrow the search and rank every match."
            )
        if reader.index_outdated():
            notes.append(
                "The sessions store's search index is of an earlier version (prefix searches are slow): "
                "`gateway sessions import` upgrades it."
            )
    lines = [
        line
        for hit in hits
        for line in render.hit_lines(hit["id"], hit["rank"], hit["title"], hit["snippet"])
    ]
    text = "\n".join((lines or ["(no hits)"]) + notes + _left_out_line(left_out))
    return Answer(
        text=text,
        data={"hits": hits, "left_out": left_out, **data},
        given=tuple(address(hit["id"]) for hit in hits),
        left_out=left_out,
    )


def rousseau_list_sessions(ctx: Context, limit: int | None = None) -> Answer:
    limit = _limit(limit)
    reader = _reader(ctx)
    sessions: list[dict[str, Any]] = []
    left_out = 0
    if reader is not None:
        closed, left_out = _scope(ctx, reader)
        sessions = [_summary(ctx, row) for row in reader.recent(limit, closed)]
    lines = [render.row_line(s["id"], s["title"], s["messages"], s["updated_at"]) for s in sessions]
    text = "\n".join((lines or ["(no sessions)"]) + _left_out_line(left_out))
    return Answer(
        text=text,
        data={"sessions": sessions, "left_out": left_out},
        given=tuple(address(s["id"]) for s in sessions),
        left_out=left_out,
    )


def _summary(ctx: Context, row: store.Row) -> dict[str, Any]:
    return {
        "id": row.id,
        "agent": row.agent,
        "title": _title(ctx, row.title),
        "messages": row.message_count,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "cwd": row.cwd,
        "parent_id": row.parent_id,
    }


def rousseau_read_session(ctx: Context, id: str) -> Answer:  # noqa: A002 - the seed names the argument `id`
    session_id = id
    if not session_id or not session_id.strip():
        raise ToolError("id is required")
    reader = _reader(ctx)
    row = reader.find(session_id) if reader is not None else None
    if row is None:
        raise ToolError(
            f"session not found: {session_id} (rousseau_list_sessions and rousseau_search_sessions give ids)"
        )
    ctx.gate.check_read(ctx.gate.owners_of(path=row.cwd or None), what=f"session {session_id}")
    title = _title(ctx, row.title)
    # Only what people and the model wrote: tool calls, tool results and thinking stay out (the CLI shows them).
    shown = [
        {"index": index, "role": role, "text": ctx.mask(text), "timestamp": timestamp}
        for index, role, timestamp, text in reader.texts(row)
        if text
    ]
    body = "\n".join(render.transcript_lines((m["index"], m["role"], m["text"]) for m in shown))
    lines = render.header_lines(row, title)
    if shown:
        lines.append(ctx.frame(body))
    data = {**_summary(ctx, row), "transcript": shown}
    return Answer(text="\n".join(lines), data=data, given=(address(row.id),))


def read_resource(ctx: Context, id: str) -> Answer:  # noqa: A002
    return rousseau_read_session(ctx, id=id)


def list_resources(ctx: Context, cursor: str | None, limit: int) -> ResourcePage:
    """Sessions newest first (by start), a bounded page at a time; the cursor survives imports made meanwhile."""
    reader = _reader(ctx)
    if reader is None:
        return ResourcePage(resources=[])
    closed, _ = _scope(ctx, reader)
    try:
        rows, next_cursor = reader.page(cursor, max(1, min(limit, MAX_LIMIT)), closed)
    except store.CursorError as error:
        raise ToolError(str(error)) from error
    return ResourcePage(resources=[_resource(ctx, row) for row in rows], next_cursor=next_cursor)


def _resource(ctx: Context, row: store.Row) -> dict[str, Any]:
    title = _title(ctx, row.title)
    return {
        "uri": address(row.id),
        "name": row.id,
        "title": title or row.id,
        "description": f"{row.agent} session, {row.message_count} messages, {row.created_at} to {row.updated_at}",
        "mime_type": "text/plain",
    }


def _object(properties: dict[str, Any], required: Sequence[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


_SESSION_PROPERTIES = {
    "id": {"type": "string"},
    "agent": {"type": "string"},
    "title": {"type": "string"},
    "messages": {"type": "integer"},
    "created_at": {"type": "string"},
    "updated_at": {"type": "string"},
    "cwd": {"type": "string"},
    "parent_id": {"type": "string"},
}
_LIMIT_SCHEMA = {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}

SEARCH_INPUT = _object(
    {
        "query": {
            "type": "string",
            "maxLength": MAX_QUERY_CHARACTERS,
            "description": f"FTS5 query (at most {MAX_QUERY_CHARACTERS:,} characters and {MAX_QUERY_TERMS} words)",
        },
        "limit": {
            **_LIMIT_SCHEMA,
            "description": f"Cap hits returned. Default {DEFAULT_LIMIT}, at most {MAX_LIMIT}.",
        },
    },
    ["query"],
)
SEARCH_OUTPUT = _object(
    {
        "hits": {
            "type": "array",
            "items": _object(
                {
                    "id": {"type": "string"},
                    "agent": {"type": "string"},
                    "rank": {"type": "number"},
                    "title": {"type": "string"},
                    "snippet": {"type": "string"},
                    "updated_at": {"type": "string"},
                },
                ["id", "rank", "title", "snippet"],
            ),
        },
        "left_out": {"type": "integer"},
        "ranked": {
            "type": "integer",
            "description": "how many matching messages were ranked by BM25 to find the hits",
        },
        "complete": {
            "type": "boolean",
            "description": "true: every matching message was ranked; false: the hits are the best of the newest",
        },
    },
    ["hits", "left_out"],
)
LIST_INPUT = {
    "type": "object",
    "properties": {
        "limit": {
            **_LIMIT_SCHEMA,
            "description": f"Cap rows returned. Default {DEFAULT_LIMIT}, at most {MAX_LIMIT}.",
        }
    },
}
LIST_OUTPUT = _object(
    {
        "sessions": {
            "type": "array",
            "items": _object(_SESSION_PROPERTIES, ["id", "title", "messages", "updated_at"]),
        },
        "left_out": {"type": "integer"},
    },
    ["sessions", "left_out"],
)
READ_INPUT = _object({"id": {"type": "string", "description": "Session id"}}, ["id"])
READ_OUTPUT = _object(
    {
        **_SESSION_PROPERTIES,
        "transcript": {
            "type": "array",
            "items": _object(
                {
                    "index": {"type": "integer"},
                    "role": {"type": "string"},
                    "text": {"type": "string"},
                    "timestamp": {"type": "string"},
                },
                ["index", "role", "text"],
            ),
        },
    },
    ["id", "title", "messages", "created_at", "updated_at", "transcript"],
)
