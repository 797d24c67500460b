"""The gateway itself, free of any protocol: the merged catalogue, and every call through gate, masks and audit."""

from __future__ import annotations

import inspect
import traceback
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio
import attrs
import structlog

from gateway.arguments import check_arguments, check_output
from gateway.audit import AuditError, AuditLog, Stopwatch, summarise_arguments
from gateway.config import Config, ConfigSource, Snapshot
from gateway.context import Context, Folders
from gateway.cursors import decode_cursor, encode_cursor
from gateway.deadline import DEFAULT_CALL_TIMEOUT, Deadline, DeadlinePassed, run_in_worker
from gateway.items import (
    NAME_PATTERN,
    Answer,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
    ToolError,
    wants_context,
)
from gateway.privacy import mask_secrets
from gateway.privacy.net import mask_data, masked_answer, masked_item, needs_masking
from gateway.refresh import Refreshing
from gateway.registry import Plugin, Registry

log = structlog.get_logger("gateway")

T = TypeVar("T")

PAGE_SIZE = 100


class NotFound(LookupError):
    """An unknown tool, resource or prompt: a protocol error, not a tool's failure."""


@attrs.frozen
class Caller:
    """Who is calling, for the audit log and the context."""

    client: str = "unknown"
    client_version: str = ""
    transport: str = "direct"


@attrs.frozen
class Listed:
    """A tool as listed, under its public name (a plugin's prefix applied)."""

    name: str
    tool: Tool


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


