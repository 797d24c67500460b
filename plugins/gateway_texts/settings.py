"""The keys of the `[plugins.texts]` table; `enabled` keeps the plugin off until the person turns it on."""

from __future__ import annotations

from pydantic import BaseModel, Field

PATH = {"format": "path"}  # a path setting: kept as written ("" for the default), read with path_setting


class TextsSettings(BaseModel):
    enabled: bool = Field(False, description="allow agents to read the texts and calls (off by default)")
    exports: str = Field("~/SMSBackupRestore", description="the folder of SMS Backup & Restore exports (sms-*.xml, "
                         "calls-*.xml), searched at any depth", json_schema_extra=PATH)
    contacts: str = Field("", description="a vdir of vCards (as vdirsyncer keeps it), to know who a number is",
                          json_schema_extra=PATH)
    region: str = Field("", description="the country of numbers written without their country code, two letters "
                        "(FR, US)")
    drafts: str = Field("", description="where drafts are saved (default: the plugin's data folder, drafts/)",
                        json_schema_extra=PATH)
    timezone: str = Field("", description="the zone times are shown in (an IANA name; default: the gateway's)")
    max_file_mb: int = Field(512, ge=1, le=8192, description="an export larger than this is not read")
    max_elements: int = Field(5_000_000, ge=1000, description="an export with more XML elements is not read")
    max_seconds: float = Field(120.0, ge=1, description="an export that takes longer to read is not read")
