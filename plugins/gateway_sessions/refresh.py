"""The sessions store kept fresh at call time (gateway.api.refresh): the agents' folders and files stat'ed, what changed
imported, nothing walked when nothing changed.

After each import the refresh remembers, per agent, the time of every folder that holds (or may come to hold)
transcripts and the size and time of every transcript. The next call stats just those: a new file changes its
folder's time, an appended line its file's. Only then is the agent's folder walked and the changed files imported,
through the same importer as ``gateway sessions import`` (sources opened read-only, a file recorded as read in the
transaction that holds its messages, so a process killed mid-import leaves what a clean import would).

Where the kernel's file notifications work (gateway.api.changes), those folders are watched too, and a call made when
no event came since the last stat pass stats nothing at all; any doubt (no inotify, a lost event) falls back to
the stats.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import structlog
from attrs import define, field

from gateway import Changes, Context, Names, PluginHost, Refreshed, Source, merged, toward
from gateway_sessions.defaults import default_path
from gateway_sessions.importers import AGENTS, module

log = structlog.get_logger("gateway_sessions.refresh")

NAMES = {
    "claude-code": "Claude Code",
    "codex": "Codex",
    "gemini": "Gemini CLI",
    "opencode": "opencode",
    "cursor": "Cursor",
    "cline": "Cline, Roo Code and Kilo Code",
    "aider": "Aider",
    "copilot": "GitHub Copilot CLI",
    "goose": "Goose",
    "continue": "Continue",
    "qwen": "Qwen Code",
    "amp": "Amp",
}
SETTINGS = {agent: agent.replace("-", "_") for agent in AGENTS}

Signature = Callable[[str], Any]


@define
class Watched:
    """One agent's sources as the last import left them: folder times and file signatures."""

    root: str
    folders: dict[str, int]
    files: dict[str, Any]
    plain: bool = True  # the files' signature is (size, mtime) of the file alone
    root_agent: str = ""
    # The folders whose notifications say when a stat pass is due, with the names that matter in each (None: all).
    watch: dict[str, Names] = field(factory=dict)
    missing: bool = False  # the root was not there: a stat of it says when it appears

    def changed(self) -> list[str] | None:
        """The files whose signature moved ([] when nothing did); None when a folder moved (a walk is needed)."""
        stat = os.stat
        if self.missing:
            try:
                stat(self.root)
            except OSError:
                return []
            return None
        try:
            for folder, mtime in self.folders.items():
                if stat(folder).st_mtime_ns != mtime:
                    return None
            if self.plain:
                moved = []
                for path, before in self.files.items():
                    status = stat(path)
                    if (status.st_size, status.st_mtime_ns) != before:
                        moved.append(path)
                return moved
            signature = _signature_of(self.root_agent)
            return [path for path, before in self.files.items() if signature(path) != before]
        except OSError:
            return None  # a folder or file went away: walk again

    def changed_among(self, heard: frozenset[str]) -> list[str] | None:
        """As `changed`, knowing from the file notifications that only the `heard` paths can have changed: those of
        them that are this agent's transcripts are stat'ed, the others not; None when one is not a transcript
        known here (a new file, a folder: a walk is needed)."""
        moved = []
        for path in heard:
            folder, name = os.path.split(path)
            if folder not in self.watch:
                continue  # another agent's
            names = self.watch[folder]
            if names is not None and name not in names:
                continue
            before = self.files.get(path)
            if before is None or not self.plain:
                return None
            try:
                status = os.stat(path)
            except OSError:
                return None
            if (status.st_size, status.st_mtime_ns) != before:
                moved.append(path)
        return moved


def _plain_signature(path: str) -> tuple[int, int]:
    status = os.stat(path)
    return status.st_size, status.st_mtime_ns


_signatures: dict[str, Signature] = {}


def _signature_of(agent: str) -> Signature:
    found = _signatures.get(agent)
    if found is None:
        own = getattr(module(agent), "signature", None)
        found = _signatures[agent] = (lambda path: own(Path(path))) if own else _plain_signature
    return found


# Where each agent keeps its files by default depends on the environment only (HOME, XDG_*, CODEX_HOME...), which
# the gateway never changes while it runs: worked out once per environment, not on every call.
_ENVIRONMENT = (
    "HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "CONTINUE_GLOBAL_DIR"
)
_default_roots: dict[tuple, Path] = {}


