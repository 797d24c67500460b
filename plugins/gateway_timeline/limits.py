"""The bounds and defaults the tools' schemas state: known without importing the store and the queries, which
registering the plugin does not need (they are imported when a tool first runs)."""

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
DEFAULT_MAX_TOKENS = 4000
EVENT_ADDRESS = "timeline://events/{}"
