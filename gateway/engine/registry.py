"""Plugin discovery and loading: entry points in the ``gateway.plugins`` group, each loaded in isolation.

A plugin that fails to import or to register is unregistered, logged and remembered with its error; the
others serve. Plugins are imported only when enabled, and each only once. Failing means raising anything but an
interrupt or a cancellation (`gateway.engine.faults`): a plugin that calls `sys.exit()` while it is imported, in a
hook or in its settings model is off, or its hook skipped, like one that raises an `Exception`.
"""

from __future__ import annotations

import email.parser
import importlib.metadata
import marshal
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs
import pluggy

from gateway.api import hookspecs
from gateway.api.context import Folders, PluginHost
from gateway.api.items import Prompt, Resource, ResourceTemplate, Tool
from gateway.api.kept_schemas import KeptSchemas, active, keeping
from gateway.api.refresh import Refresh
from gateway.api.settings import filled, is_settings_model, table_problem
from gateway.engine import startup
from gateway.engine.faults import plugin_failed, said
from gateway.engine.log import get_logger

GROUP = "gateway.plugins"
DISTRIBUTION = "mcp-gateway"
# The built-in plugins, in the order used when no config chooses; the others follow by name.
# A plugin name that can name a file of its own (its kept schemas).
_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
BUILT_IN_ORDER = ("sessions", "cron", "timeline", "mail", "spam", "texts", "ledger", "time", "papers")

log = get_logger("gateway.engine.registry")


# What a plugin's settings model makes of a table, kept between starts with its tool schemas: the keys of the entry.
_SETTINGS_IDENTITY = ("settings", 1)
# The code that reads a table with the model: a change in any is a change in what is kept.
_SETTINGS_READERS = ("gateway.api.settings", "gateway.api.wording", "gateway.api.schemas", "gateway.engine.config",
                     "gateway.engine.registry")


