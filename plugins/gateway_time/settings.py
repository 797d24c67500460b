"""The keys of the `[plugins.time]` table."""

from __future__ import annotations

from pydantic import BaseModel, Field

PATH = {"format": "path"}  # a path setting: kept as written ("" for the default), read with path_setting


class TimeSettings(BaseModel):
    timewarrior: str = Field("", description="timewarrior's database folder (default: as timewarrior finds it: "
                             "TIMEWARRIORDB, then ~/.local/share/timewarrior, then ~/.timewarrior)",
                             json_schema_extra=PATH)
    invoices: str = Field("~/Invoices", description="the folder of Factur-X / ZUGFeRD invoice PDFs, searched at any "
                          "depth", json_schema_extra=PATH)
    paid_folder: str = Field("paid", description="an invoice in a folder of this name (below the invoices folder) "
                             "is paid")
    timezone: str = Field("", description="the zone days are counted in (an IANA name; default: the gateway's)")
    max_data_mb: int = Field(64, ge=1, le=4096, description="a timewarrior data file larger than this is not read")
    max_file_mb: int = Field(20, ge=1, le=1024, description="an invoice PDF larger than this is not read")
    max_seconds: float = Field(20.0, ge=1, description="an invoice PDF that takes longer to read is not read")
    max_memory_mb: int = Field(1024, ge=256, le=16384, description="the memory the invoice reader may use")
