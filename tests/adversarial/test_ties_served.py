"""Ties are read through the core, played through a real `gateway serve`: a thing one plugin's tie store places in a
closed project is kept by another plugin's list and read too (as the spam filter's envelopes of a tied message
must be), and a tie store that cannot be read makes the calls fail, never give."""

from __future__ import annotations

import json
import sqlite3

import anyio
import pytest

from gateway.testing import folders_of, installed_plugin, serve_client, write_config

CANARY = "sorrelcanary"

KEEPER = '''
import sqlite3
from gateway import hookimpl


@hookimpl
def tied_projects(gateway, addresses):
    with sqlite3.connect(gateway.folders.data / "ties.sqlite3") as db:
        marks = ",".join("?" * len(addresses))
        found = {}
        for address, project in db.execute(
                f"SELECT address, project FROM ties WHERE address IN ({marks})", list(addresses)):
            found.setdefault(address, []).append(project)
        return found
'''

LISTER = '''
from gateway import Answer, Traits, hookimpl, left_out_sentence, tool

ENVELOPES = {"mid:1@example.com": "the CANARY matter", "mid:2@example.com": "lunch on friday"}


def _owners(ctx, addresses):
    tied = ctx.tied(addresses)
    return {a: ctx.gate.owners(Traits(projects=tied.get(a, ()))) for a in addresses}


@tool(read_only=True)
def list_envelopes(ctx) -> Answer:
    """Every envelope's subject."""
    owners = _owners(ctx, list(ENVELOPES))
    kept = ctx.gate.keep(list(ENVELOPES), lambda a: owners[a])
    lines = [f"{a}: {ENVELOPES[a]}" for a in kept.items] + [left_out_sentence(kept.left_out, "envelope")]
    return Answer(text="\\n".join(lines), left_out=kept.left_out)


@tool(read_only=True)
def read_envelope(ctx, address: str) -> str:
    """One envelope's subject."""
    ctx.gate.check_read(_owners(ctx, [address])[address], f"the envelope {address}", address=address)
    return ENVELOPES[address]


@hookimpl
def register_tools(gateway):
    return [list_envelopes, read_envelope]
'''.replace("CANARY", CANARY)


@pytest.fixture
def home(gateway_home, tmp_path):
    env = installed_plugin(tmp_path / "site", "keeper", KEEPER)
    installed_plugin(tmp_path / "site", "lister", LISTER)
    ties = folders_of(gateway_home).for_plugin("keeper").data / "ties.sqlite3"
    ties.parent.mkdir(parents=True)
    with sqlite3.connect(ties) as db:
        db.execute("CREATE TABLE ties(address TEXT, project TEXT)")
        db.execute("INSERT INTO ties VALUES ('mid:1@example.com', 'LAWSUIT')")  # ids without case
    write_config(gateway_home, {"gateway": {"plugins": ["keeper", "lister"]}},
                 projects=[{"id": "lawsuit", "name": "Dispute"}])
    return gateway_home, env, ties


def _text(result) -> str:
    return json.dumps(result.model_dump(mode="json"), ensure_ascii=False)


def test_a_tie_kept_by_one_plugin_keeps_the_thing_in_another(home):
    gateway_home, env, ties = home

    async def session():
        async with serve_client(gateway_home, extra_env=env) as client:
            listed = await client.call_tool("list_envelopes", {})
            read = await client.call_tool("read_envelope", {"address": "mid:1@example.com"})
            other = await client.call_tool("read_envelope", {"address": "mid:2@example.com"})
            ties.write_bytes(b"this is no database")  # the tie store broken while the server runs
            broken = [await client.call_tool("list_envelopes", {}),
                      await client.call_tool("read_envelope", {"address": "mid:1@example.com"})]
            return listed, read, other, broken

    listed, read, other, broken = anyio.run(session)
    assert CANARY not in _text(listed) and "1 envelope left out" in _text(listed) and "lunch" in _text(listed)
    assert read.is_error and CANARY not in _text(read)
    assert "gateway access why mid:1@example.com" in _text(read)
    assert not other.is_error and "lunch" in _text(other)
    for answer in broken:
        assert answer.is_error and CANARY not in _text(answer) and "ties cannot be read" in _text(answer)
