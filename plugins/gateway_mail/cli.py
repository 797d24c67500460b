"""`gateway mail index [--account NAME]` and `gateway mail accounts`: run in the person's terminal."""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import click
from maildirs.folders import looked_at

from gateway import REPLAY_SECONDS, PluginHost, ToolError, plural, replayable, usable_cores
from gateway_mail.mail import index, judge, maildir, shield
from gateway_mail.mail.accounts import ConfigProblem
from gateway_mail.mail.store import accounts


def commands(gateway: PluginHost) -> list[click.Command]:
    def configured() -> list:
        try:
            return accounts(gateway.settings, gateway.folders.config)
        except ConfigProblem as problem:
            raise click.ClickException(str(problem)) from problem

    def shielding() -> shield.Shield:
        try:
            return shield.shield_of(gateway.settings, Path(gateway.folders.data))
        except ToolError as problem:
            raise click.ClickException(str(problem)) from problem

    @click.group("mail")
    def group() -> None:
        """The mail plugin: its index, its accounts and the AI shield's labels."""

    @group.command("index")
    @click.option("--account", "name", default=None, help="only this account")
    @click.option("--full", is_flag=True, help="list every folder, even those whose directories did not change")
    def index_command(name: str | None, full: bool) -> None:
        """Build or refresh the mail index (masked text only, in the plugin's cache folder)."""
        chosen = configured()
        if name is not None:
            chosen = [a for a in chosen if a.name == name]
            if not chosen:
                raise click.ClickException(f"no account named {name!r} in [plugins.mail] accounts")
        if not chosen:
            raise click.ClickException("no mail account is configured: [plugins.mail] accounts = [{ name, maildir }]")
        connection = index.connect(index.index_path(gateway.folders.cache))
        started = time.perf_counter()
        try:
            if sys.stderr.isatty():
                total = index.count_files(chosen)
                with click.progressbar(length=total, label="Indexing mail", file=sys.stderr) as bar:
                    counts = index.refresh(connection, chosen, full=full, progress=bar.update,
                                           workers=usable_cores())
            else:
                counts = index.refresh(connection, chosen, full=full, workers=usable_cores())
            held = connection.execute("SELECT count(*) FROM messages").fetchone()[0]
            shielded = shielding()
            if shielded.on:  # every message looked at, what waits judged (the command waited for, each in its time)
                shield.update(connection, configured(), shielded, until=math.inf, commands=True)
                judged = shield.counts(connection)
                gone = judge.uncounted(Path(gateway.folders.data))
            # Nothing new and no shield (whose verdicts depend on time and another program): the next run of this
            # same command line says the same, as long as what this refresh looked at is as it is now.
            kept = None if full or shielded.on or any(counts.values()) else _looked_at(connection, chosen)
        finally:
            connection.close()
        said = (f"{counts['read']} read, {counts['moved']} moved or reflagged, {counts['removed']} removed, "
                f"{counts['unreadable']} unreadable (read by their envelope or not opened; gateway doctor names "
                f"them); {held} messages indexed ({REPLAY_SECONDS} s).")
        if kept is not None:
            path = index.index_path(gateway.folders.cache)
            replayable(said + "\n", [*kept, path, Path(f"{path}-wal")])
        click.echo(said.replace(REPLAY_SECONDS, f"{time.perf_counter() - started:.1f}"))
        if shielded.on:
            click.echo(f"AI shield: {plural(judged['hostile'] + judged['ok'] + judged['unjudged'], 'message')} to a "
                       f"shielded address: {judged['hostile']} hostile, {judged['ok']} judged ok, "
                       f"{judged['unjudged']} not judged (kept from agents; gateway doctor says why).")
            if gone:
                click.echo(judge.uncounted_said(gone) + ".")

    for name, verdict in (("hostile", shield.HOSTILE), ("not-hostile", shield.OK)):
        group.add_command(_label_command(name, verdict, gateway, configured, shielding))

    @group.command("accounts")
    def accounts_command() -> None:
        """Each account, its folders and how many messages each holds."""
        chosen = configured()
        if not chosen:
            click.echo("No mail account is configured: [plugins.mail] accounts = [{ name, maildir }]")
        for account in chosen:
            found = maildir.folders(account.maildir)
            where = "" if account.maildir.is_dir() else " (not found)"
            click.echo(f"{account.name}: {account.maildir}{where}, {len(found)} folders")
            for folder in found:
                count = sum(1 for _ in maildir.messages(folder.path))
                click.echo(f"  {folder.name}: {plural(count, 'message')}")

    return [group]


