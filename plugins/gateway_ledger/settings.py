"""The keys of the `[plugins.ledger]` table."""

from __future__ import annotations

from pydantic import BaseModel, Field


class LedgerSettings(BaseModel):
    journals: list[str] = Field([], description="the journals to read: beancount files (.beancount, .bean) and "
                                "hledger or ledger journals (any other name, read by the hledger program)")
    max_file_mb: int = Field(64, ge=1, le=8192, description="a journal larger than this is not read")
    max_seconds: float = Field(120.0, ge=1, description="a journal that takes longer to read is not read")
    max_transactions: int = Field(2_000_000, ge=1000, description="a journal with more transactions is not read")
