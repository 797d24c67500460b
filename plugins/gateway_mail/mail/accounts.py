"""The mail configuration's typed values, kept in the shared `maildirs` library (the spam plugin reads them too)."""

from maildirs.accounts import (
    ACCOUNT_KEYS,
    Account,
    ConfigProblem,
    accounts_of,
    in_window,
    next_opening,
    sender_blocked,
    windows_of,
)

__all__ = ["ACCOUNT_KEYS", "Account", "ConfigProblem", "accounts_of", "in_window", "next_opening", "sender_blocked",
           "windows_of"]
