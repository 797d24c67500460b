"""The gateway itself, free of any protocol: the merged catalogue, and every call through gate, masks and audit."""

from __future__ import annotations

import atexit
import functools
import inspect
import os
import resource as _resource
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio
import attrs

from gateway.api.context import Context, Folders
from gateway.api.cursors import decode_cursor, encode_cursor
from gateway.api.deadline import DEFAULT_CALL_TIMEOUT, Deadline, DeadlinePassed, run_in_worker
from gateway.api.items import (
    NAME_PATTERN,
    Answer,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
    ToolError,
    wants_context,
)
from gateway.api.refresh import Refreshing
from gateway.engine import log as _log  # noqa: F401 (stderr for every log line, set up when imported)
from gateway.engine.arguments import check_arguments, check_output
from gateway.engine.audit import AuditError, AuditLog, Stopwatch, summarise_arguments
from gateway.engine.config import CLOSED, Config, ConfigSource, Snapshot, stat_stamp
from gateway.engine.faults import plugin_failed, said
from gateway.engine.log import get_logger
from gateway.engine.registry import HookFailed, Plugin, Registry
from gateway.gate.access import Gate, Manifest
from gateway.gate.traits import Traits
from gateway.privacy import mask
from gateway.privacy.masks import mask_typed
from gateway.privacy.net import mask_data, masked_answer, masked_item, needs_masking
from gateway.wire.seams import signal_handler

log = get_logger("gateway")

T = TypeVar("T")

PAGE_SIZE = 100

# A read-only tool whose synchronous function answered quickly, without waiting on anything, each of the last `needed`
# times runs on the event loop's own thread, not a worker (see `Pace`). Quick: at most QUICK_SECONDS (a worker's CPU
# time; wall time on the loop, runs taken off their core left out), or, for a tool that usually takes longer, at most
# twice its usual time and never over QUICK_FACTOR times QUICK_SECONDS. `needed` starts at QUICK_STREAK and doubles, up to QUICK_STREAK_MAX, each time a run on the loop took
# longer after all.
QUICK_SECONDS = 0.001
QUICK_FACTOR = 5
QUICK_STREAK = 8
QUICK_STREAK_MAX = 1024
# A run on the loop still going after LOOP_LIMIT_SECONDS (wall time: what a ping waits) is stopped by a timer signal
# and run again on a worker: a tool quick until now that meets new data (a stranger's file, a bigger folder) holds
# the loop that long at most, not for its whole reading.
LOOP_LIMIT_SECONDS = 0.05


class NotFound(LookupError):
    """An unknown tool, resource or prompt: a protocol error, not a tool's failure."""


COMPLETIONS = 100  # suggestions given at most for one completion/complete


@attrs.frozen
class Caller:
    """Who is calling, for the audit log and the context.

    `profile`: the `[profiles.NAME]` this caller is given, chosen by the HTTP token it presented; None for the
    profile the gateway was started with (`serve --profile`, or none). `token`: that token's name (never its
    secret), for the audit log; empty when the caller presented none.
    """

    client: str = "unknown"
    client_version: str = ""
    transport: str = "direct"
    profile: str | None = None
    token: str = ""


@attrs.frozen
class Listed:
    """A tool as listed, under its public name (a plugin's prefix applied).

    `off`: why it cannot be called now (its plugin's table is unusable), said by every call; None when it can.
    """

    name: str
    tool: Tool
    off: str | None = None


@attrs.define
class Catalogue:
    """Everything the enabled plugins offer, merged in config order, for one configuration."""

    tools: list[Listed]
    tools_by_name: dict[str, Listed]
    resources: list[Resource]
    templates: list[ResourceTemplate]
    prompts: dict[str, Prompt]
    problems: list[str]
    plugin_order: list[str]
    # Resources and templates whose definitions `tools.lock` does not pin (gateway.engine.lock), with the sentence a read
    # of them answers.
    withheld: list[tuple[Resource | ResourceTemplate, str]] = attrs.field(factory=list)
    # Tools the settings hide (`disabled_tools`, `read_only`), by public name: the sentence a call to one is given.
    hidden: dict[str, str] = attrs.field(factory=dict)


# The kernel counts a thread's voluntary context switches (each wait: a disk, a lock, a sleep, a pipe) apart from
# the times it was taken off its core; Linux only. Elsewhere no function is taken for quick.
_RUSAGE_THREAD = getattr(_resource, "RUSAGE_THREAD", None)


def _spent(clock: Callable[[], float] = time.perf_counter) -> tuple[float, int, int]:
    """The time now by `clock`, how many times this thread has waited on something, and how many times it was taken
    off its core (-1 each where the kernel does not count them). One getrusage per reading (its counts, never its
    times, which for the running thread are those of the last clock tick).

    A run on the loop is timed by the wall clock, not the thread's CPU clock: reading that clock is a call to the
    kernel at which, on a busy machine, the scheduler often takes the core away (the kernel brings the thread's time
    up to date, finds its slice used, and switches at once), so two readings around every quick run were two points a
    call where the event loop could be put back in the run queue before its answer left. A run taken off its core
    meanwhile (its wall time is then not its own) gives no verdict unless it was quick all the same. A run on a
    worker is timed by its thread's CPU clock (`time.thread_time`): the loop's thread and everything else on a busy
    machine take turns with it, and by the wall clock it would be left without a verdict run after run, so that a
    quick function would never come to the loop."""
    if _RUSAGE_THREAD is None:
        return clock(), -1, -1
    usage = _resource.getrusage(_RUSAGE_THREAD)
    return clock(), usage.ru_nvcsw, usage.ru_nivcsw


@functools.lru_cache(maxsize=4096)
def _kept_takes_context(function: Any) -> bool:
    return wants_context(function)


def _takes_context(function: Any) -> bool:
    """Whether `function` takes the call's Context first, read from its signature once per function
    (inspect.signature costs more than a quick tool's whole run); a callable that cannot be a key is read each time."""
    try:
        return _kept_takes_context(function)
    except TypeError:
        return wants_context(function)


