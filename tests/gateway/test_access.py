"""The consent gate: closed until opened, both owners open, outside projects, routes, refusals."""

from __future__ import annotations

import os

import pytest

from gateway import ToolError
from gateway.api.items import Refused
from gateway.gate.access import Gate, Manifest, ManifestError, place_of


def manifest(*projects):
    return Manifest.from_dict({"project": list(projects)})


OPEN = {"id": "garden", "name": "Garden", "ai": True, "paths": ["/home/ada/garden", "/srv/shared/20*"], "apps": ["Planner"],
        "urls": ["garden.example.org/board"], "senders": ["@garden.example.org"], "subjects": ["[garden]"]}
CLOSED = {"id": "lawsuit", "name": "Dispute", "paths": ["/home/ada/lawsuit"], "senders": ["lee@law.example.net"]}


def test_a_project_is_closed_until_opened():
    gate = Gate(manifest(CLOSED))
    assert not gate.allows({"lawsuit"})


def test_an_item_in_two_projects_needs_both_open():
    gate = Gate(manifest(OPEN, CLOSED))
    assert gate.allows({"garden"})
    assert not gate.allows({"garden", "lawsuit"})


def test_things_in_no_project_follow_outside_projects():
    assert Gate(manifest(OPEN), outside_projects=True).allows(set())
    assert not Gate(manifest(OPEN), outside_projects=False).allows(set())


def test_an_owner_taken_out_of_the_manifest_leaves_its_things_in_no_project():
    assert Gate(manifest(OPEN), outside_projects=True).allows({"gone"})
    assert not Gate(manifest(OPEN), outside_projects=False).allows({"gone"})


@pytest.mark.parametrize(
    ("traits", "owners"),
    [
        ({"path": "/home/ada/garden/src/main.py"}, {"garden"}),
        ({"path": "/home/ada/gardening"}, set()),
        ({"path": "/home/ada/lawsuit"}, {"lawsuit"}),
        ({"app": "planner"}, {"garden"}),
        ({"url": "https://garden.example.org/board/42"}, {"garden"}),
        ({"url": "https://garden.example.org/other"}, set()),
        ({"url": "https://evil-garden.example.org.example.com/board"}, set()),
        ({"sender": "bo@garden.example.org"}, {"garden"}),
        ({"sender": "lee@law.example.net"}, {"lawsuit"}),
        ({"sender": "kim@law.example.net"}, set()),
        ({"subject": "Re: [Garden] tools"}, {"garden"}),
        ({"path": "/home/ada/garden/../lawsuit/x"}, {"lawsuit"}),
        ({"path": "/srv/shared/2026/plans"}, {"garden"}),
        ({"path": "/srv/shared/plans"}, set()),
    ],
    ids=lambda v: str(v),
)
def test_routes_place_items_in_projects(traits, owners):
    assert Gate(manifest(OPEN, CLOSED)).owners_of(**traits) == owners


def test_a_list_leaves_out_and_counts():
    gate = Gate(manifest(OPEN, CLOSED))
    items = [{"p": {"garden"}}, {"p": {"lawsuit"}}, {"p": set()}, {"p": {"lawsuit"}}]
    kept = gate.keep(items, lambda item: item["p"])
    assert len(kept.items) == 2 and kept.left_out == 2


def test_a_refusal_names_no_project_and_keeps_the_owners_for_the_person():
    gate = Gate(manifest(OPEN, CLOSED))
    with pytest.raises(Refused) as caught:
        gate.check_read({"lawsuit", "garden"}, "session 7")
    text = str(caught.value)
    assert "session 7" in text and "only the person can open it" in text and "gateway access why" in text
    for named in ("lawsuit", "Dispute", "garden", "Garden"):
        assert named not in text and named not in repr(caught.value)
    assert caught.value.owners == {"lawsuit", "garden"}
    assert isinstance(caught.value, ToolError)


