"""The plugin's refresh, for `gateway watch` and `gateway doctor`: every store brought up to what is on disk.

A call reads what changed by itself, before it answers (the mail index, the notes' and the contacts' indexes and
the vdir cache each stat what they read). This refresh does the same work ahead of time, so that with
`gateway watch` running no call pays for it: each account's Maildir, the task lists, the calendars, the contacts
and the notes. The core never runs it before a call (`stale` says no): the tools already did that work, and doing
it twice would cost each call a second pass. `sources` names each place with the config key that set it, so that
`gateway doctor` says a configured folder that does not exist (a typo, a disk not mounted) as a problem, and with
each account's messages read in part (past the parser's bounds), which doctor says as a warning.
"""

from __future__ import annotations

from pathlib import Path

from gateway import Context, Refresh, Refreshed, Source


def refresh() -> Refresh:
    return Refresh(run=_run, sources=_sources, stale=lambda ctx: False)


def _run(ctx: Context) -> Refreshed:
    import sqlite3
    import time

    from gateway_mail import docindex
    from gateway_mail.mail import index, shield
    from gateway_mail.mail.store import accounts
    from gateway_mail.notes import contacts, notes
    from gateway_mail.plan import events, tasks, vdir

    added = 0
    present = [a for a in accounts(ctx.settings, ctx.folders.config) if a.maildir.is_dir()]
    connection = index.thread_connection(index.index_path(ctx.folders.cache))
    counts = index.refresh(connection, present)
    added += counts.get("read", 0)
    shielded = shield.shield_of(ctx.settings, Path(ctx.folders.data))
    if shielded.on:  # the shield's judge waited for here, a minute at most a round: no call waits for it
        shield.update(connection, present, shielded, until=time.monotonic() + shield.WATCH_SECONDS, commands=True)
    for module, root in ((notes, notes.folder(ctx)), (contacts, contacts.folder(ctx))):
        if root is None or not root.is_dir():
            continue
        store = docindex.connect(Path(ctx.folders.cache) / module.INDEX_FILE, root)
        try:
            docindex.refresh(store, root, module.SUFFIXES, module.read_file)
        except sqlite3.Error:
            continue
        finally:
            store.close()
    for root in (tasks.root_of(ctx), events.root_of(ctx)):
        if root.is_dir():
            vdir.read(root, Path(ctx.folders.cache))
    return Refreshed(added=added)


def _sources(ctx: Context) -> list[Source]:
    from gateway_mail import unread
    from gateway_mail.mail.store import accounts, unreadable_said
    from gateway_mail.notes import contacts, notes
    from gateway_mail.plan import events, tasks

    in_part = unreadable_said(ctx)  # messages read in part: a warning of doctor's, beside their Maildir
    found = [Source(f"Maildir of account {account.name}", account.maildir, account.maildir.is_dir(),
                    setting="[plugins.mail] accounts", unreadable=in_part.get(account.name, ""))
             for account in accounts(ctx.settings, ctx.folders.config)]
    for what, key, root in (("task lists folder", "tasks", tasks.root_of(ctx)),
                            ("calendars folder", "calendars", events.root_of(ctx)),
                            ("address books folder", "contacts", contacts.folder(ctx)),
                            ("notes folder", "notes", notes.folder(ctx))):
        if root is None:
            continue
        named = bool(str(ctx.settings.get(key) or "").strip())
        found.append(Source(what, root, root.is_dir(), setting=f"[plugins.mail] {key}" if named else "",
                            unreadable=unread.said(ctx, key, root) if root.is_dir() else ""))
    found += _shield_sources(ctx)
    return found


def _shield_sources(ctx: Context) -> list[Source]:
    """The AI shield's judge, for doctor: the command (a problem when it is not there), else the labels' model; and
    the messages to a shielded address not judged yet, named with why (a warning)."""
    import shutil

    from gateway_mail.mail import index, judge, shield

    shielded = shield.shield_of(ctx.settings, Path(ctx.folders.data))
    if not shielded.on:
        return []
    said = ""
    path = index.index_path(ctx.folders.cache)
    if path.exists():
        connection = index.connect(path)
        try:
            said = shield.doctor_lines(connection, shielded)[1]
        finally:
            connection.close()
    if shielded.command:
        program = shutil.which(shielded.command[0])
        found = [Source("AI shield's judge (shield_command)", Path(program or shielded.command[0]),
                        program is not None, setting="[plugins.mail] shield_command")]
    else:
        found = [Source("AI shield's judge (the model of the person's labels)",
                        judge.model_path(Path(ctx.folders.data)), True)]
    # Said apart from the judge, so that it is said even when the judge is not there.
    return [*found, Source("AI shield's verdicts (in the mail index)", path, True, unreadable=said)]
