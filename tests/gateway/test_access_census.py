"""The person sees what a route takes: `gateway access why` from the plugins' traits, `access list` counting each
route's things per source, and `gateway doctor` warning about routes that take nothing or cover a place in part."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from gateway import Context, Person, Tool, Traits, hookimpl
from gateway.testing import folders_of, make_gateway

MANIFEST = """[[project]]
id = "lawsuit"
name = "Dispute"
senders = ["@law.example.net"]
folders = [
  "work/Lawsuit",
  "Nowhere",
]
paths = ["{calendars}/work/sprint.ics"]
subjects = ["never-said-anywhere"]

[[project]]
id = "garden"
ai = true
senders = ["@garden.example.org"]
"""


class Mailbox:
    """A plugin with mail in two accounts and a calendar, told to the gate by traits; one account cannot prove
    its senders (no authserv_id), which its traits say."""

    def __init__(self, calendars: str) -> None:
        self.things = {
            "mid:1@example.com": ("mail account work", Traits(
                people=[Person("lee@law.example.net")], account="work", folder="INBOX/Lawsuit")),
            "mid:2@example.com": ("mail account work", Traits(
                people=[Person("bo@garden.example.org", why_unproven="account work has no authserv_id")],
                account="work", folder="INBOX", words=["seeds"])),
            "mid:3@example.com": ("mail account home", Traits(
                people=[Person("bo@garden.example.org", proven=True)], account="home", folder="Archive")),
            "event/sprint": ("calendar work", Traits(paths=[f"{calendars}/work/sprint.ics"], calendar="work")),
            "event/retro": ("calendar work", Traits(paths=[f"{calendars}/work/retro.ics"], calendar="work")),
        }

    @hookimpl
    def register_tools(self, gateway):
        def read(ctx: Context, id: str) -> str:
            """A thing, by its address."""
            ctx.gate.check_read(ctx.gate.owners(self.things[id][1]), f"the thing {id}", address=id)
            return "CANARY-WORDS"

        return [Tool.from_function(read, read_only=True)]

    @hookimpl
    def traits_of(self, gateway, address):
        found = self.things.get(address)
        return found[1] if found else None

    @hookimpl
    def census(self, gateway):
        return list(self.things.values())


@pytest.fixture
def gw(gateway_home, monkeypatch):
    calendars = str(gateway_home / "calendars")
    made = make_gateway([("mailbox", Mailbox(calendars))], home=gateway_home,
                        config={"gateway": {"plugins": ["mailbox"]}, "access": {"outside_projects": False}})
    (made.source.path.parent / "projects.toml").write_text(MANIFEST.format(calendars=calendars))
    from gateway.commands import cli

    monkeypatch.setattr(cli, "_gateway", lambda: made)
    return made


def _run(*args):
    from gateway.commands.cli import main

    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _manifest(gateway_home) -> str:
    return str(folders_of(gateway_home).config / "projects.toml")


# --- access why ---------------------------------------------------------------------------------------------


def test_why_names_each_route_that_took_the_thing_with_its_line(gw, gateway_home):
    result = _run("access", "why", "mid:1@example.com")
    assert result.exit_code == 1
    manifest = _manifest(gateway_home)
    assert f"taken by lawsuit (closed): senders route '@law.example.net'  [{manifest}:4]" in result.output
    assert f"taken by lawsuit (closed): folders route 'work/Lawsuit'  [{manifest}:6]" in result.output
    assert "kept from agents by the project:" in result.output and "no ai line" in result.output


def test_why_says_an_open_sender_route_could_not_open_unproven_mail_and_why(gw):
    result = _run("access", "why", "mid:2@example.com")
    assert result.exit_code == 1
    assert "not taken by garden (open): senders route '@garden.example.org'" in result.output
    assert "account work has no authserv_id" in result.output
    assert "in no open project, and things outside projects are closed to agents" in result.output


def test_why_says_a_thing_is_given_when_its_routes_are_open(gw):
    result = _run("access", "why", "mid:3@example.com")
    assert result.exit_code == 0 and "taken by garden (open)" in result.output and "open to agents" in result.output


def test_why_falls_back_to_a_call_through_the_gate_when_no_plugin_knows_the_address(gw):
    result = _run("access", "why", "read", '{"id": "event/retro"}')
    assert result.exit_code == 1 and "things outside projects are closed" in result.output
    unknown = _run("access", "why", "nothing://here")
    assert unknown.exit_code == 1 and "no enabled plugin serves it" in unknown.output


def test_a_refusal_names_the_command_that_explains_that_very_address(gw):
    refused = gw.call("read", {"id": "event/sprint"})
    assert refused.is_error and "CANARY" not in refused.text
    command = refused.text.split("`")[1]
    assert command == "gateway access why event/sprint"
    result = _run(*command.split()[1:])
    assert result.exit_code == 1 and "taken by lawsuit (closed): paths route" in result.output


# --- access list ----------------------------------------------------------------------------------------------


def test_list_counts_what_each_route_takes_in_each_source(gw):
    result = _run("access", "list")
    assert result.exit_code == 0
    assert "  senders '@law.example.net': 1 in mail account work" in result.output
    assert "  senders '@garden.example.org': 1 in mail account home" in result.output  # the unproven one: not
    assert "  paths '" in result.output and "sprint.ics': 1 in calendar work" in result.output
    assert "  subjects 'never-said-anywhere': takes nothing now" in result.output
    assert "Counted now over 5 things in 3 sources." in result.output


def test_list_says_how_a_bare_folder_route_is_read(gw):
    result = _run("access", "list")
    assert "folders 'Nowhere' (the folder Nowhere in every account, INBOX/Nowhere too" in result.output
    assert "folders 'work/Lawsuit' (folder Lawsuit of account work" in result.output
    assert _run("access", "list", "--no-counts").output.count("takes nothing") == 0


# --- doctor ---------------------------------------------------------------------------------------------------


def _warnings(gateway) -> list[str]:
    from gateway.commands.doctor import run_checks

    said: list[str] = []
    run_checks(gateway, said.append)
    return [line for line in said if line.startswith("WARNING")]


def test_doctor_warns_of_a_route_that_takes_nothing_in_any_source(gw):
    (warning,) = [w for w in _warnings(gw) if "never-said-anywhere" in w]
    assert "project lawsuit's subjects route 'never-said-anywhere'" in warning and "takes nothing" in warning


def test_doctor_warns_of_a_folder_route_naming_no_folder_of_any_account(gw):
    (warning,) = [w for w in _warnings(gw) if "'Nowhere'" in w]
    assert "names no folder of any account" in warning and "work/INBOX" in warning
    assert not [w for w in _warnings(gw) if "'work/Lawsuit'" in w]  # INBOX/Lawsuit of work: a folder it names


def test_doctor_warns_of_a_place_a_closed_project_covers_only_in_part(gw):
    (warning,) = [w for w in _warnings(gw) if "of the calendar work" in w]
    assert "takes 1 of the 2 things of the calendar work" in warning and "calendars" in warning


def test_doctor_is_quiet_about_routes_when_every_route_takes_something_everywhere(gateway_home):
    gateway = make_gateway([("mailbox", Mailbox(str(gateway_home / "calendars")))], home=gateway_home,
                           config={"gateway": {"plugins": ["mailbox"]}},
                           projects=[{"id": "lawsuit", "senders": ["@law.example.net"], "calendars": ["work"]}])
    assert not [w for w in _warnings(gateway) if "route" in w]
