"""The gateway's configuration: one TOML file, read again whenever it changes (a stat per call)."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import evolve, field, frozen

from gateway.access import Gate, Manifest, ManifestError
from gateway.deadline import DEFAULT_CALL_TIMEOUT

CORE_PLUGIN_KEYS = frozenset({"prefix", "disabled_tools"})
_GATEWAY_KEYS = frozenset({"plugins", "read_only", "call_timeout"})
_ACCESS_KEYS = frozenset({"projects", "outside_projects"})
_TOP_KEYS = frozenset({"gateway", "access", "plugins"})


class ConfigError(ValueError):
    """The configuration cannot be used; the message says which file, what is wrong and what to do."""


def config_path(folder: Path) -> Path:
    """Where the config lives: ``--config`` / ``GATEWAY_CONFIG`` if given, else ``config.toml`` in `folder`."""
    override = os.environ.get("GATEWAY_CONFIG")
    return Path(override).expanduser() if override else folder / "config.toml"


@frozen
class Config:
    """What the file says. ``plugins`` is None when the file does not choose (then every plugin is on)."""

    path: Path | None = None
    plugins: tuple[str, ...] | None = None
    read_only: bool = False
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    projects_path: Path | None = None
    outside_projects: bool = True
    plugin_tables: Mapping[str, Mapping[str, Any]] = field(factory=dict)

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
        return cls(
            path=path,
            plugins=tuple(plugins) if plugins is not None else None,
            read_only=gateway.get("read_only", False),
            call_timeout=float(timeout),
            projects_path=projects_path if path is not None or projects_path.is_absolute() else None,
            outside_projects=access.get("outside_projects", True),
            plugin_tables={name: dict(table) for name, table in tables.items()},
        )

    def table(self, plugin: str) -> Mapping[str, Any]:
        return self.plugin_tables.get(plugin, {})

    def prefix(self, plugin: str) -> str:
        return self.table(plugin).get("prefix", "")

    def disabled_tools(self, plugin: str) -> frozenset[str]:
        return frozenset(self.table(plugin).get("disabled_tools", ()))


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
            f"{where}: unknown key(s){place}: {', '.join(unknown)}. Known: {', '.join(sorted(known))}."
        )


@frozen
class Snapshot:
    """The configuration and the gate as they stand for one call; `error` is set when either is unusable."""

    config: Config
    gate: Gate
    error: str | None = None


class ConfigSource:
    """Reads the config and the projects manifest, again only when a file's stat changes."""

    def __init__(self, path: Path, *, fixed: Config | None = None) -> None:
        self.path = path
        self._fixed = fixed
        self._stamp: tuple[Any, ...] | None = None
        self._snapshot: Snapshot | None = None

    @staticmethod
    def _stat(path: Path | None) -> tuple[int, int, int] | None:
        if path is None:
            return None
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        except OSError:
            return (-1, -1, -1)
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def current(self) -> Snapshot:
        config_stamp = self._stat(self.path) if self._fixed is None else None
        projects_path = self._snapshot.config.projects_path if self._snapshot else None
        stamp = (config_stamp, self._stat(projects_path), projects_path)
        if self._snapshot is not None and stamp == self._stamp:
            return self._snapshot
        snapshot = self._load()
        # The manifest's path may have changed with the config: stamp what the new snapshot reads.
        self._stamp = (config_stamp, self._stat(snapshot.config.projects_path), snapshot.config.projects_path)
        self._snapshot = snapshot
        return snapshot

    def _load(self) -> Snapshot:
        try:
            config = self._fixed or self._read_config()
        except ConfigError as error:
            return Snapshot(Config(path=self.path), Gate(), error=str(error))
        manifest_path = config.projects_path or self.path.parent / "projects.toml"
        if config.projects_path is None:
            config = evolve(config, projects_path=manifest_path)
        try:
            manifest = Manifest.from_file(manifest_path)
        except ManifestError as error:
            return Snapshot(config, Gate(outside_projects=False), error=str(error))
        return Snapshot(config, Gate(manifest, config.outside_projects))

    def _read_config(self) -> Config:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return Config()
        except OSError as error:
            raise ConfigError(
                f"the config {self.path} cannot be read ({error.strerror}); fix its permissions"
            ) from error
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ConfigError(f"the config {self.path} is not UTF-8 text") from error
        return Config.from_toml(text, self.path)
