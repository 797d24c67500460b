"""The gateway's configuration: one TOML file, read again whenever it changes (a stat per call).

The gate fails closed: a config named explicitly (``--config``, ``GATEWAY_CONFIG``) or a manifest named in
it that is missing, unreadable, empty or changing while read makes the snapshot an error, and while it is
one nothing is given. Only the default paths being absent mean "no config" and "no projects", and only until
this process has seen the file: a config or manifest that was there and is gone is being saved (`git
checkout` unlinks then creates, an editor renames), so it is looked for again for a moment, then an error.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
import time
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from attrs import evolve, field, frozen

from gateway.api.deadline import DEFAULT_CALL_TIMEOUT
from gateway.engine.lock import LOCK_FILE
from gateway.gate.access import Gate, Manifest, ManifestError
from gateway.gate.routes import forget_links
from gateway.gate.traits import forget_linked

CORE_PLUGIN_KEYS = frozenset({"prefix", "disabled_tools", "refresh"})
_GATEWAY_KEYS = frozenset({"plugins", "read_only", "call_timeout", "refresh_budget_ms", "timezone"})
_ACCESS_KEYS = frozenset({"projects", "outside_projects"})
_TOP_KEYS = frozenset({"gateway", "access", "plugins", "profiles"})
_PROFILE_KEYS = frozenset({"plugins", "tools", "projects", "read_only", "outside_projects"})


class ConfigError(ValueError):
    """The configuration cannot be used; the message says which file, what is wrong and what to do."""


def config_path(folder: Path) -> Path:
    """Where the config lives: ``--config`` / ``GATEWAY_CONFIG`` if given, else ``config.toml`` in `folder`."""
    return config_choice(folder)[0]


def config_choice(folder: Path) -> tuple[Path, bool]:
    """The config's path, and whether it was given explicitly (then a missing file is an error)."""
    override = os.environ.get("GATEWAY_CONFIG")
    return (Path(override).expanduser(), True) if override else (folder / "config.toml", False)


@frozen
class Profile:
    """`[profiles.NAME]`: what one host is given, never more than the rest of the config gives. Each list left
    out means "as the config says"; `projects` names the projects open to this host (of those the manifest
    opens); `outside_projects = false` closes things in no project to it."""

    plugins: tuple[str, ...] | None = None
    tools: tuple[str, ...] | None = None
    projects: tuple[str, ...] | None = None
    read_only: bool = False
    outside_projects: bool | None = None


def _profiles(data: Mapping[str, Any], where: str) -> dict[str, Profile]:
    found = {}
    for name, table in _table(data, "profiles", where).items():
        place = f"[profiles.{name}]"
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where}: {place} must be a table")
        _refuse_unknown(table, _PROFILE_KEYS, where, place)
        lists = {}
        for key in ("plugins", "tools", "projects"):
            value = table.get(key)
            if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
                raise ConfigError(f"{where}: {place} {key} must be a list of names")
            lists[key] = tuple(value) if value is not None else None
        for key in ("read_only", "outside_projects"):
            if key in table and not isinstance(table[key], bool):
                raise ConfigError(f"{where}: {place} {key} must be true or false")
        found[str(name)] = Profile(**lists, read_only=table.get("read_only", False),
                                   outside_projects=table.get("outside_projects"))
    return found