def root_of(holder: Context | PluginHost, agent: str) -> Path:
    """Where `agent` keeps its transcripts: its setting, else its default place."""
    configured = holder.settings.get(SETTINGS[agent])
    if configured:
        return holder.path_setting(SETTINGS[agent]).expanduser()
    key = (agent, *map(os.environ.get, _ENVIRONMENT))
    found = _default_roots.get(key)
    if found is None:
        found = _default_roots[key] = module(agent).default_root().expanduser()
    return found


def look(agent: str, root: Path) -> Watched:
    """Walk `root` once: the transcripts worth reading and the folders whose time says when one is added."""
    signature = _signature_of(agent)
    present = root.exists()  # once, first: a place that appears after this is seen as appeared by the next look
    files: dict[str, Any] = {}
    for path in module(agent).sources(root) if present else []:
        try:
            files[str(path)] = signature(str(path))
        except OSError:
            continue
    folders: set[Path] = set()
    if root.is_dir():
        folders.add(root)
        # The folders right under the root too: a project's folder may exist before its first transcript.
        folders.update(child for child in _subfolders(root))
        for path in map(Path, files):
            parent = path.parent
            while parent != root and root in parent.parents:
                folders.add(parent)
                parent = parent.parent
    watch: dict[str, Names] = {}
    if not present:
        # The agent not installed yet: a stat of its place says when it appears (not the time of the nearest folder
        # that exists, often the home folder, whose time moves with every file made in it); notifications come from
        # that folder, for the name that leads to the place.
        nearest, names = toward(root)
        watch[nearest] = names
    elif not root.is_dir():  # one file: its folder, for its name (and a database's log beside it)
        watch[str(root.parent)] = frozenset({root.name, root.name + "-wal"})
    stamped: dict[str, int] = {}
    for folder in folders:
        try:
            stamped[str(folder)] = os.stat(folder).st_mtime_ns
        except OSError:
            continue
    for folder in stamped:
        watch.setdefault(folder, None)
    return Watched(str(root), stamped, files, plain=_signature_of(agent) is _plain_signature, root_agent=agent,
                   watch=watch, missing=not present)


