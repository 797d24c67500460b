"""The traits the mail plugin gives the gate: asked in parts, they decide as the whole traits do; what `traits_of`,
`census` and `notes_of` say for the person; the index made again for the new columns; authserv_id changes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import gateway_mail
import pytest
from gateway_mail.mail import gating, index, store
from gateway_mail.projects import described
from gateway_mail.projects import sample as traits_sample
from gateway_mail.projects.placing import Placer
from maildirs.conversations import Conversations

from gateway import Gate, Person, PluginHost, Project, Traits
from gateway.api.context import Context
from gateway.gate.access import Manifest
from gateway.testing import folders_of, make_gateway

CANARY = "marramgrasscanary"


@pytest.fixture
def world(gateway_home: Path) -> dict:
    return traits_sample.world(gateway_home, CANARY)


def _gate(made: dict, **changes) -> Gate:
    projects = [Project(**{k: tuple(v) if isinstance(v, list) else v for k, v in p.items()}) for p in made["projects"]]
    return Gate(Manifest(tuple(projects)), **changes)


def _host(home: Path, made: dict) -> PluginHost:
    return PluginHost("mail", folders_of(home).for_plugin("mail"), made["config"]["plugins"]["mail"])


def _ctx(home: Path, made: dict, gate: Gate) -> Context:
    return Context(plugin="mail", settings=made["config"]["plugins"]["mail"],
                   folders=folders_of(home).for_plugin("mail"), gate=gate)


def test_the_parts_decide_as_the_whole_traits_do(gateway_home: Path, world: dict) -> None:
    """Each message's owners asked in parts (gating) equal the gate's answer on its whole traits, conversations
    joined the same way; and the closed project takes every message the world placed in it."""
    gate = _gate(world)
    ctx = _ctx(gateway_home, world, gate)
    with store.opened(ctx) as mail:
        rows = mail.connection.execute("SELECT * FROM messages").fetchall()
        dirs = gating.folder_paths(mail.accounts)
        whole = {}
        for row in rows:
            body = mail.connection.execute("SELECT body FROM messages_fts WHERE rowid = ?", (row["id"],)).fetchone()[0]
            whole[row["id"]] = gate.owners(gating.message_traits(
                mail.account(row["account"]), dirs[(row["account"], row["folder"])], row, body))
        conversations = Conversations()
        for row in rows:
            conversations.add(row["refs"].split(), whole[row["id"]])
        expected = {row["id"]: whole[row["id"]] | conversations.owners_of(row["refs"].split()) for row in rows}
        assert {i: o for i, o in expected.items() if o} == mail.verdicts.owners
        by_role = {role: next(r["id"] for r in rows if r["message_id"] == mid) for role, mid in world["ids"].items()}
    for role in ("sender", "unproven", "subject", "body", "attachment", "folder", "reply", "sent", "account"):
        assert "lawsuit" in mail.verdicts.owners.get(by_role[role], ()), role
        assert by_role[role] in mail.verdicts.closed, role
    assert mail.verdicts.owners.get(by_role["open"]) == {"garden"} and by_role["outside"] not in mail.verdicts.closed


def test_an_open_sender_route_needs_proof_and_a_closed_one_does_not(gateway_home: Path, world: dict) -> None:
    opened = [{**p, "ai": True} if p["id"] == "lawsuit" else p for p in world["projects"]]
    gate = _gate({"projects": opened}, outside_projects=False)
    with store.opened(_ctx(gateway_home, world, gate)) as mail:
        ids = {r["message_id"]: r["id"] for r in mail.connection.execute("SELECT id, message_id FROM messages")}
        # Authenticated by the account's own server: placed in the open project (so given while outside is closed).
        assert ids[world["ids"]["sender"]] not in mail.verdicts.closed
        # The same domain unauthenticated: of no project, so kept while things outside projects are closed.
        assert ids[world["ids"]["unproven"]] in mail.verdicts.closed
        # The person's own sent mail to the lawyer: its recipient is proven.
        assert ids[world["ids"]["sent"]] not in mail.verdicts.closed


def test_text_candidates_come_from_the_index_per_route_word(gateway_home: Path, world: dict) -> None:
    assert gating.fts_query("ACME-2291") == '"acme"* + "2291"*'
    assert gating.fts_query("Smith v. Jones") == '"smith"* + "v"* + "jones"*'
    assert gating.fts_query("--") is None
    gate = _gate(world)
    with store.opened(_ctx(gateway_home, world, gate)) as mail:
        found = gating.text_candidates(mail.connection, Placer(gate))
        ids = {r["id"]: r["message_id"] for r in mail.connection.execute("SELECT id, message_id FROM messages")}
    assert world["ids"]["body"] in {ids[i] for i in found}  # `acme-2291` in its text only
    assert world["ids"]["outside"] not in {ids[i] for i in found}


@pytest.mark.parametrize(("words", "asked"), [
    (("ticket acme-[code] today",), True),  # the route's letters are there, its digits may be behind the code
    (("hello [code] world",), False),  # a code hides no letter: `acme` cannot be behind it
    (("see [link]",), True),  # any other label may hide anything
    (("nothing here",), False),
])
def test_words_are_asked_about_only_when_a_closed_route_could_be_in_them(words, asked) -> None:
    gate = Gate(Manifest((Project("lawsuit", subjects=("ACME-2291",)),)))
    assert Placer(gate).may_take_words(words) is asked
    # The prefilter never hides what the gate takes.
    if not asked:
        assert gate.owners(Traits(words=words)) == frozenset()
    digits_only = Placer(Gate(Manifest((Project("codes", subjects=("2291",)),))))
    assert digits_only.may_take_words(("hello [code] world",))


def test_traits_of_names_the_route_for_every_kind_of_address(gateway_home: Path, world: dict) -> None:
    gate = _gate(world)
    host = _host(gateway_home, world)
    expected = {
        f"mid:{world['ids']['reply']}": "senders",  # by its conversation: the lawyer's message it answers
        f"mid:{world['ids']['body']}": "subjects",
        f"mid:{world['ids']['folder']}": "folders",
        f"mid:{world['ids']['account']}": "paths",
        "sioul:task/t-refid": "project",
        "sioul:task/t-list": "paths",
        "sioul:event/e-organizer": "senders",
        "sioul:event/e-calendar": "paths",
        "sioul:contact/lee-1": "senders",
        "sioul:contact/ria-1": "project",
        "sioul:note/Elsewhere.md": "paths",  # hard-linked out of the project's folder
        "sioul:project/lawsuit": "project",
    }
    for address, kind in expected.items():
        traits = described.traits_of(host, address, gate)
        assert traits is not None, address
        if address != "sioul:contact/ria-1":  # the hook, without a gate: only a card's client needs one
            assert gateway_mail.traits_of(host, address) == traits, address
        took = [r for r in gate.explain(traits) if r.took and r.project == "lawsuit"]
        assert kind in {r.kind for r in took}, (address, took)
    assert gateway_mail.traits_of(host, "mid:nobody@example.org") is None
    assert gateway_mail.traits_of(host, "sioul:task/none") is None
    assert gateway_mail.traits_of(host, "https://example.org") is None


def test_census_gives_every_thing_with_its_source(gateway_home: Path, world: dict) -> None:
    host = _host(gateway_home, world)
    sources = [source for source, _traits in gateway_mail.census(host)]
    assert sources.count("mail account personal") == 10 and sources.count("mail account work") == 1
    assert {"task list home", "task list legal", "calendar court", "calendar personal", "address book default",
            "notes"} <= set(sources)
    gate = _gate(world)
    taken = [source for source, traits in described.census(host, gate) if "lawsuit" in gate.owners(traits)]
    assert "task list legal" in taken and "notes" in taken and "mail account work" in taken


def test_an_account_without_authserv_id_is_said_for_open_sender_routes(gateway_home: Path, world: dict) -> None:
    opened = [{**p, "ai": True} if p["id"] == "lawsuit" else p for p in world["projects"]]
    host, gate = _host(gateway_home, world), _gate({"projects": opened})
    notes = described.notes_of(host, f"mid:{world['ids']['account']}", gate)  # the work account: no authserv_id
    assert [(n.kind, n.route, n.took) for n in notes] == [("senders", "@law.example.net", False)]
    assert notes[0].why_not == "not used to open mail of account work: it has no authserv_id"
    assert described.notes_of(host, f"mid:{world['ids']['sender']}", gate) == []


def test_an_index_made_before_the_traits_columns_is_made_again(gateway_home: Path, world: dict) -> None:
    served = make_gateway([gateway_mail], home=gateway_home, config=world["config"], projects=world["projects"])
    assert not served.call("search_mail", {"query": "plumtree"}).is_error
    path = index.index_path(folders_of(gateway_home).for_plugin("mail").cache)
    with sqlite3.connect(path) as old:
        old.execute("ALTER TABLE messages DROP COLUMN labels")
    connection = index.connect(path)
    assert connection.execute("SELECT count(*) FROM messages").fetchone()[0] == 0
    assert "labels" in {r[1] for r in connection.execute("PRAGMA table_info(messages)")}
    connection.close()
    answer = served.call("search_mail", {"query": "plumtree"})
    assert not answer.is_error and answer.data["left_out"] == 9


def test_changing_authserv_id_reads_the_accounts_mail_again(gateway_home: Path, world: dict) -> None:
    config = world["config"]
    unset = {**config, "plugins": {"mail": {**config["plugins"]["mail"], "accounts": [
        {**config["plugins"]["mail"]["accounts"][0], "authserv_id": ""}, config["plugins"]["mail"]["accounts"][1]]}}}
    opened = [{**p, "ai": True} for p in world["projects"]]
    message = {"address": f"mid:{world['ids']['sender']}"}
    before = make_gateway([gateway_mail], home=gateway_home, config=unset, projects=opened).call("read_message", message)
    assert before.data["authentication"].startswith("not checked")
    after = make_gateway([gateway_mail], home=gateway_home, config=config, projects=opened).call("read_message", message)
    assert after.data["authentication"] == "authenticated by the account's own server"


def test_ties_are_read_for_any_plugin_that_asks(gateway_home: Path, world: dict) -> None:
    from gateway_mail.projects.ties import Ties

    ctx = _ctx(gateway_home, world, _gate(world))
    with Ties.open(ctx) as ties:
        ties.add("mid:outside@example.org", "sioul:project/lawsuit")
    host = _host(gateway_home, world)
    found = gateway_mail.tied_projects(host, ["mid:outside@example.org", "<outside@example.org>", "mid:none@example.org"])
    assert found == {"mid:outside@example.org": ["lawsuit"]}
    with store.opened(ctx) as mail:  # and the mail index keeps the tied message with its project
        row = mail.connection.execute("SELECT id FROM messages WHERE message_id = 'outside@example.org'").fetchone()
        assert row["id"] in mail.verdicts.closed


@pytest.mark.parametrize("route", ["@law.example.net", "law.example.net", "lee@law.example.net",
                                   "Lee Lawyer <lee@law.example.net>", "mailto:lee@law.example.net", "LEE@Law.example.NET"])
def test_people_are_asked_about_for_every_way_a_sender_route_is_written(route) -> None:
    gate = Gate(Manifest((Project("lawsuit", senders=(route,)),)))
    person = (Person("Lee <lee@law.example.net>"),)
    assert Placer(gate).people(person) == gate.owners(Traits(people=person))
    if "<" not in route and not route.startswith("mailto:"):  # forms the gate reads as an address or a domain
        assert Placer(gate).people(person) == {"lawsuit"}