class Pace:
    """How quickly one read-only tool's function has answered lately: whether its next run may skip the worker.

    A run handed to a worker thread costs the event loop two wake-ups and a thread switch each way, more than a
    quick tool's own work. A function whose last `needed` runs each took at most QUICK_SECONDS (on a worker, of its
    thread's CPU; on the loop, of wall time, a run taken off its core by a busy machine meanwhile not counted unless
    it was quick all the same) (or, when it usually takes longer, at most twice its usual time and QUICK_FACTOR times
    QUICK_SECONDS: a mail
    search that always takes 3 ms is as safe on the loop as a lookup of 1 ms, and a run that takes twice its usual
    time says it met something new) and never waited (no voluntary context switch: no disk read, lock, sleep or
    pipe that made the thread wait; the
    times a busy machine took it off its core are not its doing, and do not count) runs on the loop, unless its
    plugin has other work under way on another thread (a call on a worker, a refresh) that might hold a lock it
    would wait on: a ping or another call then waits that long, as it waits for the loop's own work. Its deadline
    holds as on a worker for everything that looks at it (`ctx.deadline.check()`, SQLite work given
    `ctx.interruptible`), and an answer given after it is replaced by the deadline's sentence; a run on the loop
    still going after LOOP_LIMIT_SECONDS is stopped by a timer signal and run again on a worker. One run on the loop
    over the bound, or that waited, sends the function back to the workers until it has been quick twice as many
    times in a row; one that fails there (a function that needs a thread of its own) is run again on a worker,
    which a read-only function allows, and stays on the workers. Where the kernel does not count waits (not Linux),
    every run stays on the workers.
    """

    __slots__ = ("needed", "pinned", "streak", "usual")

    def __init__(self) -> None:
        self.streak = 0  # quick runs in a row
        self.needed = QUICK_STREAK
        self.pinned = _RUSAGE_THREAD is None  # failed on the loop once (or no count of waits): the workers' for good
        self.usual: float | None = None  # the time its runs usually take (a moving average), seconds

    @property
    def quick(self) -> bool:
        return not self.pinned and self.streak >= self.needed

    def _was_quick(self, work: float, waited: bool, taken_off: bool = False) -> bool | None:
        """Whether a run that took `work` seconds was quick (see QUICK_SECONDS), its time then made part of the usual
        one; None (no verdict, its time left out) for a run over the bound that was taken off its core meanwhile."""
        usual = self.usual
        bound = QUICK_SECONDS if usual is None else max(QUICK_SECONDS, min(QUICK_FACTOR * QUICK_SECONDS, 2 * usual))
        quick = work <= bound and not waited
        if not quick and taken_off and not waited:
            return None
        self.usual = work if usual is None else 0.75 * usual + 0.25 * work
        return quick

    def timed(self, run: Callable[[], T]) -> T:
        """`run()`, its time counted in the streak (on whichever thread runs it)."""
        began, waited, _ = _spent(time.thread_time)
        try:
            return run()
        finally:
            now, waits, _ = _spent(time.thread_time)
            verdict = self._was_quick(now - began, waits != waited)
            if verdict is not None:
                self.streak = self.streak + 1 if verdict else 0

    def on_loop(self, run: Callable[..., T], *arguments: Any) -> T:
        """`run(*arguments)` on the loop's thread; a slow run (or one stopped past the limit) doubles the streak the
        next one there needs."""
        began, waited, taken = _spent()
        overran = False
        try:
            return run(*arguments)
        except _LoopOverrun:
            overran = True
            raise
        finally:
            now, waits_now, taken_now = _spent()
            work, waits = now - began, waits_now - waited
            verdict = self._was_quick(work, bool(waits), taken_now != taken)
            if verdict is False or overran:
                self.streak, self.needed = 0, min(self.needed * 2, QUICK_STREAK_MAX)
                log.info("a quick tool was slow on the event loop: back to the workers", ms=round(work * 1000, 1),
                         waits=waits, runs_needed=self.needed)
            elif verdict:
                self.streak += 1