def _subfolders(root: Path) -> Iterable[Path]:
    try:
        with os.scandir(root) as entries:
            return [Path(entry.path) for entry in entries if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return []


# Per store file, per agent: what the last import of this process saw. Shared by every Gateway in the process
# (tests make several): the store, not the Gateway, is what it describes.
_watched: dict[str, dict[str, Watched]] = {}
_locks: dict[str, threading.Lock] = {}
_locks_lock = threading.Lock()


@contextmanager
def importing(store_path: Path):
    """The store's import lock: one thread of this process and one process at a time (two hosts, `gateway watch`)
    import into it, so no file is read into it twice at once; SQLite's own lock guards each transaction besides."""
    with _locks_lock:
        lock = _locks.setdefault(str(store_path), threading.Lock())
    with lock:
        store_path.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(f"{store_path}.import-lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                import fcntl
            except ImportError:  # Windows: SQLite's lock alone
                fcntl = None
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_EX)
            yield
        finally:
            os.close(handle)  # closing releases the flock


_store_paths: dict[tuple, Path] = {}


def store_path(holder: Context | PluginHost) -> Path:
    """The store file (its setting resolved once per value: this runs on every call)."""
    key = (holder.settings.get("store"), str(holder.folders.config), str(holder.folders.data))
    found = _store_paths.get(key)
    if found is None:
        found = holder.path_setting("store", default_path(holder.folders.data))
        assert found is not None
        _store_paths[key] = found
    return found


def _todo(
    ctx: Context, heard: frozenset[str] | None = None,
) -> tuple[Path, dict[str, Watched], list[tuple[str, Path, list[str] | None]]]:
    """The store, what this process saw of each agent, and the agents to import: with the files that moved, or
    None when their folder must be walked (a folder moved, or never looked at). `heard`: the only paths that can
    have changed, when the file notifications say so (only those stat'ed)."""
    path = store_path(ctx)
    seen = _watched.setdefault(str(path), {})
    todo: list[tuple[str, Path, list[str] | None]] = []
    for agent in AGENTS:
        root = root_of(ctx, agent)
        watched = seen.get(agent)
        if watched is None or watched.root != str(root):
            moved = None
        else:
            moved = watched.changed() if heard is None else watched.changed_among(heard)
        if moved != []:
            todo.append((agent, root, moved))
    return path, seen, todo


# Per store file: the file notifications on the folders of every agent's Watched, and the agents' settings they were
# for. The settings as written are enough to tell a root moved: the rest of what a root depends on (the environment,
# the config folder) is fixed for a store file in a process, and looking it up would cost more than the check.
_changes: dict[str, tuple[tuple[Any, ...], Changes]] = {}


def _changes_of(ctx: Context) -> Changes:
    path = str(store_path(ctx))
    places = tuple(map(ctx.settings.get, _PLACES))
    found = _changes.get(path)
    if found is None or found[0] != places:  # a setting moved a root: watched anew after the next stat pass
        if found is not None:
            found[1].close()
        found = _changes[path] = (places, Changes())
    return found[1]


_PLACES = tuple(SETTINGS.values())


def _settle(changes: Changes, token: int, seen: dict[str, Watched]) -> None:
    changes.settle(token, merged(pair for watched in seen.values() for pair in watched.watch.items()))


def stale(ctx: Context) -> bool:
    """Whether a refresh has anything to do: nothing stat'ed when the watched folders had no event since the last
    stat pass, else a stat per watched folder and file; nothing walked or opened."""
    changes = _changes_of(ctx)
    if changes.quiet():
        return False
    token = changes.begin()  # before the stats: a write made during them leaves an event for the next call
    _, seen, todo = _todo(ctx, changes.heard())
    if todo:
        return True
    _settle(changes, token, seen)
    return False


def refresh(ctx: Context) -> Refreshed:
    """Import what the agents wrote since the last refresh; a stat per watched folder and file when nothing did."""
    changes = _changes_of(ctx)
    token = changes.begin()
    path, seen, todo = _todo(ctx, changes.heard())
    result = _import(path, seen, todo, ctx) if todo else Refreshed()
    _settle(changes, token, seen)  # not reached when the import failed: the next call stats and tries again
    return result


def close_watches() -> None:
    """Stop the file notifications (the plugin's shutdown); a later call stats and watches again."""
    for _, changes in _changes.values():
        changes.close()
    _changes.clear()


def _import(
    path: Path, seen: dict[str, Watched], todo: list[tuple[str, Path, list[str] | None]], ctx: Context | None = None
) -> Refreshed:
    """Import the agents' files in `todo`; what it added, and (with `ctx`, whose gate judges) where it belongs."""
    from gateway_sessions import store
    from gateway_sessions.importing import import_agent
    from gateway_sessions.tools import address

    added, changed, owners = 0, [], ()
    newest = 0  # the last session stored before this import: those after it are new
    with importing(path):
        connection: sqlite3.Connection | None = None
        try:
            for agent, root, moved in todo:
                before = seen.get(agent)
                if moved is not None and before is not None:
                    # Only files moved: each is imported alone (its own path as the importer's root), no walk.
                    signature = _signature_of(agent)
                    now = Watched(before.root, dict(before.folders), dict(before.files), before.plain, agent,
                                  before.watch, before.missing)
                    for file in moved:
                        now.files[file] = signature(file)  # before reading: a line written meanwhile is seen next
                    roots, wanted = [Path(file) for file in moved], set(moved)
                else:
                    now = look(agent, root)  # before reading, likewise
                    if before is not None and before.root != now.root:
                        before = None
                    wanted = {p for p, sig in now.files.items() if before is None or before.files.get(p) != sig}
                    roots = [root] if wanted else []
                if roots:
                    if connection is None:
                        connection = store.open_for_writing(path, say=_say)
                        newest = connection.execute("SELECT COALESCE(MAX(rowid), 0) FROM sessions").fetchone()[0]
                    count, recorded = _count(connection), _recorded(connection, wanted)
                    # The importer checks each file against what the store recorded; it is handed only the files
                    # that moved since this process last looked (all of them the first time).
                    for each in roots:
                        import_agent(connection, agent, each, progress=_only(wanted, ctx))
                    added += _count(connection) - count
                    read = {p for p, row in _recorded(connection, wanted).items() if recorded.get(p) != row}
                    changed.extend(address(i) for i in _sessions_from(connection, read))
                seen[agent] = now
            if added and connection is not None and ctx is not None:
                owners = _owners_of_new(ctx, connection, newest)
        finally:
            if connection is not None:
                connection.close()
    return Refreshed(added=added, changed=tuple(changed), owners=owners)


_ROW_COLUMNS = "rowid, agent, id, parent_id, title, cwd, created_at, updated_at, message_count"  # store.Row's


def _owners_of_new(ctx: Context, connection: sqlite3.Connection, after: int) -> tuple[frozenset[str], ...]:
    """Where the sessions stored after rowid `after` belong, judged as the tools judge a session (every place of
    it and of the sessions above it, `tools._owners`). Hosts are told that the list changed only if one
    is readable: the first the gate lets through is enough, and those it keeps back are not named."""
    from gateway_sessions import store
    from gateway_sessions.tools import _owners as owners_of_session  # the reads' own judgement

    reader = store.Reader(connection)
    rows = connection.execute(f"SELECT {_ROW_COLUMNS} FROM sessions WHERE rowid > ? ORDER BY rowid", (after,))
    for row in rows.fetchall():
        owners = owners_of_session(ctx, reader, store.Row(*row))
        if ctx.gate.allows(owners):
            return (owners,)
    return ()


def _say(sentence: str) -> None:
    # A store masked by an older version is masked again on opening: said as the tools say it.
    log.warning("sessions_store_upgrade", progress=sentence)


def _only(wanted: set[str], ctx: Context | None = None) -> Callable[[list[Path]], Iterable[Path]]:
    """The files that moved among those an importer found, each told as the call's progress once it was read."""
    def moved(paths: list[Path]) -> Iterable[Path]:
        kept = [path for path in paths if str(path) in wanted]
        for done, path in enumerate(kept, 1):
            yield path
            if ctx is not None:
                ctx.progress(done, len(kept), f"Read {done:,} of {len(kept):,} session files")
    return moved


def _count(connection: sqlite3.Connection) -> int:
    return connection.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]