@frozen
class Config:
    """What the file says. ``plugins`` is None when the file does not choose (then every plugin is on)."""

    path: Path | None = None
    plugins: tuple[str, ...] | None = None
    read_only: bool = False
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    refresh_budget_ms: float = 300  # how long a call waits for its plugin's refresh (gateway.api.refresh)
    timezone: str = ""  # the person's zone for every plugin (an IANA name); "" = the computer's
    projects_path: Path | None = None
    projects_named: bool = False  # the config names the manifest: then a missing one is an error
    outside_projects: bool = True
    plugin_tables: Mapping[str, Mapping[str, Any]] = field(factory=dict)
    profiles: Mapping[str, Profile] = field(factory=dict)
    # Set on the copy a profile narrows (gateway.engine.core): the tools it may list (None: all), and its name.
    allowed_tools: frozenset[str] | None = None
    profile: str = ""

    @classmethod
    def from_toml(cls, text: str, path: Path | None = None) -> Config:
        where = str(path) if path else "the config"
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{where} is not valid TOML: {error}. Fix the file, then call again.") from error
        return cls.from_dict(data, path)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: Path | None = None) -> Config:
        where = str(path) if path else "the config"
        _refuse_unknown(data, _TOP_KEYS, where, "")
        gateway = _table(data, "gateway", where)
        access = _table(data, "access", where)
        _refuse_unknown(gateway, _GATEWAY_KEYS, where, "[gateway]")
        _refuse_unknown(access, _ACCESS_KEYS, where, "[access]")
        plugins = gateway.get("plugins")
        if plugins is not None and (
            not isinstance(plugins, list) or not all(isinstance(p, str) and p for p in plugins)
        ):
            raise ConfigError(f"{where}: [gateway] plugins must be a list of plugin names, e.g. [\"sessions\"]")
        if plugins is not None and len(set(plugins)) != len(plugins):
            raise ConfigError(f"{where}: [gateway] plugins names a plugin twice")
        for key, table, name in (("read_only", gateway, "[gateway]"), ("outside_projects", access, "[access]")):
            if key in table and not isinstance(table[key], bool):
                raise ConfigError(f"{where}: {name} {key} must be true or false")
        timeout = gateway.get("call_timeout", DEFAULT_CALL_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 3600:
            raise ConfigError(f"{where}: [gateway] call_timeout must be a number of seconds, above 0 and at most 3600")
        budget = gateway.get("refresh_budget_ms", 300)
        if isinstance(budget, bool) or not isinstance(budget, int | float) or not 0 <= budget <= 60_000:
            raise ConfigError(f"{where}: [gateway] refresh_budget_ms must be a number of milliseconds, 0 to 60000")
        zone = gateway.get("timezone", "")
        if not isinstance(zone, str) or (zone.strip() and not _known_zone(zone.strip())):
            raise ConfigError(f'{where}: [gateway] timezone must be a zone this computer knows, such as '
                              f'"Europe/Paris" (or leave it out for the computer\'s own)')
        projects = access.get("projects", "projects.toml")
        if not isinstance(projects, str):
            raise ConfigError(f"{where}: [access] projects must be a file name or path")
        projects_path = Path(projects).expanduser()
        if not projects_path.is_absolute() and path is not None:
            projects_path = path.parent / projects_path
        tables = _table(data, "plugins", where)
        for name, table in tables.items():
            if not isinstance(table, Mapping):
                raise ConfigError(f"{where}: [plugins.{name}] must be a table")
            prefix = table.get("prefix", "")
            if not isinstance(prefix, str):
                raise ConfigError(f"{where}: [plugins.{name}] prefix must be a string such as \"x_\"")
            disabled = table.get("disabled_tools", [])
            if not isinstance(disabled, list) or not all(isinstance(t, str) for t in disabled):
                raise ConfigError(f"{where}: [plugins.{name}] disabled_tools must be a list of tool names")
            if not isinstance(table.get("refresh", True), bool):
                raise ConfigError(f"{where}: [plugins.{name}] refresh must be true or false")
        return cls(
            path=path,
            plugins=tuple(plugins) if plugins is not None else None,
            read_only=gateway.get("read_only", False),
            call_timeout=float(timeout),
            refresh_budget_ms=float(budget),
            timezone=zone.strip(),
            projects_path=projects_path if path is not None or projects_path.is_absolute() else None,
            projects_named="projects" in access,
            outside_projects=access.get("outside_projects", True),
            plugin_tables={name: dict(table) for name, table in tables.items()},
            profiles=_profiles(data, where),
        )

    def table(self, plugin: str) -> Mapping[str, Any]:
        return self.plugin_tables.get(plugin, {})

    def prefix(self, plugin: str) -> str:
        return self.table(plugin).get("prefix", "")

    def disabled_tools(self, plugin: str) -> frozenset[str]:
        return frozenset(self.table(plugin).get("disabled_tools", ()))

    def refreshes(self, plugin: str) -> bool:
        """Whether the plugin's store is refreshed before it answers (false: imported by hand only)."""
        return self.table(plugin).get("refresh", True)


def _known_zone(name: str) -> bool:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _table(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: {key} must be a table ([{key}])")
    return value


def _refuse_unknown(table: Mapping[str, Any], known: frozenset[str], where: str, name: str) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        place = f" in {name}" if name else ""
        raise ConfigError(
            f"{where}: unknown {'key' if len(unknown) == 1 else 'keys'}{place}: {', '.join(unknown)}. Known: {', '.join(sorted(known))}."
        )


@frozen
class Snapshot:
    """The configuration and the gate as they stand for one call; `error` is set when either is unusable.

    `lock_stamp`: the stamp of the tools lock (`tools.lock` beside the config) when the source last looked, the same
    object while it is unchanged: the catalogue is pinned again when it is another (None: not stamped by the source,
    so the catalogue stats the lock itself)."""

    config: Config
    gate: Gate
    error: str | None = None
    lock_stamp: Any = None


# While the gate is in error nothing is given; its gate closes everything too, should a caller forget to look.
CLOSED = Gate(Manifest(), outside_projects=False)

# An editor saving a file may truncate it, then write it (or write it in pieces): a file changed this
# recently is looked at again after this pause, and an empty one changed within EMPTY_WINDOW is read again.
SETTLE_SECONDS = 0.05
EMPTY_WINDOW_SECONDS = 1.0
READ_ATTEMPTS = 4
# A file seen before and absent now is looked for again for this long (a checkout or an editor saving it).
ABSENT_WAIT_SECONDS = 0.5

Stamp = tuple[Any, ...]


def stat_stamp(path: Path) -> Stamp:
    """What tells a file's versions apart (or that it is absent, a broken link, unreachable): the file a link leads to
    is the one stamped. One call to the kernel for a plain file or an absent one (a link takes two): each call is
    looked at again on every tools/call, and some machines make each cost tens of microseconds."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return ("absent",)
    except OSError as error:
        return ("error", error.errno)
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return ("broken link",)
        except OSError as error:
            return ("error", error.errno)
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_ctime_ns, st.st_mode)


def read_settled(path: Path) -> tuple[bytes, Stamp | None]:
    """A file's bytes once it holds still, and its stamp then; the stamp is None if it never did.

    Raises OSError when the file cannot be read at all.
    """
    raw, after = b"", None
    for _attempt in range(READ_ATTEMPTS):
        before = stat_stamp(path)
        if len(before) > 2 and not stat.S_ISREG(before[-1]):
            raise OSError(errno.EINVAL, "not a regular file")  # a folder, a pipe that would block, a device
        raw = path.read_bytes()
        after = stat_stamp(path)
        if before == after and len(after) > 2:
            age = time.time_ns() - after[0]
            window = EMPTY_WINDOW_SECONDS if not raw.strip() else SETTLE_SECONDS
            if not 0 <= age < window * 1e9:
                return raw, after
            time.sleep(SETTLE_SECONDS)
            if raw.strip() and stat_stamp(path) == after:
                return raw, after
        else:
            time.sleep(SETTLE_SECONDS)
    return raw, None


def _recent(stamp: Stamp) -> bool:
    return len(stamp) > 2 and 0 <= time.time_ns() - stamp[0] < EMPTY_WINDOW_SECONDS * 1e9


class StampNotes:
    """The kernel's file notifications standing in for a stat of a few stamped files on every call (the config, the
    projects manifest, the tools lock), through the core's `Changes` (gateway.api.changes).

    After a stat pass found every stamp unchanged, `settle` watches the files' folders; while no event came in them
    since, `quiet()` is true (one look at the notifications, no stat). Exactness is that of `Changes`: a file saved
    before the call either was seen by the stat pass, which began after `begin()`, or left an event that makes the
    next `quiet()` false, so a manifest saved a moment before a call is read by that call. Trusted only for plain
    files of one name in folders reached without links (an edit of a link's target elsewhere, or of a hard link's
    other name, makes no event here), and never
    for longer than `Changes`' recheck time; where notifications are unavailable, every call stats, as before.

    The folders are watched from the second stat pass that found the stamps unchanged on: a process that answers a
    request or two and leaves (a host listing the tools, `gateway call`) stats the files each time, as it would
    have until then anyway, and never pays for the kernel's notifications (their library, ctypes, and the search
    for the C library that it runs as a program: a tenth of what a start does beyond the SDK's)."""

    WATCH_FROM = 2  # the stat pass that found the stamps unchanged from which on the folders are watched

    def __init__(self) -> None:
        self._changes: Any = None  # made at the WATCH_FROMth settle (gateway.api.changes imported only then)
        self._unchanged = 0  # stat passes that found the stamps unchanged before the folders were watched

    def quiet(self) -> bool:
        return self._changes is not None and self._changes.quiet()

    def begin(self) -> int:
        return self._changes.begin() if self._changes is not None else 0

    def settle(self, token: int, *paths: Iterable[Path] | Path | None) -> bool:
        """Watch the folders of `paths` (the stamped files; None for none), when each is a plain file or absent, in
        a folder reached without links; True when `quiet()` may now be trusted."""
        files = [p for group in paths if group is not None
                 for p in ([group] if isinstance(group, Path) else group)]
        if not files:
            return False
        if self._changes is None and self._unchanged + 1 < self.WATCH_FROM:
            self._unchanged += 1
            return False
        from gateway.api.changes import Changes, files_folders

        folders = files_folders(files)
        if folders is None:
            return False
        if self._changes is None:
            self._changes = Changes()
            token = self._changes.begin()  # the watches are made now: trusted from the next stat pass on
        return self._changes.settle(token, folders)


class ConfigSource:
    """Reads the config and the projects manifest, again only when a file's stat changes.

    `explicit`: the config's path was given (``--config``, ``GATEWAY_CONFIG``), so a missing file is an error.
    """

    def __init__(self, path: Path, *, fixed: Config | None = None, explicit: bool = False) -> None:
        self.path = path
        self.explicit = explicit
        self._fixed = fixed
        self._stamp: tuple[Any, ...] | None = None
        self._snapshot: Snapshot | None = None
        self._lock = threading.Lock()
        self._readings = 0
        self._seen: set[Path] = set()  # the files read once: their absence is a save under way, never "none"
        self._notes = StampNotes()

    def lock_path(self, config: Config) -> Path:
        """The tools lock that goes with `config` (gateway.engine.lock): beside the config file."""
        return (config.path or self.path).parent / LOCK_FILE

    def _stamp_now(self) -> tuple[Any, ...]:
        config_stamp = stat_stamp(self.path) if self._fixed is None else None
        config = self._snapshot.config if self._snapshot else None
        manifest = config.projects_path if config else None
        lock = stat_stamp(self.lock_path(config)) if config else None
        return (config_stamp, manifest, stat_stamp(manifest) if manifest is not None else None, lock)

    def current(self) -> Snapshot:
        """The config and the gate as they stand now, with the tools lock's stamp. The three files are stat'ed on each
        call, unless their folders had no event since their stamps last matched (`StampNotes`)."""
        with self._lock:
            if self._snapshot is not None and self._stamp is not None:
                if self._notes.quiet():
                    return self._snapshot  # no event in their folders since the stamps last matched: no stat
                token = self._notes.begin()
                now = self._stamp_now()
                if now[:3] == self._stamp[:3]:
                    if now[3] != self._stamp[3]:
                        # Only the tools lock changed: the same config and gate (what plugins keep per gate stays
                        # good), with the lock's new stamp, which has the catalogue pinned again.
                        self._snapshot, self._stamp = evolve(self._snapshot, lock_stamp=now[3]), now
                    config = self._snapshot.config
                    self._notes.settle(token, [self.path] if self._fixed is None else [], config.projects_path,
                                       self.lock_path(config))
                    return self._snapshot
            # The stamp is the one the files had when read (None when they would not hold still: read again).
            self._snapshot, self._stamp = self._load()
            return self._snapshot

    def _with_lock_stamp(self, snapshot: Snapshot, stamp: tuple[Any, ...] | None) -> tuple[Snapshot, tuple[Any, ...] | None]:
        """The snapshot just read, with the tools lock's stamp (stat'ed after the config and manifest were read)."""
        lock = stat_stamp(self.lock_path(snapshot.config))
        return evolve(snapshot, lock_stamp=lock), None if stamp is None else (*stamp, lock)

    def _load(self) -> tuple[Snapshot, tuple[Any, ...] | None]:
        forget_links()  # links may have changed too: resolve them again
        forget_linked()
        config_stamp: Stamp | None = None
        try:
            if self._fixed is not None:
                config = self._fixed
            else:
                config, config_stamp = self._read_config()
        except ConfigError as error:
            stamp = stat_stamp(self.path)
            # Caught mid-save, or just changed (it may change again under the same stamp): read it again next time.
            again = isinstance(error, _ConfigChanging) or _recent(stamp)
            return self._with_lock_stamp(Snapshot(Config(path=self.path), CLOSED, error=str(error)),
                                None if again else (stamp, None, None))
        manifest_path = config.projects_path or self.path.parent / "projects.toml"
        if config.projects_path is None:
            config = evolve(config, projects_path=manifest_path)
        try:
            manifest, manifest_stamp = self._read_manifest(manifest_path, config.projects_named)
        except ManifestError as error:
            stamp = stat_stamp(manifest_path)
            again = isinstance(error, _ManifestChanging) or _recent(stamp)
            return self._with_lock_stamp(Snapshot(config, CLOSED, error=str(error)),
                                None if again else (config_stamp, manifest_path, stamp))
        self._readings += 1
        gate = Gate(manifest, config.outside_projects, reading=self._readings)
        return self._with_lock_stamp(Snapshot(config, gate), (config_stamp, manifest_path, manifest_stamp))

    def _back_again(self, path: Path) -> Stamp:
        """The stamp of a file once seen and absent now, after looking for it again for a moment."""
        stamp = stat_stamp(path)
        waited = 0.0
        while stamp == ("absent",) and path in self._seen and waited < ABSENT_WAIT_SECONDS:
            time.sleep(SETTLE_SECONDS)
            waited += SETTLE_SECONDS
            stamp = stat_stamp(path)
        return stamp

    def _read_manifest(self, path: Path, named: bool) -> tuple[Manifest, Stamp]:
        stamp = self._back_again(path)
        if stamp == ("absent",) and path in self._seen and not named:
            raise ManifestError(
                f"the projects manifest {path} was there and is gone (a checkout or an editor saving it?); nothing "
                "is given until it is back. If you removed it on purpose, leave a file there holding only a comment "
                "(# no projects), or restart the gateway"
            )
        if stamp == ("absent",) and not named:
            return Manifest(), stamp  # the default manifest, absent: a fresh install, no projects yet
        if stamp == ("absent",):
            raise ManifestError(
                f"the projects manifest {path}, named by [access] projects in the config, does not exist; "
                "nothing is given until it does (fix the name in the config, or put the manifest back)"
            )
        if stamp == ("broken link",):
            raise ManifestError(
                f"the projects manifest {path} is a link to a file that does not exist; nothing is given until "
                "it is fixed"
            )
        try:
            raw, settled = read_settled(path)
        except OSError as error:
            raise ManifestError(
                f"the projects manifest {path} cannot be read ({error.strerror}); nothing is given until it can"
            ) from error
        if settled is None:
            state = "is empty, just changed" if not raw.strip() else "is being changed"
            raise _ManifestChanging(
                f"the projects manifest {path} {state} (an editor saving it?); nothing is given until it holds "
                "still and lists the projects: call again in a moment"
            )
        if not raw.strip():
            raise ManifestError(
                f"the projects manifest {path} is empty; nothing is given until it lists the projects (or the "
                "config stops naming it)"
            )
        manifest = Manifest.from_bytes(raw, path)
        self._seen.add(path)
        return manifest, settled

    def _read_config(self) -> tuple[Config, Stamp]:
        stamp = self._back_again(self.path)
        if stamp == ("absent",) and self.path in self._seen:
            raise ConfigError(
                f"the config {self.path} was there and is gone (a checkout or an editor saving it?); nothing is "
                "given until it is back. If you removed it on purpose, restart the gateway"
            )
        if stamp == ("absent",) and not self.explicit:
            return Config(), stamp  # no config at all: every plugin on, default paths
        if stamp in (("absent",), ("broken link",)):
            raise ConfigError(
                f"the config {self.path} (given by --config or GATEWAY_CONFIG) does not exist"
                f"{' (a link to nothing)' if stamp == ('broken link',) else ''}; nothing is given until it does. "
                "Fix the path, or leave it out to use the default config"
            )
        try:
            raw, settled = read_settled(self.path)
        except OSError as error:
            raise ConfigError(
                f"the config {self.path} cannot be read ({error.strerror}); fix its permissions"
            ) from error
        if settled is None:
            raise _ConfigChanging(
                f"the config {self.path} is being changed (an editor saving it?); call again in a moment"
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ConfigError(f"the config {self.path} is not UTF-8 text") from error
        config = Config.from_toml(text, self.path)
        self._seen.add(self.path)
        return config, settled


class _ConfigChanging(ConfigError):
    """The config would not hold still while read: read it again on the next call."""


class _ManifestChanging(ManifestError):
    """The manifest would not hold still while read (or stayed empty just after a change): read it again."""