class Gateway:
    """Merges the enabled plugins and runs every call the same way, whoever calls."""

    def __init__(self, registry: Registry, source: ConfigSource, folders: Folders, audit: AuditLog) -> None:
        self.registry = registry
        self.source = source
        self.folders = folders
        self.audit = audit
        self._catalogue: tuple[Config, Catalogue] | None = None  # the latest built, whichever profile
        # Per profile ("" for none): the config it was built for, the catalogue, and the lock file's stamp then (the
        # snapshot's, which the config source keeps, file notifications standing in for its stat; see ConfigSource).
        self._catalogues: dict[str, tuple[Config, Catalogue, Any]] = {}
        # `[profiles.NAME]` this gateway serves (`gateway serve --profile NAME`): what its host may be given.
        self.profile: str = ""
        self._narrowed: dict[str, tuple[Snapshot, Snapshot]] = {}
        self._last_good: dict[str, Catalogue] = {}
        # Per plugin: the config its settings were filled from, and those settings (see settings_of).
        self._settings: dict[tuple[str, int], tuple[Config, dict[str, Any]]] = {}
        # Per plugin: its own folders, made once (`Folders.for_plugin` is kept by the Folders' hash, four paths hashed
        # on each look).
        self._plugin_folders: dict[str, Folders] = {}
        self.refreshing = Refreshing()
        # Per read-only tool function: how quickly it answered lately (see Pace).
        self._paces: dict[Any, Pace] = {}
        # Per plugin: its functions running on workers now (changed on the loop and on the workers, under the lock).
        self._working: dict[str, int] = {}
        self._working_lock = threading.Lock()

    # -- configuration and catalogue ------------------------------------------------------------------

    def snapshot(self, profile: str | None = None) -> Snapshot:
        """The config and the gate for a call; narrowed by `profile` (a caller's, chosen by its HTTP token), or
        when None by the profile this gateway serves, when it has one."""
        name = self.profile if profile is None else profile
        current = self.source.current()
        if not name:
            return current
        cached = self._narrowed.get(name)
        if cached is not None and cached[0] is current:
            return cached[1]
        narrowed = narrowed_by_profile(current, name)
        self._narrowed[name] = (current, narrowed)
        return narrowed

    def profile_of(self, caller: Caller) -> str:
        """The profile a caller is given: its token's, else the one this gateway serves ("" for none)."""
        return self.profile if caller.profile is None else caller.profile

    def enabled(self, config: Config) -> list[str]:
        return list(config.plugins) if config.plugins is not None else self.registry.names()

    def settings_of(self, plugin: Plugin, config: Config) -> dict[str, Any]:
        """The plugin's table with its declared defaults filled in (the core's own keys left out).

        Checked once per configuration read (a config is a new object whenever its file changed), not per call;
        each caller gets its own copy of the top level, and the values within are the same for every call of that
        configuration (a plugin reads its settings, it never changes them).
        """
        key = (plugin.name, id(plugin))
        cached = self._settings.get(key)
        if cached is None or cached[0] is not config:
            cached = self._settings[key] = (config, plugin.settings_for(config.table(plugin.name)))
        return dict(cached[1])

    def catalogue(self, snapshot: Snapshot | None = None) -> Catalogue:
        snapshot = snapshot or self.snapshot()
        # A narrowed config names its profile (an undefined one's too): a profile never falls back on another's
        # catalogue.
        key = snapshot.config.profile
        if snapshot.error is not None:
            return self._last_good.get(key) or Catalogue([], {}, [], [], {}, [snapshot.error], [])
        cached = self._catalogues.get(key)
        stamp = snapshot.lock_stamp
        if cached is not None and cached[0] is snapshot.config and stamp is not None and cached[2] is stamp:
            return cached[1]  # the same config, and the source found the tools lock as it was (the same stamp)
        lock_file = self.source.lock_path(snapshot.config)
        if stamp is None:  # a snapshot the source did not stamp the lock for: stat'ed here
            stamp = stat_stamp(lock_file)
            if cached is not None and cached[0] is snapshot.config and cached[2] == stamp:
                return cached[1]
        catalogue = self._pinned(self._merge(snapshot.config), lock_file)
        self._catalogues[key] = (snapshot.config, catalogue, stamp)
        self._catalogue = (snapshot.config, catalogue)
        self._last_good[key] = catalogue
        return catalogue

    def _pinned(self, catalogue: Catalogue, lock_file: Path) -> Catalogue:
        """The catalogue with what `tools.lock` does not pin withheld (gateway.engine.lock); itself when no lock."""
        from gateway.engine import lock as pins

        try:
            lock = pins.Lock.read(lock_file)
        except pins.LockError as error:
            lock, broken = pins.Lock({}), str(error)  # unreadable: nothing is pinned, so everything is withheld
        else:
            broken = ""
        if lock is None:
            return catalogue
        keys = {(plugin, kind, key) for plugin, found in pins.changed(lock, pins.definitions(catalogue)).items()
                for kind, key in found}
        if not keys:
            return catalogue
        tools = [Listed(listed.name, pins.withheld_tool(listed.name, listed.tool))
                 if (listed.tool.plugin, "tools", listed.name) in keys else listed for listed in catalogue.tools]
        withheld = [(r, pins.withheld_sentence(r.plugin, f"The resource {r.uri}")) for r in catalogue.resources
                    if (r.plugin, "resources", r.uri) in keys]
        withheld += [(t, pins.withheld_sentence(t.plugin, f"The resource {t.uri_template}"))
                     for t in catalogue.templates if (t.plugin, "templates", t.uri_template) in keys]
        plugins = sorted({plugin for plugin, _kind, _key in keys})
        problems = [*catalogue.problems, broken or (
            f"withheld until the person accepts them (`gateway lock --accept PLUGIN` shows the change first): "
            f"{len(keys)} definitions of {', '.join(plugins)} differ from tools.lock or are not in it")]
        return Catalogue(
            tools, {listed.name: listed for listed in tools},
            [r for r in catalogue.resources if (r.plugin, "resources", r.uri) not in keys],
            [t for t in catalogue.templates if (t.plugin, "templates", t.uri_template) not in keys],
            {n: p for n, p in catalogue.prompts.items() if (p.plugin, "prompts", n) not in keys},
            problems, catalogue.plugin_order, withheld, hidden=catalogue.hidden)

    def _merge(self, config: Config) -> Catalogue:
        tools: list[Listed] = []
        by_name: dict[str, Listed] = {}
        resources: list[Resource] = []
        templates: list[ResourceTemplate] = []
        prompts: dict[str, Prompt] = {}
        problems: list[str] = []
        hidden: dict[str, str] = {}
        order = []
        for name in self.enabled(config):
            plugin = self.registry.get(name, config.table(name))
            if not plugin.ok:
                problems.append(f"plugin {name}: {plugin.error}")
                continue
            # A plugin whose table is unusable is off, but its tools stay listed and each call says why: a typo
            # in a table must not look to the agent like tools that never existed.
            off = plugin.table_problem(config.table(name))
            prefix = config.prefix(name)
            if not off and _switched_off(plugin, config.table(name)):
                # A plugin that declares an `enabled` setting and is not turned on offers nothing: its tools are
                # unlisted and each call says how to turn it on; its refresh, resources and prompts do not run.
                for tool in plugin.tools:
                    hidden.setdefault(prefix + tool.name, _hidden_sentence(
                        prefix + tool.name, f"the plugin {name} is off until the person turns it on (enabled = "
                        f"true in [plugins.{name}] of {_config_named(config)})"))
                continue
            if off:
                problems.append(off)
            else:
                order.append(name)
            disabled = config.disabled_tools(name)
            for tool in plugin.tools:
                public = prefix + tool.name
                if config.allowed_tools is not None and public not in config.allowed_tools:
                    hidden.setdefault(public, _hidden_sentence(
                        public, f"this host's profile ({config.profile}) does not offer it"))
                    continue
                if tool.name in disabled or public in disabled:
                    hidden.setdefault(public, _hidden_sentence(public, f"the person turned it off (disabled_tools in "
                                                               f"[plugins.{name}] of {_config_named(config)})"))
                    continue
                if config.read_only and not tool.read_only:
                    hidden.setdefault(public, _hidden_sentence(
                        public, f"it writes, and the gateway is read-only (read_only = true in [gateway] of "
                        f"{_config_named(config)})"))
                    continue
                if not NAME_PATTERN.match(public):
                    problems.append(f"plugin {name}: tool name {public!r} (with its prefix) is not a valid name")
                    continue
                if public in by_name:
                    problems.append(
                        f"tool {public!r} of plugin {name} refused: plugin {by_name[public].tool.plugin} already "
                        f"has a tool of that name; set prefix = \"x_\" in [plugins.{name}] to rename its tools"
                    )
                    continue
                listed = Listed(public, tool, _off_sentence(public, off, config) if off else None)
                tools.append(listed)
                by_name[public] = listed
            if off:
                continue
            resources.extend(plugin.resources)
            templates.extend(plugin.templates)
            for prompt in plugin.prompts:
                prompts.setdefault(prefix + prompt.name, prompt)
        for problem in problems:
            log.warning("catalogue problem", problem=problem)
        for public in by_name:
            hidden.pop(public, None)  # a name another plugin serves is that plugin's tool
        return Catalogue(tools, by_name, resources, templates, prompts, problems, order, hidden=hidden)

    def context(self, plugin_name: str, snapshot: Snapshot, caller: Caller, catalogue: Catalogue | None = None,
                deadline: Deadline | None = None) -> Context:
        """The Context a plugin's function is handed; `catalogue`, the one the call already looked up (its ties then
        ask the same plugins without looking it up again); `deadline`, the call's (none: never)."""
        plugin = self.registry.get(plugin_name)
        folders = self._plugin_folders.get(plugin_name)
        if folders is None:
            folders = self._plugin_folders[plugin_name] = self.folders.for_plugin(plugin_name)
        return Context(
            plugin=plugin_name,
            settings=self.settings_of(plugin, snapshot.config),
            folders=folders,
            gate=snapshot.gate,
            client=caller.client,
            client_version=caller.client_version,
            transport=caller.transport,
            plugin_tables=snapshot.config.plugin_tables,
            timezone=snapshot.config.timezone,
            ties=partial(self.tied, snapshot, catalogue=catalogue),
            deadline=deadline or Deadline.never(),
        )

    # -- what plugins say of their things: ties (for every call), traits and census (for the person) ------

    def tied(self, snapshot: Snapshot, addresses: tuple[str, ...], catalogue: Catalogue | None = None
             ) -> dict[str, frozenset[str]]:
        """The projects each address is tied to, as every enabled plugin keeps them (``tied_projects``), ids
        spelt as in the manifest; raises ToolError when a plugin's ties cannot be read (fail closed). `catalogue`:
        the snapshot's, when the caller has it already."""
        if not addresses:
            return {}
        wanted = set(addresses)
        spelling = {project.id.casefold(): project.id for project in snapshot.gate.projects}
        found: dict[str, set[str]] = {}
        try:
            order = (catalogue or self.catalogue(snapshot)).plugin_order
            answers = self.registry.call_each("tied_projects", order,
                                              snapshot.config.table, strict=True, gate=snapshot.gate,
                                              addresses=addresses)
            for plugin, answer in answers:
                if answer is None:
                    continue
                if not isinstance(answer, Mapping):
                    raise HookFailed(plugin, "tied_projects", TypeError(f"gave a {type(answer).__name__}"))
                for address, projects in answer.items():
                    ids = [projects] if isinstance(projects, str) else list(projects or ())
                    if address in wanted and ids:
                        found.setdefault(address, set()).update(spelling.get(str(i).casefold(), str(i)) for i in ids)
        except HookFailed as error:
            raise ToolError(
                f"{error}, so ties cannot be read and nothing that may be tied is given; the details are in the "
                "gateway's log. Try again in a moment, or tell the person."
            ) from None
        return {address: frozenset(ids) for address, ids in found.items()}

    def traits_of(self, address: str, snapshot: Snapshot | None = None) -> list[tuple[str, Traits]]:
        """(plugin, traits) from each enabled plugin that knows ADDRESS (``traits_of``); for the person only."""
        snapshot = snapshot or self.snapshot()
        found = []
        for plugin, traits in self.registry.call_each("traits_of", self.catalogue(snapshot).plugin_order,
                                                      snapshot.config.table, gate=snapshot.gate, address=address):
            if isinstance(traits, Traits):
                found.append((plugin, traits))
            elif traits is not None:
                log.error("traits_of gave something else than Traits", plugin=plugin, type=type(traits).__name__)
        return found

    def census(self, snapshot: Snapshot | None = None) -> Iterator[tuple[str, str, Traits | None]]:
        """(plugin, source, traits) for every thing each enabled plugin holds now (``census``); a plugin whose
        census fails gives one (plugin, sentence, None) saying so, and the others carry on."""
        snapshot = snapshot or self.snapshot()
        for plugin, things in self.registry.call_each("census", self.catalogue(snapshot).plugin_order,
                                                      snapshot.config.table, gate=snapshot.gate):
            # The plugin's generator is stepped inside the try, and this one yields outside it: a GeneratorExit
            # thrown in here (the reader stopped early) is never taken for the plugin's failure.
            each = None
            while True:
                try:
                    each = iter(things or ()) if each is None else each
                    source, traits = next(each)
                    source = str(source)
                except StopIteration:
                    break
                except BaseException as error:
                    if not plugin_failed(error):
                        raise
                    log.error("census failed", plugin=plugin, traceback=traceback.format_exc())
                    yield plugin, f"its census failed ({said(error)})", None
                    break
                if isinstance(traits, Traits):
                    yield plugin, source, traits

    # -- calls ----------------------------------------------------------------------------------------

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None, caller: Caller = Caller()) -> Answer:
        """Run a tool as a host would: raises NotFound for an unknown tool, else always answers."""
        watch = Stopwatch()
        snapshot = self.snapshot(caller.profile)
        catalogue = self.catalogue(snapshot)
        listed = catalogue.tools_by_name.get(name)
        if listed is None and snapshot.error is None:
            hidden = catalogue.hidden.get(name)
            self._audit(caller, {"tool": name, "outcome": "hidden_tool" if hidden else "unknown_tool"}, watch)
            raise NotFound(hidden or f"Unknown tool: {name!r}")
        tool = listed.tool if listed else None
        private = tool.private_arguments if tool else ()
        entry: dict[str, Any] = {
            "plugin": tool.plugin if tool else None,
            "tool": name,
            "arguments": summarise_arguments(arguments or {}, private),
        }
        if snapshot.error is not None:
            answer = Answer(text=f"The gateway's configuration is unusable: {snapshot.error}", is_error=True)
            return self._finish(answer, entry, "config_error", caller, watch)
        assert listed is not None and tool is not None
        if listed.off is not None:
            return self._finish(Answer(text=listed.off, is_error=True), entry, "plugin_off", caller, watch)
        if not tool.read_only:
            # A change must not be made unless its line can be written: check the log before, not after.
            unlogged = self.audit.check()
            if unlogged is not None:
                return self._finish(Answer(text=unlogged, is_error=True), entry, "unlogged", caller, watch)
        try:
            checked = check_arguments(tool, name, arguments)
        except ToolError as error:
            return self._finish(Answer(text=str(error), is_error=True), entry, "bad_arguments", caller, watch)
        try:
            # The refresh makes a context of its own only when it has something to run; the tool's is made once,
            # with the deadline that starts when the refresh is done. A plugin whose refreshes each say they have
            # nothing to do (`stale`) is asked so with the tool's own context, made first: no second one.
            refreshes = self._refreshes(tool.plugin, snapshot)
            still_reading, ctx, verdicts = None, None, None
            if refreshes and self._askable(tool.plugin):
                deadline = self._deadline()
                ctx = self.context(tool.plugin, snapshot, caller, catalogue, deadline)
                verdicts = self._staleness(tool.plugin, ctx)
            if refreshes and (verdicts is None or any(verdict is not False for verdict in verdicts)):
                still_reading = await self.refresh(tool.plugin, snapshot, caller, catalogue=catalogue,
                                                   verdicts=verdicts)
                ctx = None
            if ctx is None:
                deadline = self._deadline()
                ctx = self.context(tool.plugin, snapshot, caller, catalogue, deadline)
            answer, outcome = await self._run(tool.function, ctx, checked, f"the tool {name}", tool.plugin,
                                              self._pace(tool), deadline)
        except anyio.get_cancelled_exc_class():
            # The host cancelled the call (or its task): no answer leaves, but the call is still written down,
            # since a tool that changes things may have changed something before the cancel reached it.
            entry.update(outcome="cancelled", given=[], left_out=0, length=0)
            self._audit(caller, entry, watch)
            raise
        answer, outcome = check_output(tool, name, answer, outcome)
        return self._finish(_noted(answer, still_reading), entry, outcome, caller, watch)

    async def refresh(self, plugin_name: str, snapshot: Snapshot, caller: Caller = Caller(),
                      ctx: Context | None = None, catalogue: Catalogue | None = None,
                      verdicts: list[bool | None] | None = None) -> str | None:
        """Bring the plugin's store up to date before it answers, under the budget (gateway.api.refresh); the line to
        add to its answer when the budget ran out first. `ctx`: the call's own context for that plugin, when made
        (else one is made, only when there is a refresh to run); `catalogue`, the one the call looked up;
        `verdicts`, what each refresh's `stale` check said already this call (`_staleness`): one that said False is
        not run, one that said True is run without being asked again, one that failed is asked again."""
        if not self._refreshes(plugin_name, snapshot):
            return None
        plugin = self.registry.get(plugin_name)
        ctx = ctx or self.context(plugin_name, snapshot, caller, catalogue)
        budget = snapshot.config.refresh_budget_ms
        notes = []
        for i, refresh in enumerate(plugin.refreshes):
            said = verdicts[i] if verdicts is not None else None
            if said is False:
                continue
            notes.append(await self.refreshing.before(plugin_name if i == 0 else f"{plugin_name}/{i}",
                                                      attrs.evolve(refresh, stale=None) if said else refresh, ctx,
                                                      budget))
        return next((note for note in notes if note), None)

    def _askable(self, plugin_name: str) -> bool:
        """Whether each of the plugin's refreshes has a `stale` check and none is running (a call waits for one that
        runs): then the checks are asked with the tool's own context before anything else (`_staleness`)."""
        refreshes = self.registry.get(plugin_name).refreshes
        return all(refresh.stale is not None for refresh in refreshes) and not any(
            self.refreshing.running(plugin_name if i == 0 else f"{plugin_name}/{i}") for i in range(len(refreshes)))

    def _staleness(self, plugin_name: str, ctx: Context) -> list[bool | None]:
        """What each of the plugin's `stale` checks says for `ctx`, in order: True when its refresh has something to
        run, False when it has nothing, None when the check failed (asked again the long way, which says why). Each
        is asked once a call: the long way (`refresh`) is given these verdicts, not asked again."""
        verdicts: list[bool | None] = []
        for refresh in self.registry.get(plugin_name).refreshes:
            try:
                verdicts.append(bool(refresh.stale(ctx)) if refresh.stale is not None else True)
            except BaseException as error:  # a plugin's sys.exit() too (gateway.engine.faults); a cancellation goes on
                if not plugin_failed(error):
                    raise
                verdicts.append(None)
        return verdicts

    def _refreshes(self, plugin_name: str, snapshot: Snapshot) -> bool:
        """Whether the plugin has a refresh to run before it answers (it declares one, and its table leaves it on)."""
        return bool(self.registry.get(plugin_name).refreshes) and snapshot.config.refreshes(plugin_name)

    def _busy(self, plugin_name: str) -> bool:
        """Whether the plugin has work under way on another thread (a call on a worker, a refresh): a quick function
        of its own might then wait on a lock that work holds, which it must not do on the loop."""
        if self._working.get(plugin_name):
            return True
        refreshes = len(self.registry.get(plugin_name).refreshes)
        return refreshes > 0 and any(self.refreshing.running(plugin_name if i == 0 else f"{plugin_name}/{i}") for i in range(refreshes))

    def _counted(self, plugin_name: str, run: Callable[[], T]) -> T:
        """On a worker: `run()`, counted among the plugin's work under way until it returns."""
        try:
            return run()
        finally:
            with self._working_lock:
                self._working[plugin_name] -= 1

    async def _in_worker(self, plugin_name: str, run: Callable[[], T]) -> T:
        """`run()` on a worker, counted as the plugin's work under way (see `_busy`) from now until it returns,
        whenever that is (a wait cancelled at the deadline leaves it running; one never started leaves the plugin
        counted busy, which only keeps its quick functions on the workers)."""
        with self._working_lock:
            self._working[plugin_name] = self._working.get(plugin_name, 0) + 1
        return await run_in_worker(partial(self._counted, plugin_name, run))

    def _pace(self, tool: Tool) -> Pace | None:
        """The tool's Pace when its runs may go on the loop (a read-only tool's synchronous function), else None."""
        if not tool.read_only:
            return None
        pace = self._paces.get(tool.function)
        if pace is None:
            if inspect.iscoroutinefunction(tool.function):
                return None
            if len(self._paces) >= 4096:  # plugins loaded again and again: the old functions' paces go
                self._paces.clear()
            pace = self._paces[tool.function] = Pace()
        return pace

    def _deadline(self) -> Deadline:
        """A call's deadline, from now."""
        return Deadline.after(self._catalogue[0].call_timeout if self._catalogue else DEFAULT_CALL_TIMEOUT)

    async def _run(
        self, function: Any, ctx: Context, arguments: dict[str, Any], what: str, plugin: str, pace: Pace | None = None,
        deadline: Deadline | None = None
    ) -> tuple[Answer, str]:
        """Run a plugin's function under the call's deadline: a synchronous one on a worker thread (the event
        loop keeps answering pings and other calls meanwhile), or on the loop when `pace` says it is quick; an async
        one on the loop. Whatever it gives back is masked before it leaves, on the worker when there is one.

        `deadline`: the one `ctx` was made with, just now (a tool's call: its Context made once); None: the call's
        deadline starts here, and `ctx` is given it."""
        if deadline is None:
            deadline = self._deadline()
            ctx = attrs.evolve(ctx, deadline=deadline)
        bound = partial(function, ctx, **arguments) if _takes_context(function) else partial(function, **arguments)
        answer: Answer | None = None
        try:
            # A quick function on the loop needs no cancel scope: nothing is waited for.
            quick = pace is not None and pace.quick and _can_stop_on_loop() and not self._busy(plugin)
            result: Any = _on_loop(pace, bound, deadline, plugin, what) if quick else _NOT_RUN
            if result is not _NOT_RUN and not _awaitable(result):
                answer = result
            else:
                with anyio.move_on_after(deadline.seconds):
                    if inspect.iscoroutinefunction(function):
                        answer = masked_answer(Answer.of(await bound()))
                    else:
                        if result is _NOT_RUN:
                            run = partial(_answer_of, bound)
                            result = await self._in_worker(plugin, run if pace is None else partial(pace.timed, run))
                        answer = masked_answer(Answer.of(await result)) if _awaitable(result) else result
        except ToolError as error:
            if not deadline.passed():
                # A gate's refusal keeps its owners for an in-process caller (`gateway access why`), never sent.
                return Answer(text=str(error), is_error=True, refused_by=getattr(error, "owners", None)), "refused"
        except BaseException as error:  # a plugin's sys.exit() is its failure too; a cancellation goes on up
            if not plugin_failed(error):
                raise
            if not deadline.passed() and not isinstance(error, DeadlinePassed):
                log.error("plugin failed", plugin=plugin, what=what, traceback=traceback.format_exc())
                text = (
                    f"{what} failed inside the {plugin} plugin ({type(error).__name__}). This is a fault of the "
                    "gateway, not of the request; the details are in the gateway's log. Try something else, or tell "
                    "the person."
                )
                return Answer(text=text, is_error=True), "plugin_failed"
        if answer is None or deadline.passed():
            # The deadline passed: the wait was cancelled (a worker finishes on its own; SQLite work given
            # ctx.interruptible stops at once), or the plugin stopped on DeadlinePassed or SQLite's interrupt (what
            # it gave then may be partial, so it is not given).
            log.warning("call past its deadline", plugin=plugin, what=what, seconds=deadline.seconds)
            return Answer(text=deadline.sentence(), is_error=True), "timeout"
        return answer, "error" if answer.is_error else "ok"

    async def in_worker(self, function: Callable[..., T], *arguments: Any) -> T:
        """A synchronous piece of the gateway's own work (a listing that calls plugins) run on a worker thread,
        under the call deadline; past it, a ToolError saying so."""
        self.catalogue()  # plugins are loaded here, on the loop, never by two threads at once
        deadline = self._deadline()
        with anyio.move_on_after(deadline.seconds):
            return await run_in_worker(partial(function, *arguments))
        raise ToolError(deadline.sentence())

    def _finish(self, answer: Answer, entry: dict[str, Any], outcome: str, caller: Caller, watch: Stopwatch) -> Answer:
        """Log the call, then give the answer; an answer that cannot be logged is not given."""
        entry.update(
            outcome=outcome,
            given=list(answer.given),
            left_out=answer.left_out,
            length=len(answer.text),
        )
        unlogged = self._audit(caller, entry, watch)
        if unlogged is not None:
            return Answer(text=unlogged, is_error=True)
        return answer

    def _audit(self, caller: Caller, entry: dict[str, Any], watch: Stopwatch) -> str | None:
        """Write the call's line; None when written, else the sentence to answer instead (said on stderr too)."""
        record = {"client": caller.client, "client_version": caller.client_version, "transport": caller.transport}
        if profile := self.profile_of(caller):
            record["profile"] = profile
        if caller.token:
            record["token"] = caller.token
        record.update(entry)
        record["ms"] = watch.ms
        try:
            self.audit.write(record)
        except AuditError as error:
            log.error("audit log cannot be written", error=str(error), folder=str(self.audit.folder))
            return str(error)
        return None

    def _audit_listing(self, caller: Caller, method: str, given: list[str], watch: Stopwatch) -> None:
        """One line for a list method that gives names and addresses; raises ToolError when it cannot be logged."""
        unlogged = self._audit(caller, {"method": method, "outcome": "ok", "given": given}, watch)
        if unlogged is not None:
            raise ToolError(unlogged)

    # -- resources and prompts ------------------------------------------------------------------------

    def list_resources(self, cursor: str | None, caller: Caller = Caller()) -> tuple[list[dict[str, Any]], str | None]:
        """One page of every plugin's resources: fixed ones first, then each template's listing.

        Names and titles are others' words (a session's title): masked like any answer, and the page logged.
        """
        watch = Stopwatch()
        snapshot = self.snapshot(caller.profile)
        catalogue = self.catalogue(snapshot)
        if snapshot.error is not None:
            raise ToolError(f"The gateway's configuration is unusable: {snapshot.error}")
        sources: list[Any] = ["fixed", *[t for t in catalogue.templates if t.listing is not None]]
        index, inner = _decode_cursor(cursor)
        page: list[dict[str, Any]] = []
        if index == 0:
            for resource in catalogue.resources:
                page.append(_resource_dict(resource))
            index, inner = 1, None
        while index < len(sources) and len(page) < PAGE_SIZE:
            template = sources[index]
            ctx = self.context(template.plugin, snapshot, caller)
            try:
                result = template.listing(ctx, inner, PAGE_SIZE - len(page))
            except ToolError:
                result = None
            except BaseException as error:
                if not plugin_failed(error):
                    raise
                log.error("resource listing failed", plugin=template.plugin, traceback=traceback.format_exc())
                result = None
            if result is not None:
                for item in result.resources:
                    page.append(_resource_dict(item, template))
            if result is not None and result.next_cursor:
                inner = result.next_cursor
                if not result.resources:
                    break  # a listing that gives nothing but a cursor: hand the cursor on rather than loop
                continue
            index, inner = index + 1, None
        next_cursor = _encode_cursor(index, inner) if index < len(sources) else None
        page = [mask_data(item) for item in page] if needs_masking(page) else page
        self._audit_listing(caller, "resources/list", [str(item.get("uri", "")) for item in page], watch)
        return page, next_cursor

    def list_templates(self, caller: Caller = Caller()) -> list[ResourceTemplate]:
        watch = Stopwatch()
        templates = [masked_item(t, ("name", "title", "description"))
                     for t in self.catalogue(self.snapshot(caller.profile)).templates]
        self._audit_listing(caller, "resources/templates/list", [t.uri_template for t in templates], watch)
        return templates

    async def read_resource(self, uri: str, caller: Caller = Caller()) -> tuple[Answer, str]:
        """A resource's text and mime type; NotFound when no plugin serves the URI."""
        watch = Stopwatch()
        snapshot = self.snapshot(caller.profile)
        catalogue = self.catalogue(snapshot)
        entry: dict[str, Any] = {"uri": mask_typed(uri)[:200]}
        if snapshot.error is not None:
            answer = Answer(text=f"The gateway's configuration is unusable: {snapshot.error}", is_error=True)
            return self._finish(answer, entry, "config_error", caller, watch), "text/plain"
        for resource in catalogue.resources:
            if resource.uri == uri:
                entry["plugin"] = resource.plugin
                ctx = self.context(resource.plugin, snapshot, caller, catalogue)
                still_reading = await self.refresh(resource.plugin, snapshot, caller, ctx)
                answer, outcome = await self._run(resource.read, ctx, {}, f"the resource {uri}", resource.plugin)
                answer = _noted(answer, still_reading)
                return self._finish(answer, entry, outcome, caller, watch), resource.mime_type
        for template in catalogue.templates:
            params = template.match(uri)
            if params is not None:
                entry["plugin"] = template.plugin
                ctx = self.context(template.plugin, snapshot, caller, catalogue)
                still_reading = await self.refresh(template.plugin, snapshot, caller, ctx)
                answer, outcome = await self._run(template.read, ctx, params, f"the resource {uri}", template.plugin)
                answer = _noted(answer, still_reading)
                if not answer.given and not answer.is_error:
                    answer = attrs.evolve(answer, given=(uri,))
                return self._finish(answer, entry, outcome, caller, watch), template.mime_type
        for item, sentence in catalogue.withheld:
            if getattr(item, "uri", None) == uri or (isinstance(item, ResourceTemplate) and item.match(uri)):
                entry["plugin"] = item.plugin
                return self._finish(Answer(text=sentence, is_error=True), entry, "withheld", caller, watch), "text/plain"
        self._audit(caller, {**entry, "outcome": "unknown_resource"}, watch)
        raise NotFound(f"Unknown resource: {uri}")

    async def complete(self, kind: str, name: str, argument: str, value: str, caller: Caller = Caller()) -> list[str]:
        """Suggested values for completion/complete: a prompt's argument (`kind` "prompt", `name` its name) or a
        resource template's parameter (`kind` "resource", `name` its URI template). What the plugin suggests,
        masked, starting with `value`, at most COMPLETIONS of them, under the call's deadline; the listing logged
        like any giving. None suggested while the config is unusable or when the plugin has nothing to say."""
        watch = Stopwatch()
        snapshot = self.snapshot(caller.profile)
        if snapshot.error is not None:
            return []
        catalogue = self.catalogue(snapshot)
        if kind == "prompt":
            found: Any = catalogue.prompts.get(name)
        else:
            found = next((t for t in catalogue.templates if t.uri_template == name), None)
        if found is None or found.complete is None:
            return []
        ctx = self.context(found.plugin, snapshot, caller)
        suggest = found.complete

        def values(ctx: Context, argument: str, value: str) -> dict[str, Any]:
            return {"values": [str(v) for v in list(suggest(ctx, argument, value) or [])[:COMPLETIONS * 10]]}

        answer, _outcome = await self._run(values, ctx, {"argument": argument, "value": value},
                                           f"the completion of {argument}", found.plugin)
        values = answer.data.get("values", []) if isinstance(answer.data, Mapping) else []
        chosen = [mask(str(v)) for v in values if isinstance(v, str) and str(v).startswith(value)][:COMPLETIONS]
        self._audit_listing(caller, "completion/complete", [], watch)
        return chosen

    async def may_tell(self, uri: str, caller: Caller | None) -> bool:
        """Whether `caller`, subscribed to `uri`, may be told now that it changed: the resource is read for them
        again under the gate as it is now (not refreshed, nothing of it sent), and the notice logged like any
        giving; one refused, failed or unlogged is not told."""
        watch = Stopwatch()
        caller = caller or Caller()
        snapshot = self.snapshot(caller.profile)
        if snapshot.error is not None:
            return False
        catalogue = self.catalogue(snapshot)
        found = [(r.plugin, r.read, {}) for r in catalogue.resources if r.uri == uri] + [
            (t.plugin, t.read, params) for t in catalogue.templates if (params := t.match(uri)) is not None
        ]
        if not found:
            return False
        plugin, read, params = found[0]
        _answer, outcome = await self._run(read, self.context(plugin, snapshot, caller), params, f"the resource {uri}",
                                           plugin)
        told = outcome == "ok"
        entry = {"plugin": plugin, "method": "notifications/resources/updated", "uri": mask_typed(uri)[:200],
                 "outcome": outcome, "given": [uri] if told else []}
        return self._audit(caller, entry, watch) is None and told

    def list_prompts(self, caller: Caller = Caller()) -> list[tuple[str, Prompt]]:
        watch = Stopwatch()
        prompts = [(name, masked_item(p, ("title", "description")))
                   for name, p in self.catalogue(self.snapshot(caller.profile)).prompts.items()]
        self._audit_listing(caller, "prompts/list", [name for name, _prompt in prompts], watch)
        return prompts

    async def get_prompt(self, name: str, arguments: Mapping[str, Any] | None, caller: Caller = Caller()) -> Answer:
        watch = Stopwatch()
        snapshot = self.snapshot(caller.profile)
        prompt = self.catalogue(snapshot).prompts.get(name)
        if prompt is None:
            raise NotFound(f"Unknown prompt: {name!r}")
        if snapshot.error is not None:
            raise ToolError(f"The gateway's configuration is unusable: {snapshot.error}")
        arguments = dict(arguments or {})
        entry: dict[str, Any] = {"plugin": prompt.plugin, "prompt": name, "arguments": summarise_arguments(arguments)}
        known = {a.name for a in prompt.arguments}
        unknown = sorted(set(arguments) - known)
        missing = sorted(a.name for a in prompt.arguments if a.required and a.name not in arguments)
        if unknown or missing:
            text = "; ".join(
                filter(None, [unknown and f"unknown {_arguments(unknown)} {', '.join(unknown)}",
                              missing and f"missing {_arguments(missing)} {', '.join(missing)}"])
            ) + f"; {name} takes: {', '.join(sorted(known)) or 'nothing'}."
            raise ToolError(text)
        ctx = self.context(prompt.plugin, snapshot, caller)
        answer, outcome = await self._run(prompt.render, ctx, arguments, f"the prompt {name}", prompt.plugin)
        return self._finish(answer, entry, outcome, caller, watch)


