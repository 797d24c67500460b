"""``gateway sessions import|show|list``: the person's own view of the store, and the only way anything is written to it."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import click

from gateway import PluginHost
from gateway_sessions import render, store
from gateway_sessions.importers import AGENTS

AGENT_SETTINGS = {agent: agent.replace("-", "_") for agent in AGENTS}
AMBIGUOUS_SHOWN = 5  # ids named when the start of an id given to `show` is the start of several
FILL = "`gateway sessions import` fills it"


def store_path(host: PluginHost) -> Path:
    return host.path_setting("store", store.default_path(host.folders.data))


def _progress(label: str):
    if not sys.stderr.isatty():
        return None

    def wrap(paths):
        with click.progressbar(paths, label=label, file=sys.stderr) as bar:
            yield from bar

    return wrap


def _damaged(path: Path, error: Exception) -> click.ClickException:
    """What to say when the store itself is not a database SQLite can use (written over, cut short, not ours)."""
    return click.ClickException(
        f"the sessions store {path} cannot be used: SQLite says {error}. It is damaged or is not the gateway's. "
        f"Nothing was imported. Move it aside (mv '{path}' '{path}.damaged') and run `gateway sessions import` again: "
        "the store is made anew from the agents' transcripts, which are only ever read."
    )


def commands(host: PluginHost) -> list[click.Command]:
    @click.group("sessions")
    def sessions() -> None:
        """Past agent sessions (Claude Code, Codex, Gemini CLI, opencode, Cursor, Cline, Aider...) in one store."""

    @sessions.command("import")
    @click.argument("agent", type=click.Choice([*AGENTS, "all"]), default="all")
    @click.argument("path", type=click.Path(path_type=Path), required=False)
    def import_(agent: str, path: Path | None) -> None:
        """Copy the agents' transcripts into the store; run it again at any time, only changed files are read.

        AGENT is one of the agents listed or all (the default). PATH, for one agent, replaces where it keeps its
        files (for Claude Code the folder of per-project folders, ~/.claude/projects; for Codex ~/.codex/sessions;
        for Gemini CLI ~/.gemini/tmp; for opencode its opencode.db; for Cursor its state.vscdb; for Cline the
        editors' settings folder; for Aider a repository or a folder of them; see the plugin's README for the
        others). The agents' files are only read.
        """
        from gateway_sessions.importers import module
        from gateway_sessions.importing import import_agent

        if path is not None and agent == "all":
            raise click.UsageError(
                "PATH belongs to one agent: name it, e.g. `gateway sessions import codex PATH`"
            )
        if path is not None and not path.expanduser().exists():
            raise click.ClickException(f"{path} does not exist; give {agent}'s {module(agent).EXPECTED}")
        target = store_path(host)
        try:
            connection = store.open_for_writing(target, say=click.echo)
        except sqlite3.DatabaseError as error:
            raise _damaged(target, error) from None
        trouble = False
        try:
            for name in AGENTS if agent == "all" else (agent,):
                root = path or host.path_setting(AGENT_SETTINGS[name])
                report = import_agent(connection, name, root, progress=_progress(f"{name}"))
                trouble = trouble or bool(report.failed)
                for line in report.lines():
                    click.echo(line)
                if agent != "all" and report.found_nothing:
                    # One agent was asked for and none of its transcripts is there: say where they should be.
                    where = "PATH" if path is not None else f"PATH (or the setting `{AGENT_SETTINGS[name]}`)"
                    click.echo(
                        f"Error: no {name} transcripts in {report.root}; give {where} as {module(name).EXPECTED}",
                        err=True,
                    )
                    trouble = True
        except sqlite3.DatabaseError as error:
            raise _damaged(target, error) from None
        finally:
            connection.close()
        if trouble:
            sys.exit(1)

    @sessions.command("show")
    @click.argument("session_id", metavar="ID")
    def show(session_id: str) -> None:
        """Print one session in full, tool calls and their results included. ID may be the start of an id, when
        only one session's id begins so."""
        reader = store.reader(store_path(host))
        if reader is None or not reader.has_sessions_table():
            raise click.ClickException(f"session not found: {session_id} (the store is empty: {FILL})")
        row = reader.find(session_id)
        if row is None:
            # Not a whole id: the start of one, if only one session's id begins so.
            candidates = reader.ids_beginning(session_id, AMBIGUOUS_SHOWN + 1)
            if not candidates:
                raise click.ClickException(f"session not found: {session_id}")
            if len(candidates) > 1:
                shown = ", ".join(candidates[:AMBIGUOUS_SHOWN])
                more = ", …" if len(candidates) > AMBIGUOUS_SHOWN else ""
                raise click.ClickException(
                    f"{session_id} is the start of several session ids ({shown}{more}): give more of it"
                )
            row = reader.find(candidates[0])
        assert row is not None
        click.echo(render.full_transcript(row, reader.messages(row)))

    @sessions.command("list")
    @click.option(
        "--limit", default=20, show_default=True, type=click.IntRange(min=1), help="How many to show."
    )
    def list_(limit: int) -> None:
        """The sessions in the store, newest first."""
        reader = store.reader(store_path(host))
        rows = reader.recent(limit) if reader is not None and reader.has_sessions_table() else []
        for row in rows:
            click.echo(render.row_line(row.id, row.title, row.message_count, row.updated_at))
        if not rows:
            click.echo("(no sessions)")
            click.echo(f"The store is empty: {FILL}.")

    return [sessions]
