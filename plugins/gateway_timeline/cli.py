"""`gateway timeline ...`: fill the event store from ActivityWatch or from a recorder's JSON lines."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from gateway import PluginHost, plural
from gateway_timeline import settings


def _echo(message: str) -> None:
    click.echo(message, err=True)


@contextmanager
def _bar(total: int | None, label: str) -> Iterator[Any]:
    """A progress bar on standard error when it is a terminal; a no-op otherwise."""
    if sys.stderr.isatty() and total:
        with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
            yield bar.update
    else:
        yield None


def make_group(host: PluginHost) -> click.Group:
    """The `timeline` command group, bound to the plugin's folders and settings."""

    def store_path() -> Path:
        return settings.store_path(host)

    @click.group(name="timeline", help="The activity timeline: import what ActivityWatch or another recorder wrote.")
    def group() -> None:
        pass

    @group.group(name="import", help="Import from another tool's own store.")
    def import_group() -> None:
        pass

    @import_group.command(
        name="activitywatch",
        help=(
            "Import ActivityWatch's window, AFK, web and editor events (read-only; only what is new since the "
            "last run; running it twice adds nothing). DB is aw-server-rust's sqlite.db or aw-server's "
            "peewee-sqlite.v2.db; by default the [plugins.timeline] activitywatch setting, else the usual places. "
            "With --watch it keeps importing every few seconds, which also tells agents that recording is on."
        ),
    )
    @click.argument("db", required=False, type=click.Path(dir_okay=False, path_type=Path))
    @click.option("--watch", is_flag=True, help="Keep importing until interrupted (Ctrl-C).")
    @click.option("--every", default=5.0, show_default=True, help="Seconds between imports with --watch.")
    def import_activitywatch(db: Path | None, watch: bool, every: float) -> None:
        from gateway_timeline.importers.activitywatch import (
            ActivityWatchError,
            count_pending,
            import_database,
        )
        from gateway_timeline.store import Store

        path = db or settings.activitywatch_path(host)
        if path is None:
            tried = ", ".join(str(p) for p in settings.activitywatch_candidates())
            raise click.ClickException(f"no ActivityWatch database found (looked at {tried}); give its path")
        retention = settings.retention_ms(host.settings)
        with Store.open(store_path(), own_folder=store_path().parent == host.folders.data) as store:
            try:
                with _bar(count_pending(path, store), "Importing ActivityWatch events") as progress:
                    report = import_database(path, store, retention_ms=retention, progress=progress)
            except ActivityWatchError as error:
                store.set_meta("last_import_error", str(error))
                raise click.ClickException(str(error)) from error
            store.set_meta("last_import_error", "")
            _report(report, path)
            while watch:
                try:
                    time.sleep(every)
                    report = import_database(path, store, retention_ms=retention)
                except ActivityWatchError as error:
                    store.set_meta("last_import_error", str(error))
                    _echo(f"import failed, retrying: {error}")
                    continue
                except KeyboardInterrupt:
                    break
                _beat(store, report.newest_end_ms, settings.running_within_ms(host.settings))
                if report.total:
                    _echo(f"{time.strftime('%H:%M:%S')} {plural(report.total, 'new event')}")

    def _beat(store: Any, newest_end_ms: int | None, within_ms: int) -> None:
        # Only a database that ActivityWatch is still writing to means recording is on.
        now_ms = int(time.time() * 1000)
        if newest_end_ms is not None and now_ms - newest_end_ms <= within_ms:
            store.set_meta("heartbeat", {"at_ms": now_ms, "source": "activitywatch"})

    def _report(report: Any, path: Path) -> None:
        _echo(f"ActivityWatch ({'aw-server-rust' if report.flavour == 'rust' else 'aw-server'}) at {path}:")
        for bucket, count in report.imported.items():
            _echo(f"  {bucket}: {plural(count, 'new event')}")
        for bucket, kind in report.skipped_buckets.items():
            _echo(f"  {bucket}: skipped (bucket type {kind} is not imported)")
        # Counted over the rows new to this import (ActivityWatch's newest row, read again, was counted before).
        if report.private_dropped:
            _echo(f"  {plural(report.private_dropped, 'private-window event')} dropped, never stored")
        if report.too_old or report.pruned:
            old = plural(report.too_old + report.pruned, "event")
            _echo(f"  {old} older than the retention period left out or deleted")
        _echo(f"Store: {store_path()}")

    @group.command(
        name="ingest",
        help=(
            "Store envelope events (one JSON object per line, as tadoru and compatible recorders write them) "
            "from FILE, or from standard input with '-'. Lines that are not events are counted and reported; "
            "the good ones are kept. Reading '-' from a live recorder also marks recording as running."
        ),
    )
    @click.argument("file", type=click.Path(allow_dash=True, dir_okay=False, path_type=Path))
    def ingest(file: Path) -> None:
        from gateway_timeline.importers.jsonl import ingest_lines
        from gateway_timeline.store import Store

        live = str(file) == "-"
        retention = settings.retention_ms(host.settings)
        with Store.open(store_path(), own_folder=store_path().parent == host.folders.data) as store:
            if live:
                report = ingest_lines(sys.stdin.buffer, store, retention_ms=retention, live=True)
            else:
                if not file.is_file():
                    raise click.ClickException(f"no such file: {file}")
                with file.open("rb") as handle, _bar(file.stat().st_size // 200 or None, "Ingesting") as progress:
                    report = ingest_lines(handle, store, retention_ms=retention, progress=progress)
        already = report.stored - report.new
        _echo(
            f"{plural(report.new, 'new event')} stored"
            + (f" ({already:,} already there)" if already else "")
            + f" from {plural(report.lines, 'line')}; {plural(report.bad, 'bad line')}"
            + (f", {plural(report.too_old, 'event')} older than the retention period" if report.too_old else "")
            + (f", {plural(report.heartbeats, 'heartbeat')}" if report.heartbeats else "")
        )
        if report.private_dropped:
            # Nothing of a private window's events is kept, not even their ids, so a file read again has its
            # private lines skipped again: said as what this file holds, not as something new.
            _echo(f"  {plural(report.private_dropped, 'line')} from private windows skipped (never stored)")
        for problem in report.problems:
            _echo(f"  {problem}")
        if report.bad > len(report.problems):
            _echo(f"  ... and {plural(report.bad - len(report.problems), 'more bad line')}")
        _echo(f"Store: {store_path()}")

    return group
