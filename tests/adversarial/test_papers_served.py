"""Papers, contracts and letters through a real `gateway serve`, spoken to with the MCP SDK's own client.

The closed projects' papers (one by its folder, a `paths` route; one by its correspondent, a `senders` route; one
by its paperless-ngx tag, `project:atlas`) hold a canary word that no answer of any tool holds; a search's count of
what it kept is the same whatever its words; a kept paper asked for by its address is refused exactly as an address
that names nothing. An IBAN and a card number are masked and found by no writing of their digits. Hostile PDFs (a
compression bomb, a page that never ends, an encrypted PDF, 2,000 pages, a file cut short) fail alone while the
server goes on answering, and `gateway doctor` names them. `gateway access why` and `access list` know the papers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest
from gateway_papers import sample, store

from gateway.api.context import home_environment
from gateway.testing import read_audit, serve_client, write_config
from tests.forkserver import gateway_command
from tests.plugins.papers import hostile

CANARY = "okapicanary"
CLOSED_WORDS = (CANARY, "Strongbox", "strongbox", "Berth", "berth", "Atlas Builders", "Extension works", "keeper@")
SEARCHES = (CANARY, "strongbox", "berth handover", "extension", "inventory", "plumtree", "northbank", "lease",
            "deposit", "card", "harbor", "atlas", "nothingmatcheshere")
DIGITS = ("4111111111111111", "4111 1111 1111 1111", "4111-1111-1111", "FR1420041010050500013M02606",
          "FR14 2004 1010 0505 0001 3M02 606", "20041010050500013M02606", "0505 0001")


def _text(result) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content) + json.dumps(
        result.structured_content or {}, ensure_ascii=False)


async def _call(client, tool: str, arguments: dict) -> tuple[bool, str]:
    try:
        result = await client.call_tool(tool, arguments)
    except Exception as refusal:  # noqa: BLE001 - a JSON-RPC error is a refusal too
        return True, str(refusal)
    return bool(result.is_error), _text(result)


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(gateway_command(*args), capture_output=True, text=True, timeout=300,
                          env={"PATH": os.environ.get("PATH", ""), **home_environment(home)})


def _kept(made: dict) -> list[str]:
    folder = made["folder"]
    return [store.address_of("file", folder / "Vault" / "2026-05-01 Strongbox inventory.pdf"),
            store.address_of("file", folder / "letters" / sample.KEEPER / "2026-05-02 Berth handover.pdf"),
            store.address_of("paperless", made["export"] / "manifest.json", 3)]


def test_a_closed_project_is_never_shown_in_papers(gateway_home: Path) -> None:
    made = sample.everything(gateway_home, CANARY)
    write_config(gateway_home, made["config"], projects=made["projects"])
    kept = _kept(made)

    async def play(client):
        seen: dict = {"tools": {t.name for t in (await client.list_tools()).tools}}
        searches = []
        for query in SEARCHES:
            for extra in ({}, {"kind": "letter"}, {"kind": "contract"}, {"since": "2026-03-01"}):
                searches.append((query, json.dumps(extra), *await _call(client, "search_papers",
                                                                         {"query": query, **extra})))
        seen["searches"] = searches
        seen["digits"] = [(d, *await _call(client, "search_papers", {"query": d})) for d in DIGITS]
        addresses = set()
        for _query, _extra, error, text in searches:
            if not error:
                addresses |= {p["address"] for p in json.loads(text[text.index('{"papers"'):])["papers"]}
        seen["reads"] = [await _call(client, "read_paper", {"address": a}) for a in sorted(addresses)]
        seen["kept"] = [(a, *await _call(client, "read_paper", {"address": a}))
                        for a in (*kept, "papers:doc/0123456789ab")]
        return seen

    seen = anyio.run(_serve, gateway_home, play)
    assert seen["tools"] == {"search_papers", "read_paper"}
    every = [(q, e, error, text) for q, e, error, text in seen["searches"]] + [
        ("read", "", error, text) for error, text in seen["reads"]]
    for query, extra, error, text in every:
        assert not error, (query, extra, text)
        for word in CLOSED_WORDS:
            assert word not in text, (query, extra, word)
        assert "4111 1111" not in text and "2004 1010" not in text and "FR14" not in text, (query, extra)
    # A search's count of what it kept covers its scope whatever its words: per scope one count.
    counts: dict[str, set] = {}
    for _query, extra, _error, text in seen["searches"]:
        counts.setdefault(extra, set()).add(json.loads(text[text.index('{"papers"'):])["left_out"])
    assert counts == {"{}": {3}, json.dumps({"kind": "letter"}): {1}, json.dumps({"kind": "contract"}): {1},
                      json.dumps({"since": "2026-03-01"}): {3}}
    for digits, error, text in seen["digits"]:
        assert not error and "(no paper found)" in text, digits
    reads = "\n".join(text for _error, text in seen["reads"])
    assert "[IBAN …2606]" in reads and "[card …1111]" in reads and "<<<data " in reads
    # Kept papers refused exactly as an address that names nothing.
    refusals = {text.replace(address, "ADDRESS") for address, _error, text in seen["kept"]}
    assert all(error for _a, error, _t in seen["kept"]) and len(refusals) == 1
    assert "closed to AI agents" in refusals.pop()
    # The person's side: which route keeps each, and what each route takes.
    why = _cli(gateway_home, "access", "why", kept[0])
    assert "taken by vault (closed): paths route" in why.stdout, why.stdout + why.stderr
    why = _cli(gateway_home, "access", "why", kept[1])
    assert "taken by harbor (closed): senders route 'keeper@harbor.example.net'" in why.stdout, why.stdout
    why = _cli(gateway_home, "access", "why", kept[2])
    assert "atlas" in why.stdout and "closed" in why.stdout, why.stdout
    listed = _cli(gateway_home, "access", "list").stdout
    assert "1 in papers (papers)" in listed and "1 in papers (letters)" in listed, listed
    # The audit log keeps addresses, never a paper's words.
    audit = json.dumps(read_audit(gateway_home))
    assert "papers:doc/" in audit and "Lease of the flat" not in audit and "quiet year" not in audit


@pytest.fixture(scope="module")
def hostile_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return hostile.made_once(tmp_path_factory)


def test_hostile_pdfs_fail_alone_and_the_server_goes_on(gateway_home: Path, hostile_files: dict[str, Path]) -> None:
    made = sample.everything(gateway_home, CANARY)
    inbox = made["folder"] / "Inbox"
    inbox.mkdir()
    for path in hostile_files.values():
        shutil.copy(path, inbox / path.name)
    config = made["config"]
    config["gateway"]["refresh_budget_ms"] = 300  # the default: a call answers while the reading goes on
    config["plugins"]["papers"].update({"max_seconds": 10, "max_pages": 20})
    write_config(gateway_home, config, projects=made["projects"])

    async def play(client):
        answers = []
        for _attempt in range(240):  # bounded: the reading ends within a few times max_seconds
            await client.list_tools()  # the server answers while it reads
            error, text = await _call(client, "search_papers", {"query": "plumtree"})
            answers.append((error, text))
            if '"not_read": 5' in text and "still being read" not in text:
                break
            await anyio.sleep(0.25)
        long = await _call(client, "search_papers", {"query": "ledgerline"})
        return answers, long

    answers, long = anyio.run(_serve, gateway_home, play)
    assert all(not error for error, _text in answers)
    error, last = answers[-1]
    assert '"not_read": 5' in last, last
    for name, whys in (("bomb", ("compression bomb",)), ("endless", hostile.ENDLESS_BOUNDS),
                       ("encrypted", ("encrypted with a password",)), ("truncated", ("not a readable PDF",)),
                       ("long", ("only the first 20 of its 2,000 pages",))):
        said = next((line for line in last.split("\n") if f"Inbox/{name}.pdf: " in line), "")
        assert said and any(why in said for why in whys), (name, last)
    assert "Soil survey" in last and "Receipt" in last
    assert not long[0] and "long" in long[1]
    doctor = _cli(gateway_home, "doctor")
    for name in ("bomb.pdf", "endless.pdf", "encrypted.pdf", "truncated.pdf", "long.pdf"):
        assert name in doctor.stdout + doctor.stderr, (name, doctor.stdout)


async def _serve(home: Path, play):
    async with serve_client(home) as client:
        return await play(client)