def _chunks(paths: set[str]) -> Iterable[tuple[list[str], str]]:
    listed = sorted(paths)
    for start in range(0, len(listed), 500):
        chunk = listed[start:start + 500]
        yield chunk, ",".join("?" * len(chunk))


def _recorded(connection: sqlite3.Connection, paths: set[str]) -> dict[str, tuple[int, int]]:
    """What the store says it read of each path (size, time): a row that moved is a file imported just now."""
    found: dict[str, tuple[int, int]] = {}
    for chunk, marks in _chunks(paths):
        rows = connection.execute(f"SELECT path, size, mtime_ns FROM sources WHERE path IN ({marks})", chunk)
        found.update((row[0], (row[1], row[2])) for row in rows)
    return found


def _sessions_from(connection: sqlite3.Connection, sources: set[str]) -> list[str]:
    found: list[str] = []
    for chunk, marks in _chunks(sources):
        found.extend(row[0] for row in connection.execute(f"SELECT id FROM sessions WHERE source IN ({marks})", chunk))
    return found


def sources(ctx: Context) -> list[Source]:
    """Each agent's place, found or not, and how many of its transcripts the store does not have as they are now."""
    path = store_path(ctx)
    recorded: dict[str, tuple[int, int]] = {}
    if path.exists():
        try:
            connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            try:
                recorded = {row[0]: (row[1], row[2]) for row in connection.execute(
                    "SELECT path, size, mtime_ns FROM sources")}
            finally:
                connection.close()
        except sqlite3.Error:
            recorded = {}
    found = []
    for agent in AGENTS:
        root = root_of(ctx, agent)
        now = look(agent, root)
        behind = sum(1 for p, sig in now.files.items() if recorded.get(p) != tuple(sig))
        stale = f"{behind} of {len(now.files)} transcripts not imported as they are now" if behind else ""
        what = f"{NAMES[agent]} transcripts" + (f" ({len(now.files)})" if root.exists() else "")
        found.append(Source(what, root, root.exists(), stale))
    return found



