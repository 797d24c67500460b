"""The public closed-project kit can fail: a plugin that gives a closed thing, one whose list hides that it left
something out, and samples that hold no canary are each caught, through a real `gateway serve`."""

from __future__ import annotations

import pytest

from gateway.testing import CanaryLeak, Sample, check_closed_project, installed_plugin

SOURCE = """
from gateway import Answer, Traits, hookimpl, tool

THINGS = {{"plan": "/srv/vault/plan.md", "menu": "/srv/open/menu.md"}}
WORDS = {{"plan": "the {canary} plan", "menu": "soup"}}


def _owners(ctx, name):
    return ctx.gate.owners(Traits(paths=[THINGS[name]]))


@tool(read_only=True)
def list_things(ctx) -> Answer:
    '''Every thing.'''
    kept = ctx.gate.keep(list(THINGS), lambda name: _owners(ctx, name))
    return Answer(text=", ".join(kept.items), left_out={left_out})


@tool(read_only=True)
def read_thing(ctx, name: str) -> str:
    '''One thing.'''
    if {gated}:
        ctx.gate.check_read(_owners(ctx, name), f"the thing {{name}}")
    return WORDS[name]


@hookimpl
def register_tools(gateway):
    return [list_things, read_thing]
"""

CANARY = "medlarcanary"


def _check(home, tmp_path, *, gated=True, left_out="kept.left_out", canary=CANARY):
    env = installed_plugin(tmp_path / "site", "things",
                           SOURCE.format(canary=CANARY, gated=gated, left_out=left_out))
    return check_closed_project(home, plugin="things", canary=canary, samples=[Sample("paths", "/srv/vault")],
                                calls={"read_thing": [{"name": "plan"}, {"name": "menu"}]},
                                lists=[("list_things", {})], extra_env=env)


def test_a_plugin_that_keeps_its_closed_things_passes(gateway_home, tmp_path):
    report = _check(gateway_home, tmp_path)
    assert report.left_out == {"list_things {}": 1} and report.answers >= 3


def test_a_plugin_that_gives_a_closed_thing_is_caught(gateway_home, tmp_path):
    with pytest.raises(CanaryLeak, match="read_thing"):
        _check(gateway_home, tmp_path, gated=False)


def test_a_list_that_hides_what_it_left_out_is_caught(gateway_home, tmp_path):
    with pytest.raises(CanaryLeak, match="did not say it left something out"):
        _check(gateway_home, tmp_path, left_out="0")


def test_samples_that_hold_no_canary_prove_nothing_and_say_so(gateway_home, tmp_path):
    with pytest.raises(AssertionError, match="the samples prove nothing"):
        _check(gateway_home, tmp_path, canary="nowhere-to-be-found")


def test_a_sample_of_no_route_kind_is_refused():
    with pytest.raises(ValueError, match="no route kind"):
        Sample("path", "/srv/vault")