def _config_named(config: Config) -> str:
    return f"the gateway's config ({config.path})" if config.path else "the gateway's config"


def _off_sentence(tool: str, problem: str, config: Config) -> str:
    """What a call to a listed tool of a plugin its table turns off answers."""
    return (f"{tool} cannot answer now: {problem}. Ask the person to fix {_config_named(config)}; it is read again "
            "on the next call.")


def _switched_off(plugin: Any, table: Mapping[str, Any]) -> bool:
    """Does the plugin declare a boolean `enabled` setting that its table (or the setting's default) leaves false?"""
    return plugin.switched_off(table)


def _hidden_sentence(tool: str, why: str) -> str:
    """What a call to a tool the settings hide answers, instead of "Unknown tool"."""
    return f"{tool} is not offered: {why}. Do without it, or ask the person to turn it on."


def _noted(answer: Answer, note: str | None) -> Answer:
    """The answer with the refresh's one line after it (an error is left as it is: its sentence comes first)."""
    if not note or answer.is_error:
        return answer
    return attrs.evolve(answer, text=f"{answer.text}\n{note}" if answer.text else note)


def _awaitable(result: Any) -> bool:
    """Whether a function's result is to be awaited; an Answer is told at once (inspect.isawaitable asks the
    Awaitable ABC, a microsecond a call for what is nearly always an Answer)."""
    return not isinstance(result, Answer) and inspect.isawaitable(result)