def test_a_refusal_is_the_same_sentence_whatever_keeps_the_item():
    # Saying "in no project" rather than "in a closed project" would tell where the item lives.
    in_project = Gate(manifest(CLOSED)).refusal({"lawsuit"}, "it")
    outside = Gate(manifest(), outside_projects=False).refusal(set(), "it")
    assert in_project == outside
    with pytest.raises(Refused, match="outside_projects = true"):
        Gate(manifest(), outside_projects=False).check_write(set(), "a new note")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"project": [{"name": "no id"}]}, "needs an id"),
        ({"project": [{"id": "a", "colour": "red"}]}, "unknown key colour"),
        ({"project": [{"id": "a"}, {"id": "a"}]}, "used twice"),
        ({"project": [{"id": "a", "ai": "yes"}]}, "ai must be true or false"),
        ({"project": [{"id": "a", "paths": [1]}]}, "paths must be a list of strings"),
        ({"projects": []}, "unknown key projects"),
    ],
)
def test_a_bad_manifest_is_refused_saying_what_is_wrong(data, message):
    with pytest.raises(ManifestError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Manifest.from_dict(data)


def test_a_broken_manifest_file_closes_everything_and_is_said(gateway_home):
    from gateway import Tool
    from gateway.testing import inline_plugin, make_gateway

    def hello() -> str:
        return "hi"

    gw = make_gateway([inline_plugin("a", tools=[Tool.from_function(hello)])], home=gateway_home)
    (gw.source.path.parent / "projects.toml").write_text("[[project]\nid=")
    answer = gw.call("hello")
    assert answer.is_error and "projects manifest" in answer.text


# --- routes match what the computer means -----------------------------------------------------------------


@pytest.fixture
def links(tmp_path):
    """A closed folder, an open one holding a link into the closed one, and a linked way to the closed one."""
    real = tmp_path / "real"
    (real / "lawsuit" / "letters").mkdir(parents=True)
    (real / "garden").mkdir()
    (real / "garden" / "shortcut").symlink_to(real / "lawsuit" / "letters")
    (tmp_path / "via").symlink_to(real)
    return tmp_path


@pytest.mark.parametrize(
    ("route", "item", "owned"),
    [
        # An item whose path is a link into the closed folder.
        ("{t}/real/lawsuit", "{t}/real/garden/shortcut", True),
        ("{t}/real/lawsuit", "{t}/real/garden/shortcut/draft.txt", True),
        # A route written through a linked folder, items carrying the physical path.
        ("{t}/via/lawsuit", "{t}/real/lawsuit/letters/x.txt", True),
        # ... and the other way round, and globs written through the link.
        ("{t}/real/lawsuit", "{t}/via/lawsuit/letters", True),
        ("{t}/via/law*", "{t}/real/lawsuit/letters", True),
        # ".." taken as the computer takes it: after following the link.
        ("{t}/real/lawsuit", "{t}/real/garden/shortcut/../x", True),
        ("{t}/real/lawsuit", "{t}/real/garden/x", False),
        ("{t}/real/lawsuit", "{t}/real/lawsuitx", False),
        # Paths that do not exist here are still compared as written.
        ("/nowhere/lawsuit", "/nowhere/lawsuit/a", True),
        ("/nowhere/lawsuit", "//nowhere/lawsuit/a", True),
    ],
)
def test_paths_are_compared_after_resolving_links_as_well_as_literally(links, route, item, owned):
    gate = Gate(manifest({"id": "lawsuit", "paths": [route.format(t=links)]}))
    assert gate.owners_of(path=item.format(t=links)) == ({"lawsuit"} if owned else set())


def test_a_link_changed_while_serving_is_seen_once_links_are_forgotten(links):
    from gateway.gate.routes import forget_links

    gate = Gate(manifest({"id": "lawsuit", "paths": [f"{links}/real/lawsuit"]}))
    moving = links / "moving"
    moving.symlink_to(links / "real" / "garden")
    assert gate.owners_of(path=str(moving)) == set()
    moving.unlink()
    moving.symlink_to(links / "real" / "lawsuit")
    forget_links()  # what reading the config or manifest again does
    assert gate.owners_of(path=str(moving)) == {"lawsuit"}


def test_a_tilde_route_means_the_account_home_and_home_both(monkeypatch, tmp_path):
    import pwd

    account = pwd.getpwuid(os.getuid()).pw_dir
    monkeypatch.setenv("HOME", str(tmp_path / "elsewhere"))
    gate = Gate(manifest({"id": "vault", "paths": ["~/src/vault"]}))
    assert gate.owners_of(path=f"{account}/src/vault/notes.md") == {"vault"}
    assert gate.owners_of(path=f"{tmp_path}/elsewhere/src/vault") == {"vault"}
    assert gate.owners_of(path=f"{account}/src/vaults") == set()


@pytest.mark.parametrize(
    ("route", "url", "owned"),
    [
        ("garden.example.org/board", "https://GARDEN.Example.ORG/board/1", True),
        ("garden.example.org/board", "https://garden.example.org./board", True),
        ("garden.example.org/board", "https://garden.example.org/%62oard/2", True),
        ("garden.example.org/board", "https://garden.example.org/x/../board", True),
        ("garden.example.org/board", "https://garden.example.org//board//3", True),
        ("garden.example.org/board", "https://garden.example.org/./board", True),
        ("garden.example.org/board", "https://garden.example.org:443/board", True),
        ("garden.example.org/board", "https://garden.example.org/Board", True),
        ("garden.example.org/board", "https://garden.example.org\\board", True),
        ("garden.example.org/board", "https://u@garden.example.org/board", True),
        ("https://garden.example.org:443/board", "garden.example.org/board", True),
        ("garden.example.org/board", "https://sub.garden.example.org/board", True),
        ("garden.example.org/board", "https://garden.example.org/boardgames", False),
        ("garden.example.org/board", "https://garden.example.org/other", False),
        ("garden.example.org/board", "https://garden.example.org.evil.example.com/board", False),
        ("garden.example.org/board", "https://garden.example.org@evil.example.com/board", False),
        ("localhost:3000", "http://localhost:3000/a", True),
        ("localhost:3000", "http://localhost:4000/a", False),
        ("garden.example.org", "about:blank", False),
    ],
)
def test_urls_are_compared_after_normalising(route, url, owned):
    gate = Gate(manifest({"id": "g", "urls": [route]}))
    assert gate.owners_of(url=url) == ({"g"} if owned else set())


@pytest.mark.parametrize(
    ("route", "app", "owned"),
    [
        ("Signal", "Signal", True),
        ("Signal", "Signal Desktop", True),
        ("Signal", "signal-desktop", True),
        ("signal desktop", "Signal-Desktop", True),
        ("Signal", "Signalis", False),
        ("Signal Desktop", "Signal", False),
        ("Signal", "My Signal", False),
    ],
)
def test_an_app_route_takes_the_name_and_the_name_followed_by_more_words(route, app, owned):
    gate = Gate(manifest({"id": "s", "apps": [route]}))
    assert gate.owners_of(app=app) == ({"s"} if owned else set())


def test_closing_wins_when_an_item_is_in_an_open_and_a_closed_project(links):
    gate = Gate(manifest({"id": "garden", "ai": True, "paths": [f"{links}/real/garden"]},
                         {"id": "lawsuit", "paths": [f"{links}/real/lawsuit"]}))
    owners = gate.owners_of(path=f"{links}/real/garden/shortcut/x")
    assert owners == {"garden", "lawsuit"} and not gate.allows(owners)


# --- where a project is written, for the person --------------------------------------------------------------

MANIFEST_TEXT = """# my projects
[[project]]
id = "garden"
ai = true

[[project]]  # the hard one
name = "Dispute"
id = "lawsuit"
paths = [
  "/srv/lawsuit",
]
ai = false
"""


def test_place_of_finds_the_entry_and_its_ai_line():
    assert place_of(MANIFEST_TEXT, "lawsuit").entry == 6 and place_of(MANIFEST_TEXT, "lawsuit").ai == 12
    assert place_of(MANIFEST_TEXT, "garden").entry == 2 and place_of(MANIFEST_TEXT, "garden").ai == 4
    assert place_of('project = [{id = "x"}]\n', "x").entry == 1
    assert place_of(MANIFEST_TEXT, "ghost").entry == 0


# --- gateway access why / list --------------------------------------------------------------------------------


def _keeper_plugin():
    from gateway import Resource, ResourceTemplate, Tool
    from gateway.testing import inline_plugin

    def read_note(ctx, path: str) -> str:
        """A note, by its path."""
        ctx.gate.check_read(ctx.gate.owners_of(path=path), f"the note {path}")
        return "the note's words"

    def note(ctx, path: str) -> str:
        return read_note(ctx, "/" + path)

    return inline_plugin(
        "notes",
        tools=[Tool.from_function(read_note, read_only=True)],
        templates=[ResourceTemplate("notes://{path}", "note", note)],
        resources=[Resource("notes://index", "index", lambda: "an index")],
    )


@pytest.fixture
def why_home(gateway_home, monkeypatch):
    from gateway.testing import write_config

    config = write_config(gateway_home, {"gateway": {"plugins": ["notes"]}, "access": {"outside_projects": False}})
    (config.parent / "projects.toml").write_text(MANIFEST_TEXT.replace('"/srv/lawsuit"', '"/srv/lawsuit", "/srv/both"')
                                                 + '\n[[project]]\nid = "shared"\npaths = ["/srv/both"]\n')
    import gateway.commands.cli

    def made():
        from gateway.testing import folders_of, make_gateway

        gw = make_gateway([_keeper_plugin()], home=gateway_home)
        assert gw.source.path == folders_of(gateway_home).config / "config.toml"
        return gw

    monkeypatch.setattr(gateway.commands.cli, "_gateway", made)
    return config


def _run(*args):
    from click.testing import CliRunner

    from gateway.commands.cli import main

    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_access_why_names_the_project_the_manifest_line_and_the_change(why_home):
    result = _run("access", "why", "notes://srv/lawsuit/brief.md")
    manifest = why_home.parent / "projects.toml"
    assert result.exit_code == 1
    assert f"lawsuit (Dispute): [[project]] at {manifest}:6" in result.output
    assert "ai = false at line 12: set it to ai = true" in result.output
    assert "garden" not in result.output


def test_access_why_names_every_closed_project_of_a_shared_item_and_tool_calls_work_too(why_home):
    result = _run("access", "why", "read_note", '{"path": "/srv/both/plan.md"}')
    assert result.exit_code == 1 and "these projects" in result.output
    assert "lawsuit (Dispute)" in result.output and "shared (no name)" in result.output
    assert "it has no ai line (closed by default)" in result.output


def test_access_why_points_at_outside_projects_in_the_config(why_home):
    result = _run("access", "why", "notes://srv/elsewhere/x")
    assert result.exit_code == 1
    assert f"things outside projects are closed to agents ({why_home}:" in result.output
    assert "outside_projects = true" in result.output


def test_access_why_says_when_a_thing_is_given_or_unknown(why_home):
    given = _run("access", "why", "notes://index")
    assert given.exit_code == 0 and "is open to agents" in given.output
    unknown = _run("access", "why", "nothing://here")
    assert unknown.exit_code == 1 and "no enabled plugin serves it" in unknown.output


def test_access_list_shows_every_project_open_or_closed_with_routes(why_home):
    result = _run("access", "list")
    assert result.exit_code == 0
    assert "garden (no name): open to agents" in result.output
    assert "lawsuit (Dispute): closed" in result.output
    assert "paths '/srv/lawsuit': takes nothing now" in result.output and "paths '/srv/both'" in result.output
    assert "Things outside projects: closed." in result.output


def test_access_why_refuses_to_guess_while_the_gate_is_in_error(why_home):
    (why_home.parent / "projects.toml").write_text("")
    result = _run("access", "why", "notes://srv/lawsuit/brief.md")
    assert result.exit_code == 1 and "Nothing is given to agents now" in result.output and "empty" in result.output


def test_the_access_commands_have_help_text():
    for args in (["access", "--help"], ["access", "why", "--help"], ["access", "list", "--help"]):
        result = _run(*args)
        assert result.exit_code == 0 and len(result.output.splitlines()) > 3
    assert "TOOL" in _run("access", "why", "--help").output or "tool's name" in _run("access", "why", "--help").output
