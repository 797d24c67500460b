"""Scheduled jobs: the ``cron_jobs`` table of the SQLite file the sessions plugin also keeps its sessions in.

The two plugins share the file, not code: each creates only its own tables. Jobs are written by ``gateway cron``
only; the MCP side opens the file read-only. ``last_run_at`` is for whatever runs the jobs to record.
"""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
from pathlib import Path

from attrs import frozen

from gateway_cron.defaults import default_path  # noqa: F401 - the store's callers name it here

SCHEMA = """
CREATE TABLE IF NOT EXISTS cron_jobs(
    name TEXT PRIMARY KEY,
    schedule TEXT NOT NULL,
    prompt TEXT NOT NULL,
    deliver_to TEXT NOT NULL DEFAULT '',
    enabled INTEGER NOT NULL DEFAULT 1,
    timezone TEXT NOT NULL DEFAULT '',
    cwd TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    last_run_at TEXT NOT NULL DEFAULT ''
);
"""
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_COLUMNS = "name, schedule, prompt, deliver_to, enabled, timezone, cwd, created_at, last_run_at"


@frozen
class Job:
    name: str
    schedule: str
    prompt: str
    deliver_to: str
    enabled: bool
    timezone: str
    cwd: str
    created_at: str
    last_run_at: str


class JobError(ValueError):
    """A change the store refuses; the message says why."""



def open_for_writing(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.executescript(SCHEMA)
    return connection


def read_jobs(path: Path) -> list[Job]:
    """Every job, by name; none when there is no store or no job table yet. Opens the file read-only."""
    if not path.exists():
        return []
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return jobs(connection)
    finally:
        connection.close()


def jobs(connection: sqlite3.Connection) -> list[Job]:
    try:
        rows = connection.execute(f"SELECT {_COLUMNS} FROM cron_jobs ORDER BY name").fetchall()
    except sqlite3.OperationalError as error:
        if "no such table" in str(error):
            return []
        raise
    return [Job(*row[:4], bool(row[4]), *row[5:]) for row in rows]


def add(connection: sqlite3.Connection, job: Job) -> None:
    if not NAME.match(job.name):
        raise JobError(f"{job.name!r} cannot name a job: use letters, digits, '.', '_' or '-' (at most 64)")
    try:
        connection.execute(
            f"INSERT INTO cron_jobs({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                job.name,
                job.schedule,
                job.prompt,
                job.deliver_to,
                int(job.enabled),
                job.timezone,
                job.cwd,
                job.created_at or dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                job.last_run_at,
            ),
        )
    except sqlite3.IntegrityError as error:
        raise JobError(f"a job named {job.name!r} exists already: remove it first") from error


def remove(connection: sqlite3.Connection, name: str) -> None:
    if connection.execute("DELETE FROM cron_jobs WHERE name = ?", (name,)).rowcount == 0:
        raise JobError(f"no job named {name!r}")


def set_enabled(connection: sqlite3.Connection, name: str, enabled: bool) -> None:
    if (
        connection.execute("UPDATE cron_jobs SET enabled = ? WHERE name = ?", (int(enabled), name)).rowcount
        == 0
    ):
        raise JobError(f"no job named {name!r}")
