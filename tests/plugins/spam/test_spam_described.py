"""`gateway access why spam:corpus/<id>` and `access list` for what spam_fetch brought: the sender route that takes
a fetched message is named (a closed project keeps it though nothing proves the sender), an open one cannot open
it, and the census counts the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from gateway_spam import corpus

from gateway.commands.cli import main
from gateway.testing import folders_of, write_config

LAWYER = (b"From: Lee Lawyer <lee@law.example.net>\nTo: me@example.com\nSubject: Hearing on Monday\n"
          b"Message-ID: <hearing@law.example.net>\n\nThe hearing moves to Monday.\n")
GARDEN = (b"From: Gus <gus@garden.example.org>\nTo: me@example.com\nSubject: Seeds\n"
          b"Message-ID: <seeds@garden.example.org>\n\nThe seeds came.\n")


def _fetched(home: Path, raw: bytes, label: str) -> str:
    identity = corpus.corpus_id(raw)
    folder = corpus.corpus_folder(folders_of(home).for_plugin("spam").data) / label
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{identity}.eml").write_bytes(raw)
    return f"spam:corpus/{identity}"


@pytest.fixture
def fetched(gateway_home: Path) -> dict[str, str]:
    write_config(gateway_home, {"gateway": {"plugins": ["spam"]}},
                 projects=[{"id": "lawsuit", "ai": False, "senders": ["@law.example.net"]},
                           {"id": "garden", "ai": True, "senders": ["garden.example.org"]}])
    return {"lawyer": _fetched(gateway_home, LAWYER, "ham"), "garden": _fetched(gateway_home, GARDEN, "spam")}


def _why(address: str):
    return CliRunner().invoke(main, ["access", "why", address], catch_exceptions=False)


def test_a_fetched_message_is_explained_by_its_sender_route(fetched: dict[str, str]) -> None:
    lawyer = _why(fetched["lawyer"])
    assert lawyer.exit_code == 1, lawyer.output
    assert "taken by lawsuit (closed): senders route '@law.example.net'" in lawyer.output
    garden = _why(fetched["garden"])  # an open project's sender route needs proof that nothing gives here
    assert "not taken by garden (open): senders route 'garden.example.org'" in garden.output
    assert "fetched by spam_fetch: no account's server vouches for it" in garden.output
    assert "hearing moves" not in lawyer.output.lower()


def test_an_unknown_corpus_address_is_not_described(fetched: dict[str, str]) -> None:
    assert "taken by" not in _why("spam:corpus/0123456789abcdef").output


def test_access_list_counts_the_fetched_corpus(fetched: dict[str, str]) -> None:
    result = CliRunner().invoke(main, ["access", "list"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "senders '@law.example.net': 1 in spam corpus (ham)" in result.output
