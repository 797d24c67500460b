"""Importing: every changed source file of an agent read once and upserted, a file's trouble reported, never fatal."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path

from attrs import define, field

from gateway import plural
from gateway_sessions import store
from gateway_sessions.importers import module


@define
class Report:
    agent: str
    root: str
    files_read: int = 0
    files_unchanged: int = 0
    sessions: int = 0
    messages: int = 0
    broken_lines: int = 0
    failed: list[tuple[str, str]] = field(factory=list)
    missing: bool = False  # the root does not exist

    @property
    def found_nothing(self) -> bool:
        """No transcript at all where the agent's files were looked for (the root missing, or holding none)."""
        return self.missing or not (self.files_read or self.files_unchanged or self.failed)

    def lines(self) -> list[str]:
        if self.missing:
            return [f"{self.agent}: nothing imported, {self.root} does not exist"]
        said = [
            f"{self.agent}: {plural(self.sessions, 'session')}, {plural(self.messages, 'message')} from "
            f"{plural(self.files_read, 'file')} ({self.files_unchanged:,} unchanged) in {self.root}"
        ]
        if self.broken_lines:
            lines = plural(self.broken_lines, "line")
            said.append(f"{self.agent}: {lines} could not be read and {'was' if self.broken_lines == 1 else 'were'} "
                        "passed over")
        said.extend(f"{self.agent}: {path} was not imported: {reason}" for path, reason in self.failed)
        return said


Progress = Callable[[list[Path]], Iterable[Path]]


def import_agent(
    connection: sqlite3.Connection,
    agent: str,
    root: Path | None = None,
    progress: Progress | None = None,
    batch_messages: int = store.BATCH_MESSAGES,
) -> Report:
    """Import what one agent recorded under `root` (its default place when None) into an open store.

    Files are written whole, several to a transaction: one is committed once it holds `batch_messages` messages or
    more, and at the end; its new messages are indexed just before (store.Writes). A file is recorded as read (its
    size and time) in the same transaction as its messages, so an interruption, or an exception from anywhere, rolls
    the open transaction back whole and the next import reads its files again; what was committed before stays.
    """
    importer = module(agent)
    root = (root or importer.default_root()).expanduser()
    report = Report(agent=agent, root=str(root))
    if not root.exists():
        report.missing = True
        return report
    signature = getattr(importer, "signature", store.file_signature)
    paths = importer.sources(root)
    writes: store.Writes | None = None
    try:
        for path in progress(paths) if progress else paths:
            try:
                size, mtime_ns = signature(path)
            except OSError as error:
                report.failed.append((str(path), error.strerror or str(error)))
                continue
            if store.source_unchanged(connection, str(path), size, mtime_ns):
                report.files_unchanged += 1
                continue
            try:
                parsed = importer.read(path)
            except Exception as error:  # a foreign file may break any way; the others still import
                report.failed.append((str(path), f"{type(error).__name__}: {error}"))
                continue
            if writes is None:
                writes = store.Writes.begin(connection)
            for session in parsed.sessions:
                writes.upsert(session, source=str(path), dropped=parsed.dropped.get(session.id, ()))
            store.record_source(connection, str(path), agent, size, mtime_ns, parsed.broken_lines)
            report.files_read += 1
            report.sessions += len(parsed.sessions)
            report.messages += sum(len(session.messages) for session in parsed.sessions)
            report.broken_lines += parsed.broken_lines
            if writes.messages >= batch_messages:
                writes, done = None, writes
                done.commit()
        if writes is not None:
            writes, done = None, writes
            done.commit()
    except BaseException:
        if writes is not None:
            writes.rollback()
        raise
    return report
