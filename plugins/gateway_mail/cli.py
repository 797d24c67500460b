"""`gateway mail index [--account NAME]` and `gateway mail accounts`: run in the person's terminal."""

from __future__ import annotations

import os
import sys
import time

import click

from gateway import PluginHost, plural
from gateway_mail.mail import index, maildir
from gateway_mail.mail.accounts import ConfigProblem
from gateway_mail.mail.store import accounts


def commands(gateway: PluginHost) -> list[click.Command]:
    def configured() -> list:
        try:
            return accounts(gateway.settings, gateway.folders.config)
        except ConfigProblem as problem:
            raise click.ClickException(str(problem)) from problem

    @click.group("mail")
    def group() -> None:
        """The mail plugin: its index and its accounts."""

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
                                           workers=os.cpu_count() or 1)
            else:
                counts = index.refresh(connection, chosen, full=full, workers=os.cpu_count() or 1)
            held = connection.execute("SELECT count(*) FROM messages").fetchone()[0]
        finally:
            connection.close()
        click.echo(f"{counts['read']} read, {counts['moved']} moved or reflagged, {counts['removed']} removed, "
                   f"{counts['unreadable']} unreadable (read by their envelope or not opened; gateway doctor names "
                   f"them); {held} messages indexed ({time.perf_counter() - started:.1f} s).")

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
