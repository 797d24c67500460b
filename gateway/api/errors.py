"""The two errors a plugin raises to refuse a call in words: a leaf module, imported by the gate and the items
alike (so neither needs the other)."""

from __future__ import annotations


class ToolError(Exception):
    """The agent asked for something that cannot be given; the message is a sentence it can act on."""


class Refused(ToolError):
    """The gate kept the item: the message names nothing; `owners` (project ids) stays for the person's eyes."""

    def __init__(self, message: str, owners: frozenset[str] = frozenset()) -> None:
        super().__init__(message)
        self.owners = frozenset(owners)
