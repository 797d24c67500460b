"""The session store: one SQLite file with sessions, their messages (content blocks kept whole) and an FTS5 index.

What a tool can search or be shown is stored masked (`messages.text`, `sessions.title`), with the masks of the version
recorded in `meta`; the content blocks, which only the person's own command line shows, are kept as the agent wrote
them, so that the masked copies can be made again when the masks change. The same file holds the cron plugin's ``cron_jobs`` table (a store the two plugins share; each creates only its own
tables). The MCP side opens it read-only; only ``gateway sessions import`` writes.
"""

from gateway_sessions.store.reads import (
    _SESSION_COLUMNS,
    CLOSED,
    OPEN,
    OUTSIDE,
    OVERFETCH,
    OVERFETCH_AT_LEAST,
    READ_PRAGMAS,
    CursorError,
    Found,
    Hit,
    Reader,
    Row,
    SearchError,
    StoredMessage,
    _readers,
    reader,
    recent_query,
)
from gateway_sessions.store.schema import (
    BATCH_MESSAGES,
    FTS_ARGUMENTS,
    HASHSIZE,
    SCHEMA,
    TOKENIZE,
    default_path,
    index_is_current,
    masks_are_current,
    open_for_writing,
)
from gateway_sessions.store.writes import Writes, file_signature, record_source, source_unchanged, upsert

__all__ = [
    "BATCH_MESSAGES",
    "CLOSED",
    "FTS_ARGUMENTS",
    "HASHSIZE",
    "OPEN",
    "OUTSIDE",
    "READ_PRAGMAS",
    "SCHEMA",
    "TOKENIZE",
    "CursorError",
    "OVERFETCH",
    "OVERFETCH_AT_LEAST",
    "Found",
    "Hit",
    "Reader",
    "Row",
    "SearchError",
    "StoredMessage",
    "Writes",
    "_SESSION_COLUMNS",
    "_readers",
    "default_path",
    "file_signature",
    "index_is_current",
    "masks_are_current",
    "open_for_writing",
    "reader",
    "recent_query",
    "record_source",
    "source_unchanged",
    "upsert",
]