class Gateway:
    """Merges the enabled plugins and runs every call the same way, whoever calls."""

    def __init__(self, registry: Registry, source: ConfigSource, folders: Folders, audit: AuditLog) -> None:
        self.registry = registry
        self.source = source
        self.folders = folders
        self.audit = audit
        self._catalogue: tuple[Config, Catalogue] | None = None
        self._last_good: Catalogue | None = None
        self.refreshing = Refreshing()

    # -- configuration and catalogue ------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        return self.source.current()

    def enabled(self, config: Config) -> list[str]:
        return list(config.plugins) if config.plugins is not None else self.registry.names()

    def settings_of(self, plugin: Plugin, config: Config) -> dict[str, Any]:
        """The plugin's table with its declared defaults filled in (the core's own keys left out)."""
        return plugin.settings_for(config.table(plugin.name))

    def catalogue(self, snapshot: Snapshot | None = None) -> Catalogue:
        snapshot = snapshot or self.snapshot()
        if snapshot.error is not None:
            return self._last_good or Catalogue([], {}, [], [], {}, [snapshot.error], [])
        if self._catalogue is not None and self._catalogue[0] is snapshot.config:
            return self._catalogue[1]
        catalogue = self._merge(snapshot.config)
        self._catalogue = (snapshot.config, catalogue)
        self._last_good = catalogue
        return catalogue

    def _merge(self, config: Config) -> Catalogue:
        tools: list[Listed] = []
        by_name: dict[str, Listed] = {}
        resources: list[Resource] = []
        templates: list[ResourceTemplate] = []
        prompts: dict[str, Prompt] = {}
        problems: list[str] = []
        order = []
        for name in self.enabled(config):
            plugin = self.registry.get(name, config.table(name))
            if not plugin.ok:
                problems.append(f"plugin {name}: {plugin.error}")
                continue
            if table_problem := plugin.table_problem(config.table(name)):
                problems.append(table_problem)
                continue
            order.append(name)
            prefix = config.prefix(name)
            disabled = config.disabled_tools(name)
            for tool in plugin.tools:
                public = prefix + tool.name
                if tool.name in disabled or public in disabled:
                    continue
                if config.read_only and not tool.read_only:
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
                listed = Listed(public, tool)
                tools.append(listed)
                by_name[public] = listed
            resources.extend(plugin.resources)
            templates.extend(plugin.templates)
            for prompt in plugin.prompts:
                prompts.setdefault(prefix + prompt.name, prompt)
        for problem in problems:
            log.warning("catalogue problem", problem=problem)
        return Catalogue(tools, by_name, resources, templates, prompts, problems, order)

    def context(self, plugin_name: str, snapshot: Snapshot, caller: Caller) -> Context:
        plugin = self.registry.get(plugin_name)
        return Context(
            plugin=plugin_name,
            settings=self.settings_of(plugin, snapshot.config),
            folders=self.folders.for_plugin(plugin_name),
            gate=snapshot.gate,
            client=caller.client,
            plugin_tables=snapshot.config.plugin_tables,
            timezone=snapshot.config.timezone,
        )

    # -- calls ----------------------------------------------------------------------------------------

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None, caller: Caller = Caller()) -> Answer:
        """Run a tool as a host would: raises NotFound for an unknown tool, else always answers."""
        watch = Stopwatch()
        snapshot = self.snapshot()
        catalogue = self.catalogue(snapshot)
        listed = catalogue.tools_by_name.get(name)
        if listed is None and snapshot.error is None:
            self._audit(caller, {"tool": name, "outcome": "unknown_tool"}, watch)
            raise NotFound(f"Unknown tool: {name!r}")
        tool = listed.tool if listed else None
        private = frozenset(tool.private_arguments) if tool else frozenset()
        entry: dict[str, Any] = {
            "plugin": tool.plugin if tool else None,
            "tool": name,
            "arguments": summarise_arguments(arguments or {}, private),
        }
        if snapshot.error is not None:
            answer = Answer(text=f"The gateway's configuration is unusable: {snapshot.error}", is_error=True)
            return self._finish(answer, entry, "config_error", caller, watch)
        assert tool is not None
        if not tool.read_only:
            # A change must not be made unless its line can be written: check the log before, not after.
            unlogged = self.audit.check()
            if unlogged is not None:
                return self._finish(Answer(text=unlogged, is_error=True), entry, "unlogged", caller, watch)
        try:
            checked = check_arguments(tool, name, arguments)
        except ToolError as error:
            return self._finish(Answer(text=str(error), is_error=True), entry, "bad_arguments", caller, watch)
        ctx = self.context(tool.plugin, snapshot, caller)
        still_reading = await self.refresh(tool.plugin, snapshot, caller)
        answer, outcome = await self._run(tool.function, ctx, checked, f"the tool {name}", tool.plugin)
        answer, outcome = check_output(tool, name, answer, outcome)
        return self._finish(_noted(answer, still_reading), entry, outcome, caller, watch)

    async def refresh(self, plugin_name: str, snapshot: Snapshot, caller: Caller = Caller()) -> str | None:
        """Bring the plugin's store up to date before it answers, under the budget (gateway.refresh); the line to
        add to its answer when the budget ran out first."""
        plugin = self.registry.get(plugin_name)
        if not plugin.refreshes or not snapshot.config.refreshes(plugin_name):
            return None
        ctx = self.context(plugin_name, snapshot, caller)
        budget = snapshot.config.refresh_budget_ms
        notes = [
            await self.refreshing.before(plugin_name if i == 0 else f"{plugin_name}/{i}", refresh, ctx, budget)
            for i, refresh in enumerate(plugin.refreshes)
        ]
        return next((note for note in notes if note), None)

    async def _run(
        self, function: Any, ctx: Context, arguments: dict[str, Any], what: str, plugin: str
    ) -> tuple[Answer, str]:
        """Run a plugin's function under the call's deadline: a synchronous one on a worker thread (the event
        loop keeps answering pings and other calls meanwhile), an async one on the loop. Whatever it gives back is
        masked before it leaves, on the worker when there is one."""
        deadline = Deadline.after(self._catalogue[0].call_timeout if self._catalogue else DEFAULT_CALL_TIMEOUT)
        ctx = attrs.evolve(ctx, deadline=deadline)
        bound = partial(function, ctx, **arguments) if wants_context(function) else partial(function, **arguments)
        answer: Answer | None = None
        try:
            with anyio.move_on_after(deadline.seconds):
                if inspect.iscoroutinefunction(function):
                    answer = masked_answer(Answer.of(await bound()))
                else:
                    result = await run_in_worker(partial(_answer_of, bound))
                    answer = masked_answer(Answer.of(await result)) if inspect.isawaitable(result) else result
        except ToolError as error:
            if not deadline.passed():
                # A gate's refusal keeps its owners for an in-process caller (`gateway access why`), never sent.
                return Answer(text=str(error), is_error=True, refused_by=getattr(error, "owners", None)), "refused"
        except Exception as error:
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
        deadline = Deadline.after(self._catalogue[0].call_timeout if self._catalogue else DEFAULT_CALL_TIMEOUT)
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
        record = {
            "client": caller.client,
            "client_version": caller.client_version,
            "transport": caller.transport,
            **entry,
            "ms": watch.ms,
        }
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
        snapshot = self.snapshot()
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
            except Exception:
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
        templates = [masked_item(t, ("name", "title", "description")) for t in self.catalogue().templates]
        self._audit_listing(caller, "resources/templates/list", [t.uri_template for t in templates], watch)
        return templates

    async def read_resource(self, uri: str, caller: Caller = Caller()) -> tuple[Answer, str]:
        """A resource's text and mime type; NotFound when no plugin serves the URI."""
        watch = Stopwatch()
        snapshot = self.snapshot()
        catalogue = self.catalogue(snapshot)
        entry: dict[str, Any] = {"uri": mask_secrets(uri)[:200]}
        if snapshot.error is not None:
            answer = Answer(text=f"The gateway's configuration is unusable: {snapshot.error}", is_error=True)
            return self._finish(answer, entry, "config_error", caller, watch), "text/plain"
        for resource in catalogue.resources:
            if resource.uri == uri:
                entry["plugin"] = resource.plugin
                ctx = self.context(resource.plugin, snapshot, caller)
                still_reading = await self.refresh(resource.plugin, snapshot, caller)
                answer, outcome = await self._run(resource.read, ctx, {}, f"the resource {uri}", resource.plugin)
                answer = _noted(answer, still_reading)
                return self._finish(answer, entry, outcome, caller, watch), resource.mime_type
        for template in catalogue.templates:
            params = template.match(uri)
            if params is not None:
                entry["plugin"] = template.plugin
                ctx = self.context(template.plugin, snapshot, caller)
                still_reading = await self.refresh(template.plugin, snapshot, caller)
                answer, outcome = await self._run(template.read, ctx, params, f"the resource {uri}", template.plugin)
                answer = _noted(answer, still_reading)
                if not answer.given and not answer.is_error:
                    answer = attrs.evolve(answer, given=(uri,))
                return self._finish(answer, entry, outcome, caller, watch), template.mime_type
        self._audit(caller, {**entry, "outcome": "unknown_resource"}, watch)
        raise NotFound(f"Unknown resource: {uri}")

    async def may_tell(self, uri: str, caller: Caller | None) -> bool:
        """Whether `caller`, subscribed to `uri`, may be told now that it changed: the resource is read for them
        again under the gate as it is now (not refreshed, nothing of it sent), and the notice logged like any
        giving; one refused, failed or unlogged is not told."""
        watch = Stopwatch()
        caller = caller or Caller()
        snapshot = self.snapshot()
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
        entry = {"plugin": plugin, "method": "notifications/resources/updated", "uri": mask_secrets(uri)[:200],
                 "outcome": outcome, "given": [uri] if told else []}
        return self._audit(caller, entry, watch) is None and told

    def list_prompts(self, caller: Caller = Caller()) -> list[tuple[str, Prompt]]:
        watch = Stopwatch()
        prompts = [(name, masked_item(p, ("title", "description"))) for name, p in self.catalogue().prompts.items()]
        self._audit_listing(caller, "prompts/list", [name for name, _prompt in prompts], watch)
        return prompts

    async def get_prompt(self, name: str, arguments: Mapping[str, Any] | None, caller: Caller = Caller()) -> Answer:
        watch = Stopwatch()
        snapshot = self.snapshot()
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


def _noted(answer: Answer, note: str | None) -> Answer:
    """The answer with the refresh's one line after it (an error is left as it is: its sentence comes first)."""
    if not note or answer.is_error:
        return answer
    return attrs.evolve(answer, text=f"{answer.text}\n{note}" if answer.text else note)


def _answer_of(bound: Any) -> Any:
    """On a worker: the function's answer, masked there too; an awaitable it returned is left to the loop."""
    result = bound()
    return result if inspect.isawaitable(result) else masked_answer(Answer.of(result))


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
    from gateway.config import config_choice

    folders = Folders.from_environment()
    path, explicit = (config_file, True) if config_file else config_choice(folders.config)
    registry = Registry(folders, plugins=plugins or (), entrypoints=entrypoints)
    return Gateway(registry, ConfigSource(path, explicit=explicit), folders, AuditLog(folders.state / "audit"))


def _arguments(names: list[str]) -> str:
    return "argument" if len(names) == 1 else "arguments"
