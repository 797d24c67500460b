"""maildirs: the mail accounts and Maildir folders, read the same way by every plugin that needs them.

A library, not a plugin (no entry point): the mail plugin and the spam plugin both import it, and neither
imports the other. What it promises:

- `maildirs.accounts`: `Account` (name, maildir, addresses, authserv_id, drafts) and `accounts_of(raw,
  resolve)`, which checks `[plugins.mail] accounts` entry by entry and raises `ConfigProblem` (a `ToolError`)
  naming the key and what to write; `configured_accounts(config_folder)` and `configured_blocked(...)` read
  that table from the config file the core reads (`GATEWAY_CONFIG`, else `config.toml` in the gateway's config
  folder), for plugins other than mail; `sender_blocked(rules, sender)`; the admin windows.
- `maildirs.folders`: `folders(root)` lists every Maildir folder under an account (mbsync's real subfolders,
  Maildir++ dot folders, offlineimap's flat names), each named with `/` (`INBOX`, `Archive/2026`), deciding what
  a dot means from the layout present (`layout_of`); `messages(folder)` the files of `new/` and `cur/`;
  `flags_of`, `unique_of` (the file's name without its info suffix); `checked_path(written, roots)`, the rule
  for a path an agent gives (as written, then with links resolved).
- `maildirs.testing`: a Dovecot IMAP server on a loopback port, for tests that need a real one.

Nothing here writes to a Maildir.
"""

from maildirs.accounts import Account, ConfigProblem, accounts_of, configured_accounts, configured_blocked
from maildirs.folders import Folder, PathRefused, checked_path, flags_of, folders, messages, unique_of

__all__ = ["Account", "ConfigProblem", "Folder", "PathRefused", "accounts_of", "checked_path", "configured_accounts",
           "configured_blocked", "flags_of", "folders", "messages", "unique_of"]
