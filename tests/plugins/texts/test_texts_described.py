"""`gateway access why` and `access list` for the texts plugin's conversations and calls: each names the route that
took a conversation, from the same traits the tools give the gate."""

from __future__ import annotations

from pathlib import Path

import gateway_texts
import pytest
from click.testing import CliRunner
from gateway_texts import sample

from gateway.commands.cli import main
from gateway.testing import make_gateway, write_config

CANARY = "reefcanary"


@pytest.fixture
def home(gateway_home: Path) -> Path:
    made = sample.everything(gateway_home, CANARY)
    config = {**made["config"], "gateway": {**made["config"]["gateway"], "plugins": ["texts"]}}
    write_config(gateway_home, config, projects=made["projects"])
    # The store is filled by the tools' refresh, as a host's first call would.
    make_gateway([gateway_texts], home=gateway_home, config=made["config"], projects=made["projects"]).call(
        "list_conversations")
    return gateway_home


def _why(address: str):
    return CliRunner().invoke(main, ["access", "why", address], catch_exceptions=False)


def test_a_conversation_is_explained_by_the_client_its_card_names_or_the_number_a_route_names(home: Path) -> None:
    kim = _why("texts:conversation/+33639980123")
    assert kim.exit_code == 1, kim.output
    assert "taken by vault (closed): it names the project vault itself" in kim.output  # its card is the client
    harbor = _why("texts:conversation/+1 (212) 555-0177")  # written as the phone writes it: read the same
    assert harbor.exit_code == 1 and "taken by harbor (closed): senders route '+1 212 555 0177'" in harbor.output
    ada = _why("texts:conversation/+12125550142")
    assert ada.exit_code == 0, ada.output
    assert CANARY not in kim.output + harbor.output + ada.output


def test_an_unknown_conversation_is_said_unknown(home: Path) -> None:
    unknown = _why("texts:conversation/+12125550199")
    assert unknown.exit_code != 0 and "taken by" not in unknown.output


def test_access_list_counts_texts_and_calls(home: Path) -> None:
    result = CliRunner().invoke(main, ["access", "list"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "senders '+1 212 555 0177': 1 in calls, 1 in texts" in result.output
