"""The keys of the `[plugins.cron]` table."""

from __future__ import annotations

from pydantic import BaseModel, Field


class CronSettings(BaseModel):
    store: str = Field(
        "",
        description="the SQLite file holding the cron_jobs table, shared with the sessions plugin (empty: the "
        "sessions plugin's sessions.db in its data folder)",
        json_schema_extra={"format": "path"},
    )