def _answer_of(bound: Any) -> Any:
    """On a worker: the function's answer, masked there too; an awaitable it returned is left to the loop."""
    result = bound()
    return result if _awaitable(result) else masked_answer(Answer.of(result))


_NOT_RUN = object()


class _LoopOverrun(BaseException):
    """Raised into a function run on the loop that is still going after LOOP_LIMIT_SECONDS (a BaseException, so
    that a plugin's `except Exception` does not take it for one of its own failures)."""


class _Alarm:
    """The timer signal's state: whether a run on the loop is under way (`armed`) and when it began, when the timer
    set last goes off (None once it went off, or while none was set), and the handler that was in place before ours,
    which gets every alarm not ours."""

    armed = False
    started = 0.0
    fires_at: float | None = None
    previous: Any = None
    cancelled_at_exit = False  # the exit handler that cancels a pending timer is in place


# How much earlier than its time an alarm may seem to come and still be taken for our timer's (the clocks' grain), and
# how late it may be before the timer is taken for lost (another part of the process set the one real-time timer).
_ALARM_SLACK = 0.002


def _forget_timer() -> None:
    _Alarm.fires_at = None


# A forked child has no timers of its parent's: none is pending there, whatever the parent had set.
os.register_at_fork(after_in_child=_forget_timer)


