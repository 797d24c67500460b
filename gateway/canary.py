"""The closed-project check a plugin runs on itself: a canary in things placed by each route kind, never given.

The plugin's test writes a few things into a test home, each holding one canary word and placed in a project by
a route of some kind (a file under a `paths` route, a message from a `senders` address, a list named by a `lists`
route...), and declares them as `Sample`s. `check_closed_project` then serves the plugin through a real `gateway
serve` twice, talking to it with the MCP SDK's client as a host would:

- with the project **open**: the canary must be in some answer (else the samples prove nothing);
- with the project **closed**: every tool (with each argument set given, or none when it needs none), every
  resource listed or named, every prompt given: the canary is in no answer, no error, no resource list; and each
  call named in `lists` says it left something out (its audit line's ``left_out``).

Use it from a pytest test (``gateway_home`` is the test home fixture)::

    from gateway.testing import Sample, check_closed_project

    def test_a_closed_project_is_never_shown(gateway_home):
        write_my_things(gateway_home, canary="quinceCANARY")
        report = check_closed_project(
            gateway_home, plugin="hello", canary="quinceCANARY",
            samples=[Sample("paths", str(gateway_home / "cards" / "secret"))],
            calls={"read_card": [{"name": "secret/plan"}]}, lists=[("list_cards", {})])
        assert report.answers > 3
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
from attrs import define, field, frozen

from gateway.gate.access import ROUTE_KINDS

PROJECT = "canary-project"


@frozen
class Sample:
    """One thing of the plugin, holding the canary, placed in the project by the route `route` of kind `kind`
    (``paths``, ``senders``, ``subjects``, ``folders``, ``apps``, ``urls``, ``accounts``, ``lists``,
    ``calendars``, ``addressbooks``); `what` names it in failures."""

    kind: str
    route: str
    what: str = ""

    def __attrs_post_init__(self) -> None:
        if self.kind not in ROUTE_KINDS:
            raise ValueError(f"Sample kind {self.kind!r} is no route kind; known: {', '.join(ROUTE_KINDS)}")


@define
class CanaryReport:
    """What the check asked and found: how many answers were read with the project closed, and which calls'
    audit lines said they left something out."""

    answers: int = 0
    calls: list[str] = field(factory=list)
    left_out: dict[str, int] = field(factory=dict)


class CanaryLeak(AssertionError):
    """A closed project's canary reached an agent, or a list did not say it left something out."""


def check_closed_project(
    home: Path,
    *,
    plugin: str,
    canary: str,
    samples: Sequence[Sample],
    calls: Mapping[str, Iterable[Mapping[str, Any]]] | None = None,
    addresses: Iterable[str] = (),
    prompts: Mapping[str, Iterable[Mapping[str, Any]]] | None = None,
    lists: Iterable[tuple[str, Mapping[str, Any]]] = (),
    settings: Mapping[str, Any] | None = None,
    extra_env: Mapping[str, str] | None = None,
    outside_projects: bool = True,
) -> CanaryReport:
    """Serve `plugin` (installed, found by its entry point) on `home` with one project holding every sample's
    route, open then closed; raise CanaryLeak when the closed project's canary is given or a list hides that it
    left something out. `calls` gives argument sets per tool (a tool not named is called with none when it needs
    none); `addresses` resource URIs to read besides those listed; `prompts` argument sets per prompt."""
    if not samples:
        raise ValueError("declare at least one Sample: a thing holding the canary and the route that places it")
    from gateway.served import write_config

    routes: dict[str, list[str]] = {}
    for sample in samples:
        routes.setdefault(sample.kind, []).append(sample.route)
    config = {"gateway": {"plugins": [plugin]}, "access": {"outside_projects": outside_projects},
              **({"plugins": {plugin: dict(settings)}} if settings else {})}

    def serve(opened: bool) -> list[tuple[str, str]]:
        write_config(home, config, projects=[{"id": PROJECT, "name": "Canary", "ai": opened, **routes}])
        return anyio.run(_everything, home, plugin, calls or {}, list(addresses), prompts or {}, list(lists),
                         dict(extra_env or {}))

    opened = serve(True)
    if not any(canary in text for _call, text in opened):
        raise AssertionError(
            f"with the project open, no answer of {plugin} holds the canary {canary!r}: the samples prove nothing "
            f"(are the things written in the test home, and do the calls reach them?). Calls: "
            f"{', '.join(call for call, _text in opened)}")
    closed = serve(False)
    report = CanaryReport(answers=len(closed), calls=[call for call, _text in closed])
    leaks = [f"{call}: {text[:300]}" for call, text in closed if canary in text]
    if leaks:
        raise CanaryLeak(f"the closed project's canary was given by {len(leaks)} answer(s):\n" + "\n".join(leaks))
    for call, text in closed:
        if call.startswith(_LEFT_OUT):
            label, count = call[len(_LEFT_OUT):], int(text)
            report.left_out[label] = count
            if count < 1:
                raise CanaryLeak(f"{label} did not say it left something out (its audit line's left_out is "
                                 f"{count}): a list must count what the gate kept back")
    report.answers = sum(1 for call, _text in closed if not call.startswith(_LEFT_OUT))
    return report


