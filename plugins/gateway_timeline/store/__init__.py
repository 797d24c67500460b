"""The event store: one SQLite file of envelopes, indexed by time, with a per-minute summary for timelines.

`events` keeps each envelope as the recorder wrote it plus the traits the gate routes on; `minutes` holds,
for each minute, one row per (type, app, label, URL, path) with a count and the span covered, so a day's
timeline reads thousands of rows rather than millions. Importers write; the tools only read.

Schema 5 added the table `labels` (every distinct title), filled when an import upgrades the store. Schema 4
added indexes only (no data changed): `minutes` by (minute, type, app), which lets the per-(minute,
type, app) sums be read without sorting, and by URL, title and file path, which let the gate's closed values
be found without reading every row of a range. A store of schema 3 is upgraded in place the next time an
importer opens it (`gateway timeline import ...` or `ingest`; a few seconds for a week of heavy use); until
then the tools read it as before, only slower (`Store.indexed` says which).
"""

from gateway_timeline.envelope import envelope_of
from gateway_timeline.rows import EVENT_COLUMNS as _EVENT_COLUMNS
from gateway_timeline.rows import FORMAT_ACTIVITYWATCH, FORMAT_ENVELOPE, EventRow
from gateway_timeline.store.reader import StoreReader, _following, filter_clause, type_clause
from gateway_timeline.store.schema import MINUTE_MS, SCHEMA, SCHEMA_VERSION
from gateway_timeline.store.writer import Store, row_of

__all__ = [
    "FORMAT_ACTIVITYWATCH",
    "FORMAT_ENVELOPE",
    "MINUTE_MS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "EventRow",
    "Store",
    "StoreReader",
    "_EVENT_COLUMNS",
    "_following",
    "envelope_of",
    "filter_clause",
    "row_of",
    "type_clause",
]