def _arm(seconds: float, now: float) -> None:
    if not _Alarm.cancelled_at_exit:
        # At its exit the interpreter gives the signal its default action back (the process's end): a timer still
        # pending then would end the process by its signal instead of its own exit status.
        atexit.register(_cancel_timer)
        _Alarm.cancelled_at_exit = True
    _Alarm.fires_at = now + seconds
    signal.setitimer(signal.ITIMER_REAL, seconds)


def _cancel_timer() -> None:
    if _Alarm.fires_at is not None:
        _Alarm.fires_at = None
        signal.setitimer(signal.ITIMER_REAL, 0)


def _overrun(signum: int, frame: Any) -> None:
    now = time.perf_counter()
    fires_at = _Alarm.fires_at
    if fires_at is not None and now >= fires_at - _ALARM_SLACK:
        # Our timer: set at the start of some run on the loop, perhaps an earlier one. The run under way, if any,
        # is stopped once it has had its LOOP_LIMIT_SECONDS, else the timer is set again for what it has left.
        _Alarm.fires_at = None
        if _Alarm.armed:
            left = _Alarm.started + LOOP_LIMIT_SECONDS - now
            if left <= _ALARM_SLACK:
                raise _LoopOverrun
            _arm(left, now)
        return
    if _Alarm.armed and now - _Alarm.started >= LOOP_LIMIT_SECONDS:
        raise _LoopOverrun
    if callable(_Alarm.previous):
        _Alarm.previous(signum, frame)


