"""maildirs: the mail accounts and Maildir folders, read the same way by every plugin that needs them.

A library, not a plugin (no entry point): the mail plugin and the spam plugin both import it, and neither
imports the other. What it promises:

- `maildirs.accounts`: `Account` (name, maildir, addresses, authserv_id, drafts, from_name) and `accounts_of(raw,
  resolve)`, which checks `[plugins.mail] accounts` entry by entry and raises `ConfigProblem` (a `ToolError`)
  naming the key and what to write; `accounts_in(table, config_folder)` and `blocked_in(table)` for plugins other
  than mail, given the `[plugins.mail]` table the core hands them (`ctx.plugin_settings("mail")`: the config the
  core read, whichever file `--config` named); `sender_blocked(rules, sender)`; the admin windows.
- `maildirs.folders`: `folders(root)` lists every Maildir folder under an account (mbsync's real subfolders,
  Maildir++ dot folders, offlineimap's flat names), each named with `/` (`INBOX`, `Archive/2026`), deciding what
  a dot means from the layout present (`layout_of`); `messages(folder)` the files of `new/` and `cur/`;
  `flags_of`, `unique_of` (the file's name without its info suffix); `checked_path(written, roots)`, the rule
  for a path an agent gives (as written, then with links resolved).
- `maildirs.conversations`: `Conversations` joins messages by every id they name (Message-ID, In-Reply-To,
  References) and gives the owners a conversation shares, so a reader closes a whole conversation as the mail
  plugin does, and `ids_with(ids)` every id of their conversations (what a reader asks the ties about);
  `head_of(path)` reads a file's ids, Subject and From from its headers alone, `facts_of(path)` those and the From
  address, the servers whose Authentication-Results pass it, and its To and Cc.
- `maildirs.authentication`: `verdict(results, authserv_id, sender)`, pass, forged or unauthenticated from the
  account's own server's Authentication-Results only (the mail plugin's verdict and the spam plugin's proof of a
  sender are the same rule), and `passed_by(results, sender)`.
- `maildirs.subjects`: `closed_by_hidden_subject`, the closed projects whose subject route may take what a mask hid
  in a subject (moved from the mail plugin's gating, which imports it).
- `maildirs.shield`: which mail goes to a shielded address (To, Cc, Delivered-To, X-Original-To), "someone at" a
  sender's domain, and the AI shield's verdicts as the mail plugin keeps them in its index (`Verdicts`, read-only).
- `maildirs.testing`: a Dovecot IMAP server on a loopback port, for tests that need a real one.

Nothing here writes to a Maildir.
"""

from maildirs.accounts import Account, ConfigProblem, accounts_in, accounts_of, blocked_in
from maildirs.conversations import Conversations, Head, facts_of, head_of
from maildirs.folders import Folder, PathRefused, checked_path, flags_of, folders, messages, unique_of

__all__ = ["Account", "ConfigProblem", "Conversations", "Folder", "Head", "facts_of", "PathRefused", "accounts_in", "accounts_of",
           "blocked_in", "checked_path", "flags_of", "folders", "head_of", "messages", "unique_of"]
