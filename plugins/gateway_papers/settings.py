"""The keys of the `[plugins.papers]` table."""

from __future__ import annotations

from pydantic import BaseModel, Field

CONTRACTS = ["contract", "contracts", "agreement", "agreements", "lease", "leases"]
LETTERS = ["letter", "letters", "correspondence"]


class PapersSettings(BaseModel):
    folder: str = Field("~/Documents/Papers", description="the documents folder, read at any depth (PDFs, scans with "
                        "a .txt or .hocr sidecar, text files, a paperless-ngx export)",
                        json_schema_extra={"format": "path"})
    contracts: list[str] = Field(CONTRACTS, description="a folder or a document type holding one of these words "
                                 "holds contracts")
    letters: list[str] = Field(LETTERS, description="a folder or a document type holding one of these words holds "
                               "letters")
    max_files: int = Field(100_000, ge=1, description="at most so many files of the folder are read")
    max_file_mb: int = Field(200, ge=1, le=4096, description="a file larger than this is not read")
    max_pages: int = Field(500, ge=1, description="only the first pages of a longer PDF are read")
    max_chars: int = Field(1_000_000, ge=1000, description="only the first characters of a longer text are kept")
    max_seconds: float = Field(30.0, ge=1, description="a file that takes longer to read is not read")
    max_memory_mb: int = Field(1024, ge=256, description="the memory the reading process may use for one file")
    max_manifest_mb: int = Field(512, ge=1, description="a paperless-ngx manifest larger than this is not read")