def _can_stop_on_loop() -> bool:
    """Whether a run on this thread can be stopped by a timer signal: Python runs signal handlers on the main
    thread only (where `gateway serve` runs its loop)."""
    return _HAS_TIMER and threading.current_thread() is threading.main_thread()


_HAS_TIMER = hasattr(signal, "setitimer")


def _stopped_past_limit(run: Callable[..., T], *arguments: Any) -> T:
    """`run(*arguments)`, interrupted by _LoopOverrun when it is still going after LOOP_LIMIT_SECONDS.

    The handler is put in place once and left there (setting a handler costs tens of microseconds, more than a quick
    tool's run): an alarm that is not our timer's goes to the handler that was there before, if any. The timer is
    not set and cancelled around every run either (two calls to the kernel a run): a run finds it set by an earlier
    run when that one began less than LOOP_LIMIT_SECONDS ago, and when it goes off during a later run, the handler
    sets it again for what that run has left. So a stream of quick runs sets it at most once per LOOP_LIMIT_SECONDS,
    and its signal comes at most as often (once more after the last run, to nobody: the handler then does nothing)."""
    if signal_handler(signal.SIGALRM) is not _overrun:
        _Alarm.previous = signal.signal(signal.SIGALRM, _overrun)
        _Alarm.fires_at = None
    now = time.perf_counter()
    _Alarm.started = now
    fires_at = _Alarm.fires_at
    if fires_at is None or now > fires_at + _ALARM_SLACK:
        # None set, or one that should have gone off by now did not (the timer was set anew elsewhere): set it.
        _arm(LOOP_LIMIT_SECONDS, now)
    _Alarm.armed = True
    try:
        return run(*arguments)
    finally:
        _Alarm.armed = False


