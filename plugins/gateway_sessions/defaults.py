"""What registering the plugin needs to know without opening the store (kept light: the store is imported when a
tool first runs, not when the gateway starts)."""

from __future__ import annotations

from pathlib import Path

# How many matching messages a search ranks by BM25 at a time: the newest (by rowid, the order they were imported in).
# When no more than this many messages of open sessions match, every one is ranked and the order is FTS5's own; when
# more match, the hits are the best of the newest RANKED_AT_ONCE, and a search says so (Found.complete is False).
# FTS5 computes BM25 at about 1-3 microseconds a message, plus a read of each word's whole list for its IDF, so
# ranking every one of 100,000 matches takes 100 ms or more; see README, "Search".
RANKED_AT_ONCE = 1000


def default_path(data_folder: Path) -> Path:
    """``<the plugin's data folder>/sessions.db``."""
    return data_folder / "sessions.db"