def _looked_at(connection: Any, chosen: list) -> list[Path] | None:
    """What a refresh with nothing new looked at (each account's root and the directories its folders are found
    in, each folder's `new` and `cur`), or None when the index's record of a folder is not what is on disk now (a
    folder that changed within its time's granularity is recorded so: the next refresh lists it again)."""
    looked: list[Path] = []
    for account in chosen:
        looked += looked_at(account.maildir)
        for folder in maildir.folders(account.maildir):
            for sub in maildir.SUBDIRS:
                key = f"{account.name}\x1f{folder.name}\x1f{sub}"
                row = connection.execute("SELECT mtime_ns FROM dirs WHERE path = ?", (key,)).fetchone()
                try:
                    now = os.stat(folder.path / sub).st_mtime_ns
                except OSError:
                    now = -1
                if row is None or row[0] != now:
                    return None
                looked.append(folder.path / sub)
    return looked


def _label_command(name: str, verdict: str, gateway: PluginHost, configured, shielding) -> click.Command:  # noqa: ANN001
    hostile = verdict == shield.HOSTILE

    @click.command(name)
    @click.argument("address")
    def label(address: str) -> None:
        message_id = address.strip().removeprefix("mid:").strip().strip("<>")
        if not message_id:
            raise click.ClickException("give a message's address: mid:<Message-ID>, as search_mail prints it")
        chosen = configured()
        shielded = shielding()
        connection = index.connect(index.index_path(gateway.folders.cache))
        try:
            index.refresh(connection, chosen)
            if connection.execute("SELECT 1 FROM messages WHERE message_id = ?", (message_id,)).fetchone() is None:
                raise click.ClickException(f"no message mid:{message_id} in the mail index (gateway mail index reads "
                                           "new mail; a Message-ID is written without its < >)")
            try:
                learnt = judge.learn(Path(gateway.folders.data), message_id, verdict,
                                     shield.copies_of(connection, chosen))
            except ValueError as error:
                raise click.ClickException(f"mid:{message_id}: {error}; it is not labelled") from error
            except OSError as error:
                raise click.ClickException(f"mid:{message_id}: the shield's model cannot be written "
                                           f"({error.strerror or error}); it is not labelled") from error
            if shielded.on:
                shield.update(connection, chosen, shielded, until=time.monotonic() + 60, commands=False)
            shield.label(connection, message_id, verdict)
            addressed = connection.execute("SELECT count(*) FROM shield WHERE message_id = ? AND addressed = 1",
                                           (message_id,)).fetchone()[0]
        finally:
            connection.close()
        kept = ("kept from agents" if hostile else "given to agents like any other mail to it") if addressed else (
            "not to a shielded address, so only the model learns from it")
        click.echo(f"mid:{message_id} labelled {name}: {kept}. The shield's model now holds "
                   f"{plural(learnt.hostile, 'hostile message')} and {plural(learnt.ok, 'message')} not hostile.")
        if learnt.recounted:
            click.echo(f"The model was counted again from the person's {plural(learnt.recounted, 'label')}, for the "
                       "spam filter's current tokenizer (or for a message whose bytes changed since its label).")
        if learnt.uncounted:
            click.echo(judge.uncounted_said(learnt.uncounted) + " (gateway doctor says them too).")

    label.help = (f"Label a message {name.replace('-', ' ')} for the AI shield: its verdict from now on, and a lesson "
                  "for the model that judges mail to a shielded address when no shield_command is set.")
    return label