_LEFT_OUT = "left out by "


async def _everything(
    home: Path, plugin: str, calls: Mapping[str, Iterable[Mapping[str, Any]]], addresses: list[str],
    prompts: Mapping[str, Iterable[Mapping[str, Any]]], lists: list[tuple[str, Mapping[str, Any]]],
    extra_env: dict[str, str],
) -> list[tuple[str, str]]:
    """(call, all the host received) for every tool, resource and prompt the plugin offers."""
    from gateway.served import listed_resources, read_audit, serve_client

    answers: list[tuple[str, str]] = []

    async def asked(label: str, call: Any) -> None:
        try:
            answers.append((label, _text(await call)))
        except Exception as refusal:  # noqa: BLE001 - an error is an answer too: it must hold no canary
            answers.append((label, str(refusal)))

    async with serve_client(home, extra_env=extra_env) as client:
        for name, arguments in lists:
            label = f"{name} {json.dumps(dict(arguments))}"
            await asked(label, client.call_tool(name, dict(arguments)))
            # The server writes a call's audit line before it answers: the last line of this tool is this call's.
            entry = next((e for e in reversed(read_audit(home)) if e.get("tool") == name), {})
            answers.append((_LEFT_OUT + label, str(entry.get("left_out") or 0)))
        for tool in (await client.list_tools()).tools:
            argument_sets = [dict(a) for a in calls.get(tool.name, ())]
            if not argument_sets and not (tool.input_schema or {}).get("required"):
                argument_sets = [{}]
            for arguments in argument_sets:
                await asked(f"{tool.name} {json.dumps(arguments)}", client.call_tool(tool.name, arguments))
        resources = await listed_resources(client)
        answers.append(("resources/list", json.dumps([r.model_dump(mode="json") for r in resources],
                                                     ensure_ascii=False)))
        for uri in dict.fromkeys([str(r.uri) for r in resources] + addresses):
            await asked(f"resources/read {uri}", client.read_resource(uri))
        for prompt in (await client.list_prompts()).prompts:
            argument_sets = [dict(a) for a in prompts.get(prompt.name, ())]
            if not argument_sets and not any(a.required for a in prompt.arguments or []):
                argument_sets = [{}]
            for arguments in argument_sets:
                await asked(f"prompts/get {prompt.name}", client.get_prompt(prompt.name, arguments))
    return answers


def _text(result: Any) -> str:
    """Everything a host receives in one result, as text."""
    try:
        return json.dumps(result.model_dump(mode="json"), ensure_ascii=False)
    except AttributeError:
        return str(result)