@attrs.define
class Plugin:
    """One plugin as loaded: what it registered, or why it could not be.

    Its settings model is asked for (``register_settings``) when first needed. While what the model made of the
    table the plugin was loaded with is kept between starts (`Registry._settings`), the start uses that and the
    model is not made at all (making a pydantic model class is most of what loading a plugin costs).
    """

    name: str
    origin: str = "given"
    version: str = ""
    module: Any = None
    error: str | None = None
    # The pydantic model class its register_settings returned (None: it takes no settings); see `settings_model`.
    _model: Any = attrs.field(default=None, alias="settings_model")
    tools: list[Tool] = attrs.field(factory=list)
    resources: list[Resource] = attrs.field(factory=list)
    templates: list[ResourceTemplate] = attrs.field(factory=list)
    prompts: list[Prompt] = attrs.field(factory=list)
    refreshes: list[Refresh] = attrs.field(factory=list)
    # Asks the plugin for its model, until it was asked; what the model made of given tables (by their repr).
    _ask_model: Callable[[], Any] | None = None
    _read: dict[str, dict[str, Any]] = attrs.field(factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def settings_model(self) -> Any:
        """The pydantic model class its register_settings returned (None: it takes no settings)."""
        if self._ask_model is not None:
            ask, self._ask_model = self._ask_model, None
            self._model = ask()
        return self._model

    @settings_model.setter
    def settings_model(self, model: Any) -> None:
        self._ask_model, self._model = None, model

    def table_problem(self, table: Mapping[str, Any]) -> str | None:
        """What makes its ``[plugins.<name>]`` table unusable (unknown keys, wrong-typed values), or None."""
        read = self._read.get(_table_key(table))
        if read is not None:
            return read["problem"]
        try:
            return table_problem(self.name, self.settings_model, table)
        except BaseException as error:  # the model's own code (a validator of the plugin's) failed on this table
            if not plugin_failed(error):
                raise
            log.error("plugin settings model failed", plugin=self.name, traceback=traceback.format_exc())
            return (f"plugin {self.name}: its settings model failed on [plugins.{self.name}] ({said(error)}); the "
                    "plugin is off until it or the config is fixed")

    def settings_for(self, table: Mapping[str, Any]) -> dict[str, Any]:
        """The settings every hook and call sees: defaults filled in, ``prefix`` and ``disabled_tools`` left out."""
        read = self._read.get(_table_key(table))
        if read is not None:
            return marshal.loads(read["filled"])  # a copy of its own for each caller, as `filled` gives
        return filled(self.settings_model, table)

    def switched_off(self, table: Mapping[str, Any]) -> bool:
        """Does it declare a boolean `enabled` setting that `table` (or the setting's default) leaves false?"""
        read = self._read.get(_table_key(table))
        if read is not None:
            return read["off"]
        model = self.settings_model
        field = None if model is None else model.model_fields.get("enabled")
        return field is not None and field.annotation is bool and self.settings_for(table).get("enabled") is False

    def read_table(self, table: Mapping[str, Any]) -> dict[str, Any]:
        """What its model makes of `table`, as kept between starts: the filled settings (marshalled), the problem
        and whether it is switched off."""
        return {"filled": marshal.dumps(self.settings_for(table)), "problem": self.table_problem(table),
                "off": self.switched_off(table)}


def _table_key(table: Mapping[str, Any]) -> str:
    """A table as written, keys in their order and values with their types (a TOML date is not its text)."""
    return repr(table)


@attrs.frozen
class Candidate:
    """A plugin that could be loaded: its name, where it comes from, and how to import it."""

    name: str
    origin: str
    version: str
    load: Callable[[], Any]


def _announcing_distributions() -> Iterator[tuple[importlib.metadata.Distribution, str, str]]:
    """Installed distributions whose entry points mention our group, first on sys.path first, each with its name
    and version.

    importlib.metadata.entry_points() parses every installed distribution (tens of milliseconds in a
    full environment, on every start of every host); reading each entry_points.txt and looking for the
    group's name first costs about one millisecond.
    """
    seen: set[str] = set()
    for folder in sys.path:
        try:
            entries = os.scandir(folder or ".")
        except OSError:
            continue
        with entries:
            for entry in entries:
                if not entry.name.endswith((".dist-info", ".egg-info")):
                    continue
                try:
                    with open(os.path.join(entry.path, "entry_points.txt"), encoding="utf-8") as handle:
                        if GROUP not in handle.read():
                            continue
                except OSError:
                    continue
                dist = importlib.metadata.PathDistribution(Path(entry.path))
                named, version = _name_and_version(dist)
                name = (named or entry.name).lower().replace("_", "-")
                if name not in seen:
                    seen.add(name)
                    yield dist, named, version


def _name_and_version(dist: importlib.metadata.Distribution) -> tuple[str, str]:
    """The distribution's Name and Version, read once from its metadata's header block.

    `Distribution.metadata` (and `.version`, which asks it) parses the whole file, the long description
    included, every time it is asked: asked for each plugin of a distribution, that was most of the cost of
    finding the plugins. The header block ends at the first empty line (the core metadata format); the email
    parser reads it as importlib.metadata would.
    """
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    headers = email.parser.HeaderParser().parsestr(text.split("\n\n", 1)[0])
    return headers.get("Name") or "", headers.get("Version") or ""


def discover_entry_points() -> list[Candidate]:
    """Every installed plugin, without importing any."""
    found: dict[str, Candidate] = {}
    for dist, name, version in _announcing_distributions():
        origin = "built-in" if name == DISTRIBUTION else name
        for entry in dist.entry_points.select(group=GROUP):
            if entry.name in found:
                log.warning("plugin name taken twice; keeping the first", plugin=entry.name, origin=origin)
                continue
            found[entry.name] = Candidate(entry.name, origin, version, entry.load)
    return list(found.values())


def default_order(names: Iterable[str]) -> list[str]:
    names = list(names)
    first = [n for n in BUILT_IN_ORDER if n in names]
    return first + sorted(n for n in names if n not in BUILT_IN_ORDER)


def _module_version(module: Any) -> str:
    return str(getattr(module, "__version__", ""))


class Registry:
    """Knows the candidates, loads each on first use, and keeps what it registered."""

    def __init__(
        self,
        folders: Folders,
        *,
        plugins: Sequence[ModuleType | object | tuple[str, Any]] = (),
        entrypoints: bool = True,
    ) -> None:
        self.folders = folders
        self.manager = pluggy.PluginManager("gateway")
        self.manager.add_hookspecs(hookspecs)
        candidates: dict[str, Candidate] = {}
        for given in plugins:
            name, module = given if isinstance(given, tuple) else (_plugin_name(given), given)
            candidates[name] = Candidate(name, "given", _module_version(module), lambda m=module: m)
        if entrypoints:
            for candidate in discover_entry_points():
                candidates.setdefault(candidate.name, candidate)
        self.candidates = candidates
        self._loaded: dict[str, Plugin] = {}

    def names(self) -> list[str]:
        return default_order(self.candidates)

    def get(self, name: str, settings: Mapping[str, Any] | None = None) -> Plugin:
        plugin = self._loaded.get(name)
        if plugin is None:
            plugin = self._loaded[name] = self._load(name, settings or {})
        return plugin

    def loaded(self) -> list[Plugin]:
        return list(self._loaded.values())

    def _load(self, name: str, settings: Mapping[str, Any]) -> Plugin:
        candidate = self.candidates.get(name)
        if candidate is None:
            known = ", ".join(self.names()) or "none"
            return Plugin(name, origin="?", error=f"no plugin named {name!r} is installed (installed: {known})")
        plugin = Plugin(name, origin=candidate.origin, version=candidate.version)
        try:
            module = candidate.load()
        except ImportError as error:
            fix = (
                f"pip install 'mcp-gateway[{name}]'" if candidate.origin == "built-in"
                else f"pip install --upgrade {candidate.origin}"
            )
            message = str(error)
            plugin.error = f"cannot be imported: {message}" + ("" if "pip install" in message else f" (try: {fix})")
            log.warning("plugin failed to import", plugin=name, error=str(error))
            return plugin
        except BaseException as error:
            if not plugin_failed(error):
                raise
            plugin.error = f"failed while importing: {said(error)}"
            log.error("plugin failed to import", plugin=name, traceback=traceback.format_exc())
            return plugin
        plugin.module = module
        plugin.version = plugin.version or _module_version(module)
        try:
            self.manager.register(_hashable(module, name), name=name)
            self.manager.check_pending()
        except BaseException as error:
            if not plugin_failed(error):
                raise
            self._unregister(name)
            plugin.error = f"cannot be registered: {error if isinstance(error, Exception) else said(error)}"
            log.warning("plugin failed to register", plugin=name, error=str(error))
            return plugin
        try:
            self.folders.make_private(name)
        except OSError as error:
            log.warning("plugin folders cannot be made private", plugin=name, error=str(error))
        folders = self.folders.for_plugin(name)
        try:
            with keeping(self._kept_schemas(name)):
                self._register(plugin, name, folders, settings)
        except BaseException as error:
            if not plugin_failed(error):
                raise
            self._unregister(name)
            plugin.error = f"failed while registering: {said(error)}"
            log.error("plugin failed to register", plugin=name, traceback=traceback.format_exc())
        return plugin

    def _kept_schemas(self, name: str) -> Path | None:
        """Where the plugin's tool schemas are kept between starts (`gateway.api.kept_schemas`)."""
        if not _SAFE_NAME.fullmatch(name):
            return None
        return self.folders.cache / "schemas" / f"{name}.marshal"

    def _register(self, plugin: Plugin, name: str, folders: Folders, settings: Mapping[str, Any]) -> None:
        """Ask the plugin for its settings model, then for its tools, resources, templates, prompts and refreshes."""
        self._settings(plugin, name, folders, settings, active())
        host = PluginHost(name=name, folders=folders, settings=plugin.settings_for(settings))
        plugin.tools = [attrs.evolve(t, plugin=name) for t in self._call(name, "register_tools", host, Tool)]
        plugin.resources = [
            attrs.evolve(r, plugin=name) for r in self._call(name, "register_resources", host, Resource)
        ]
        plugin.templates = [
            attrs.evolve(t, plugin=name)
            for t in self._call(name, "register_resource_templates", host, ResourceTemplate)
        ]
        plugin.prompts = [attrs.evolve(p, plugin=name) for p in self._call(name, "register_prompts", host, Prompt)]
        plugin.refreshes = [
            attrs.evolve(r, plugin=name) for r in self._call(name, "register_refresh", host, Refresh)
        ]

    def _settings(self, plugin: Plugin, name: str, folders: Folders, settings: Mapping[str, Any],
                  kept: KeptSchemas | None) -> None:
        """The plugin's settings model, or what it made of this table at an earlier start.

        What the model makes of a table (its settings filled in, its problem, whether it is switched off) depends
        only on the table as written, the model, and the code that reads tables with it. So it is kept with the
        plugin's tool schemas (`gateway.api.kept_schemas`), watched by the files of the loaded modules of the
        plugin's package and of the model's, of the module of each class its fields name, and of that code, and
        given again while they are unchanged: the model is then asked for only when another table needs it (the
        config changed) or something else does (`gateway show`). Anything else asks for the model now. Only a plugin
        that is a module read from a file has its reading kept (the key names that module and file): a plugin given
        as an object may be another one next time under the same name.
        """
        def ask() -> Any:
            return self._settings_model(name, PluginHost(name, folders, filled(None, settings)))

        module = plugin.module
        where = getattr(module, "__file__", None) if isinstance(module, ModuleType) else None
        if not isinstance(where, str):
            kept = None
        key = f"settings {getattr(module, '__name__', '')} {where} {_table_key(settings)}"
        found = kept.lookup(key, _SETTINGS_IDENTITY) if kept is not None else None
        if isinstance(found, dict) and set(found) == {"filled", "problem", "off"}:
            plugin._ask_model = ask
            plugin._read[_table_key(settings)] = found
            return
        plugin.settings_model = model = ask()
        if kept is None:
            return
        try:
            read = plugin.read_table(settings)
        except ValueError:  # a value marshal cannot keep (a TOML date in a table the model refuses): not kept
            return
        modules = [getattr(plugin.module, "__name__", "") or ""]
        annotations: list[Any] = []
        if model is not None:
            modules.append(model.__module__)
            annotations = [model, *(field.annotation for field in model.model_fields.values())]
        kept.keep(key, _SETTINGS_IDENTITY, read,
                  kept.files_for([m for m in modules if m], annotations, _SETTINGS_READERS))

    def _unregister(self, name: str) -> None:
        module = self.manager.get_plugin(name)
        if module is not None:
            self.manager.unregister(module, name=name)

    def hook_caller(self, name: str, hook: str) -> Any:
        """Pluggy's caller of `hook` for the plugin `name` alone.

        Each plugin gets its own PluginHost and its results are kept apart (they are its tools), so a hook is
        called once per plugin, through pluggy, with the other plugins left out: the plugin's own hookimpl
        options (``wrapper``, ``hookwrapper``, ``tryfirst``/``trylast`` among its own implementations,
        ``specname``) mean what pluggy says; across plugins the order is the config's, and a wrapper never
        sees another plugin's call.
        """
        others = [p for n, p in self.manager.list_name_plugin() if n != name]
        return self.manager.subset_hook_caller(hook, remove_plugins=others)

    def _settings_model(self, name: str, host: PluginHost) -> Any:
        """The one pydantic model class the plugin's register_settings returned, or None when it declares none."""
        found = [result for result in self.hook_caller(name, "register_settings")(gateway=host) if result]
        if not found:
            return None
        if len(found) > 1 or not is_settings_model(found[0]):
            shown = type(found[0]).__name__ if len(found) == 1 else f"{len(found)} answers"
            raise TypeError(f"register_settings returned {shown}; return one pydantic model class whose fields are "
                            "the settings")
        return found[0]

    def _call(self, name: str, hook: str, host: PluginHost, kind: type) -> list[Any]:
        items: list[Any] = []
        for result in self.hook_caller(name, hook)(gateway=host):
            for item in result or []:
                if kind is Tool and callable(item) and not isinstance(item, Tool):
                    item = Tool.from_function(item)  # a bare function, as llm's register takes them
                if not isinstance(item, kind):
                    raise TypeError(f"{hook} returned a {type(item).__name__}; expected {kind.__name__}")
                items.append(item)
        return items

    def call_each(self, hook: str, names: Iterable[str], settings: Callable[[str], Mapping[str, Any]], *,
                  strict: bool = False, gate: Any = None, **arguments: Any) -> list:
        """Call a hook of each named, loaded plugin in turn, with `arguments` besides ``gateway``; a failure is
        logged and skipped, or with `strict` raised as HookFailed (for a hook whose silence would open something).
        A failure is anything the plugin's code raises but an interrupt or a cancellation (`gateway.engine.faults`).

        `settings(name)` gives the plugin's table; each hook sees it in the one shape (defaults filled in).
        """
        results = []
        for name in names:
            plugin = self._loaded.get(name)
            if plugin is None or not plugin.ok:
                continue
            try:
                host = PluginHost(name=name, folders=self.folders.for_plugin(name),
                                  settings=plugin.settings_for(settings(name)), plugin_tables=settings)
                if gate is not None:
                    host = attrs.evolve(host, gate=gate)
                for result in self.hook_caller(name, hook)(gateway=host, **arguments):
                    results.append((name, result))
            except BaseException as error:
                if not plugin_failed(error):
                    raise
                log.error("plugin hook failed", plugin=name, hook=hook, traceback=traceback.format_exc())
                if strict:
                    raise HookFailed(name, hook, error) from error
        return results


class HookFailed(Exception):
    """A plugin's hook raised where its answer cannot be done without (the ties a gate decision needs)."""

    def __init__(self, plugin: str, hook: str, error: BaseException) -> None:
        super().__init__(f"the {plugin} plugin's {hook} failed ({type(error).__name__})")
        self.plugin, self.hook = plugin, hook


class Lifecycle:
    """``startup`` once when serving begins and ``shutdown`` once when it ends, whichever transport serves.

    Reentrant and idempotent: ``start`` fires the hook on the first entry only, ``stop`` on the last exit only
    (a transport nested in another, or a serving function that enters twice, changes nothing), and
    ``shutdown`` goes to the plugins that were started. ``with Lifecycle(gateway):`` does both.
    """

    def __init__(self, gateway: Any) -> None:
        self.gateway = gateway
        self.started: list[str] | None = None
        self.stopped = False
        self._depth = 0
        self._settings: Callable[[str], Mapping[str, Any]] = lambda name: {}

    def start(self) -> None:
        self._depth += 1
        if self.started is not None:
            return
        snapshot = self.gateway.snapshot()
        self.started = list(self.gateway.catalogue(snapshot).plugin_order)
        self._settings = lambda name: snapshot.config.table(name)
        self.gateway.registry.call_each("startup", self.started, self._settings)
        startup.release()  # the plugins are loaded and the catalogue made: see gateway.engine.startup

    def stop(self) -> None:
        self._depth = max(self._depth - 1, 0)
        if self._depth or self.started is None or self.stopped:
            return
        self.stopped = True
        self.gateway.registry.call_each("shutdown", self.started, self._settings)

    def __enter__(self) -> Lifecycle:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def lifecycle_of(gateway: Any) -> Lifecycle:
    """The one Lifecycle of this gateway (made on first use): every transport serving it shares the guard."""
    found = getattr(gateway, "_lifecycle", None)
    if found is None or found.stopped:
        found = Lifecycle(gateway)
        gateway._lifecycle = found
    return found


def _hashable(plugin: Any, name: str) -> Any:
    """The plugin as pluggy can hold it apart from others (a set): an unhashable object's hooks in a module."""
    try:
        hash(plugin)
        return plugin
    except TypeError:
        stand_in = ModuleType(f"gateway_plugin_{name}")
        for attribute in dir(plugin):
            if not attribute.startswith("__"):
                setattr(stand_in, attribute, getattr(plugin, attribute))
        return stand_in


def _plugin_name(module: Any) -> str:
    name = getattr(module, "PLUGIN_NAME", None) or getattr(module, "__name__", type(module).__name__)
    return str(name).rpartition(".")[2].removeprefix("gateway_")
