"""What a plugin is handed: its folders and settings at registration, and a per-call Context when a tool runs."""

from __future__ import annotations

import contextlib
import contextvars
import copy
import functools
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import platformdirs
from attrs import field, frozen

from gateway.api.deadline import Deadline
from gateway.gate.access import Gate
from gateway.privacy import framing

APP_NAME = "gateway"


@frozen
class Folders:
    """The gateway's own platformdirs folders (XDG on Linux), read from the environment when made."""

    config: Path
    data: Path
    state: Path
    cache: Path

    @classmethod
    def from_environment(cls) -> Folders:
        return cls(
            config=Path(platformdirs.user_config_dir(APP_NAME)),
            data=Path(platformdirs.user_data_dir(APP_NAME)),
            state=Path(platformdirs.user_state_dir(APP_NAME)),
            cache=Path(platformdirs.user_cache_dir(APP_NAME)),
        )

    def for_plugin(self, name: str) -> Folders:
        """A plugin's own folders: ``<data>/plugins/<name>`` and so on (made by `make_private`)."""
        return _plugin_folders(self, name)

    def make_private(self, plugin: str) -> None:
        """Create a plugin's data, state and cache folders, and the gateway's above them, readable by the person alone.

        The core does it when a plugin loads, so that no plugin can forget: whatever a plugin keeps there is
        behind a 0700 folder whatever mode its files get. Folders above the gateway's own are left as they are.
        """
        for base in (self.data, self.state, self.cache):
            for folder in (base, base / "plugins", base / "plugins" / plugin):
                try:
                    found = os.stat(folder)
                except FileNotFoundError:
                    found = None
                if found is None or not stat.S_ISDIR(found.st_mode):  # made, or refused as mkdir refuses it
                    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
                    found = folder.stat()
                if found.st_mode & 0o077:
                    os.chmod(folder, 0o700)


def home_environment(home: Path) -> dict[str, str]:
    """The variables that point a process's home and XDG folders at `home` (tests, the demo)."""
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }


@functools.lru_cache(maxsize=256)
def _plugin_folders(folders: Folders, name: str) -> Folders:
    return Folders(*(f / "plugins" / name for f in (folders.config, folders.data, folders.state, folders.cache)))


def _path_setting(settings: Mapping[str, Any], folders: Folders, key: str, default: Path | None) -> Path | None:
    value = settings.get(key)
    if value is None or value == "":
        return default
    # A plugin's folders are <gateway config>/plugins/<name> (Folders.for_plugin): two levels up is the config folder.
    return resolve_path(value, folders.config.parent.parent)


def _no_tables(_plugin: str) -> Mapping[str, Any]:
    return {}


def _table_copy(table: Mapping[str, Any]) -> Mapping[str, Any]:
    # A copy: a plugin that changes what it was given must not change the config the core and other plugins read.
    return copy.deepcopy(dict(table))


@frozen
class PluginHost:
    """What hooks get: the plugin's name, its folders and its settings (defaults filled, the core's keys left out).

    ``plugin_settings(name)`` gives another plugin's table as written, for the hooks that run with a config
    (commands, startup, shutdown); the registration hooks are pure and get an empty one. ``gate`` is the gate of
    that config for ``traits_of``, ``census`` and ``tied_projects`` (a closed one elsewhere).
    """

    name: str
    folders: Folders
    settings: Mapping[str, Any] = field(factory=dict)
    plugin_tables: Callable[[str], Mapping[str, Any]] = field(default=_no_tables, repr=False)
    # The gate of the config the core read: given to ``traits_of`` and ``census`` (a plugin may describe a thing
    # by the manifest's routes, as the timeline reads a route's folder name in a window title); else closed.
    gate: Gate = field(factory=lambda: Gate(outside_projects=False), repr=False)

    def plugin_settings(self, plugin: str) -> Mapping[str, Any]:
        """Another plugin's ``[plugins.<plugin>]`` table as written in the config the core read (empty when absent)."""
        return _table_copy(self.plugin_tables(plugin))

    def path_setting(self, key: str, default: Path | None = None) -> Path | None:
        """A setting holding a path, ``~`` expanded and relative paths taken from the config folder (empty: `default`)."""
        return _path_setting(self.settings, self.folders, key, default)


def _no_ties(_addresses: tuple[str, ...]) -> Mapping[str, frozenset[str]]:
    return {}


# Where `Context.progress` goes: set by the wire around one call whose host asked to hear of progress (its request
# carried a progress token), unset otherwise. A context variable, read when the call's Context is made, so that it
# goes with that Context wherever it runs (a worker thread, a refresh's own thread), and no further.
ProgressReport = Callable[[float, "float | None", "str | None"], None]
_progress_report: contextvars.ContextVar[ProgressReport | None] = contextvars.ContextVar(
    "gateway_progress_report", default=None)