def _on_loop(pace: Pace, bound: Any, deadline: Deadline, plugin: str, what: str) -> Any:
    """A quick read-only function's answer, run on the loop's thread; _NOT_RUN when it ran past LOOP_LIMIT_SECONDS
    (stopped, then run again on a worker; its streak starts again and must be twice as long) or failed there with
    anything but a refusal or its deadline (then it is run again on a worker, and kept on the workers: a function
    may need a thread of its own). Running a read-only function again changes nothing."""
    try:
        return pace.on_loop(_stopped_past_limit, _answer_of, bound)
    except _LoopOverrun:
        log.info("a quick tool ran past its limit on the event loop: stopped, run again on a worker", plugin=plugin,
                 what=what, limit_ms=round(LOOP_LIMIT_SECONDS * 1000))
        return _NOT_RUN
    except (ToolError, DeadlinePassed):
        raise
    except BaseException as error:
        if not plugin_failed(error):
            raise
        if deadline.passed():
            raise  # stopped by its deadline (SQLite's interrupt): answered as such, not run again
        pace.pinned = True
        log.info("a quick tool failed on the event loop: run again on a worker, and kept there", plugin=plugin,
                 what=what, error=type(error).__name__)
        return _NOT_RUN


def _resource_dict(item: Resource | Mapping[str, Any], template: ResourceTemplate | None = None) -> dict[str, Any]:
    if isinstance(item, Resource):
        return {
            "uri": item.uri,
            "name": item.name,
            "title": item.title,
            "description": item.description,
            "mime_type": item.mime_type,
        }
    found = dict(item)
    found.setdefault("mime_type", template.mime_type if template else "text/plain")
    found.setdefault("name", found.get("uri", ""))
    return found


def _encode_cursor(index: int, inner: str | None) -> str:
    return encode_cursor([index, inner])


def _decode_cursor(cursor: str | None) -> tuple[int, str | None]:
    if not cursor:
        return 0, None
    try:
        index, inner = decode_cursor(cursor)
        if not isinstance(index, int) or index < 0 or not (inner is None or isinstance(inner, str)):
            raise ValueError
        return index, inner
    except (ValueError, TypeError):
        raise ToolError("the cursor is not one this gateway gave; list again from the start") from None


def make_gateway_from_environment(
    *,
    config_file: Path | None = None,
    plugins: list[Any] | None = None,
    entrypoints: bool = True,
) -> Gateway:
    """A gateway on the person's own folders (platformdirs), as `gateway serve` builds it."""
    from gateway.engine.config import config_choice

    folders = Folders.from_environment()
    path, explicit = (config_file, True) if config_file else config_choice(folders.config)
    registry = Registry(folders, plugins=plugins or (), entrypoints=entrypoints)
    return Gateway(registry, ConfigSource(path, explicit=explicit), folders, AuditLog(folders.state / "audit"))


def _arguments(names: list[str]) -> str:
    return "argument" if len(names) == 1 else "arguments"


def narrowed_by_profile(snapshot: Snapshot, name: str) -> Snapshot:
    """The snapshot as a host on profile `name` may see it: fewer plugins and tools, read-only if it says so,
    and a gate that opens only the profile's projects (never one the manifest keeps closed). A profile the
    config does not define closes everything, said on every call."""
    if snapshot.error is not None:
        return snapshot
    config = snapshot.config
    profile = config.profiles.get(name)
    if profile is None:
        where = config.path or "the config"
        # The config names the profile even so: no cache of another profile's is ever taken for this one's.
        return Snapshot(attrs.evolve(config, profile=name), CLOSED,
                        f"the profile {name!r} is not defined in {where} (a [profiles.{name}] table): nothing is "
                        "given to this host until it is, or until the host is given another profile (`serve "
                        "--profile`, or over HTTP another token)")
    enabled = config.plugins
    plugins = enabled if profile.plugins is None else tuple(
        p for p in (enabled if enabled is not None else profile.plugins) if p in profile.plugins)
    narrowed = attrs.evolve(config, plugins=plugins, read_only=config.read_only or profile.read_only,
                            allowed_tools=frozenset(profile.tools) if profile.tools is not None else None,
                            profile=name)
    gate = snapshot.gate
    projects = tuple(attrs.evolve(p, ai=p.ai and (profile.projects is None or p.id in profile.projects))
                     for p in gate.projects)
    outside = gate.outside_projects and profile.outside_projects is not False
    narrowed_gate = Gate(Manifest(projects), outside_projects=outside, reading=gate.reading)
    return attrs.evolve(snapshot, config=narrowed, gate=narrowed_gate)