@contextlib.contextmanager
def reporting_progress(report: ProgressReport) -> Iterator[None]:
    """For the block (one call): `Context.progress` hands each report to `report` (the wire's, which bounds,
    masks and sends them)."""
    token = _progress_report.set(report)
    try:
        yield
    finally:
        _progress_report.reset(token)


@frozen
class Context:
    """Everything a tool needs besides its arguments, fresh for each call.

    ``settings`` is the plugin's config table (with defaults filled in), ``folders`` its own folders, ``gate``
    the consent gate of this call, ``client`` the host's name and ``client_version`` its version (as its MCP
    initialize gave them), ``transport`` how it reached the gateway (``stdio``, ``http``, ``cli`` for
    ``gateway call``, ``direct`` in tests). ``frame`` wraps others' words with the mark
    made for this answer. ``deadline`` is when the call must be done by: wrap SQLite work in
    ``with ctx.interruptible(connection):`` so that it stops there. ``plugin_settings(name)`` is another
    plugin's table as written in the same config snapshot (a plugin built on another's settings, such as the spam
    filter on the mail accounts, reads them so and never the config file itself: ``--config`` is the core's).
    """

    plugin: str
    settings: Mapping[str, Any]
    folders: Folders
    gate: Gate
    client: str = "unknown"
    client_version: str = ""
    transport: str = "direct"
    mark: str = field(factory=framing.new_mark)
    deadline: Deadline = field(factory=Deadline.never)
    plugin_tables: Mapping[str, Mapping[str, Any]] = field(factory=dict, repr=False)
    # The person's zone, `[gateway] timezone` (an IANA name), "" for the computer's: every plugin shows times in
    # it, unless its own table names another.
    timezone: str = ""
    ties: Callable[[tuple[str, ...]], Mapping[str, frozenset[str]]] = field(default=_no_ties, repr=False)
    # Where `progress` goes: taken when the context is made, inside the call (`reporting_progress`), so that a
    # refresh on a thread of its own reports to the call that started it. The gateway sets it; None: nowhere.
    progress_to: ProgressReport | None = field(factory=lambda: _progress_report.get(), repr=False, eq=False)

    def tied(self, addresses: Iterable[str]) -> Mapping[str, frozenset[str]]:
        """The projects the person tied each of these addresses to, as every enabled plugin keeps them
        (``tied_projects``): only the tied addresses are keys; ids spelt as in the manifest. Put them in the
        thing's ``Traits(projects=...)``. Ask once per batch. Raises ToolError when a plugin's ties cannot be
        read (the call fails rather than give a thing whose tie was not seen)."""
        wanted = tuple(dict.fromkeys(a for a in addresses if a))
        return self.ties(wanted) if wanted else {}

    def plugin_settings(self, plugin: str) -> Mapping[str, Any]:
        """Another plugin's ``[plugins.<plugin>]`` table as written in this call's config (empty when absent).

        Raw: no defaults filled, not checked (the core checks a table against the settings its own plugin declares,
        so check what you read). A copy, which the caller may change freely.
        """
        return _table_copy(self.plugin_tables.get(plugin, {}))

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Tell the host how far this call's long work is: `done` units of `total` (when known), with a short
        `message` ("Indexed 1,200 of 48,000 messages").

        Cheap enough to call on every step of a loop: nothing is sent unless the host asked to hear of progress,
        a value not above the last one told is dropped (progress only goes forward), at most about ten reports a
        second leave (the latest wins) and the last is always given before the answer. The message is masked and
        put on one line like any text an agent gets, so write it for the person, never with others' words in it.
        Safe from the tool's worker thread and from a refresh; a call that ended has nothing more to tell.
        """
        if self.progress_to is not None:
            self.progress_to(done, total, message)

    def interruptible(self, connection: Any) -> Any:
        """A context manager: SQLite work on `connection` inside it is interrupted when the call's deadline passes."""
        return self.deadline.interrupting(connection)

    def frame(self, text: str) -> str:
        return framing.frame(text, self.mark)

    @staticmethod
    def one_line(text: str | None, limit: int | None = None) -> str:
        return framing.one_line(text, limit)

    @staticmethod
    def mask(text: str) -> str:
        from gateway.privacy import mask

        return mask(text)

    @staticmethod
    def clip(text: str | None, limit: int | None = None) -> str:
        """Others' words masked whole, then on one line cut to `limit` (mask first, then cut)."""
        from gateway.privacy import clip

        return clip(text, limit)

    def path_setting(self, key: str, default: Path | None = None) -> Path | None:
        """A setting holding a path, ``~`` expanded and relative paths taken from the config folder (empty: `default`)."""
        return _path_setting(self.settings, self.folders, key, default)


def resolve_path(value: Any, config_folder: Path) -> Path:
    """A path setting as the person means it: ``~`` is their home, a relative path is taken from the config folder."""
    path = Path(str(value)).expanduser()
    return path if path.is_absolute() else config_folder / path
