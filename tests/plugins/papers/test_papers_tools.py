"""The papers plugin on a folder of real PDFs (made with reportlab), scans with their sidecars, a text file and a
paperless-ngx export in the exporter's format: each tool, the kinds, the masks, the incremental reading, and the
closed projects' papers (by path, by correspondent, by tag) found by no tool."""

from __future__ import annotations

import json
import os
from pathlib import Path

import gateway_papers
import pytest
from gateway_papers import sample, store

from gateway.testing import make_gateway
from tests.shared_home import shared_gateway

CANARY = "quokkacanary"


def _gateway(home: Path, projects: list | None = None, **settings):
    made = sample.everything(home, CANARY)
    made["config"]["plugins"]["papers"].update(settings)
    return made, make_gateway([gateway_papers], home=home, config=made["config"],
                              projects=made["projects"] if projects is None else projects)


# The tests that only ask (none writes a file or the config) share one home of samples and one gateway on it:
# the papers are read once, by the first call, instead of once a test.
_shared, read_only = shared_gateway("papers", _gateway)


def _by_title(answer) -> dict[str, dict]:
    return {p["title"]: p for p in answer.data["papers"]}


def _read(gateway, title: str, query: str) -> str:
    found = _by_title(gateway.call("search_papers", {"query": query}))
    return gateway.call("read_paper", {"address": found[title]["address"]}).text


def test_each_kind_of_file_is_read_with_its_kind_date_and_correspondent(read_only) -> None:
    _made, gateway = read_only
    assert gateway.list_tools() == ["search_papers", "read_paper"]
    lease = _by_title(gateway.call("search_papers", {"query": "deposit"}))["Flat lease"]
    assert (lease["kind"], lease["date"], lease["correspondent"]) == ("contract", "2026-01-15", "Acme Lettings")
    renewal = _by_title(gateway.call("search_papers", {"query": "renewal"}))["Card renewal"]
    assert (renewal["kind"], renewal["correspondent"]) == ("letter", "billing@northbank.example.com")
    survey = _by_title(gateway.call("search_papers", {"query": "loam"}))["Soil survey"]
    assert (survey["kind"], survey["date"]) == ("paper", "2025-11-30")
    permit = _by_title(gateway.call("search_papers", {"query": "parking"}))["Parking permit"]  # a .txt file
    assert (permit["kind"], permit["correspondent"]) == ("letter", "City Council")
    # Scans: an image's text from its sidecar (.txt, and tesseract's hOCR); the sidecar is no paper of its own.
    receipt = gateway.call("search_papers", {"query": "sapling cash"})
    assert [p["title"] for p in receipt.data["papers"]] == ["Receipt"]
    assert "Warranty" in _by_title(gateway.call("search_papers", {"query": "lawn mower two years"}))
    assert "valid two years from purchase" in _read(gateway, "Warranty", "mower")
    # The paperless-ngx export: its documents, by the export's document type, correspondent and created date; its
    # files (originals, archives, thumbnails) are not papers of their own.
    agreement = gateway.call("search_papers", {"query": "interest charged"})
    assert [(p["title"], p["kind"], p["correspondent"], p["date"]) for p in agreement.data["papers"]] == [
        ("Card agreement", "contract", "Northbank", "2026-02-11")]
    statement = _by_title(gateway.call("search_papers", {"query": "quiet year"}))["Annual statement"]
    assert statement["kind"] == "letter"
    assert _by_title(gateway.call("search_papers", {"query": "tulip"}))["Seed order"]["kind"] == "paper"


def test_an_image_without_a_text_layer_is_known_by_its_name(read_only) -> None:
    _made, gateway = read_only
    text = _read(gateway, "Photo of a letter", "photo")
    assert "Text: none; a scanned image without a text layer" in text and "<<<data" not in text


def test_kind_and_since_narrow_a_search(read_only) -> None:
    _made, gateway = read_only
    everything = {p["title"] for p in gateway.call("search_papers", {"query": "northbank"}).data["papers"]}
    assert everything == {"Card agreement", "Annual statement", "Card renewal"}
    letters = gateway.call("search_papers", {"query": "northbank", "kind": "letter"}).data["papers"]
    assert {p["title"] for p in letters} == {"Annual statement", "Card renewal"}
    later = gateway.call("search_papers", {"query": "northbank", "since": "2026-02-01"}).data["papers"]
    assert {p["title"] for p in later} == {"Card agreement", "Card renewal"}
    one = gateway.call("search_papers", {"query": "northbank", "limit": 1})
    assert len(one.data["papers"]) == 1 and one.data["more"] == 2 and "2 more papers found past the limit" in one.text


def test_a_paper_is_read_framed_and_masked(read_only) -> None:
    _made, gateway = read_only
    text = _read(gateway, "Flat lease", "deposit")
    lines = text.splitlines()
    assert "Kind: contract" in lines and "Correspondent: Acme Lettings" in lines and "Pages: 2" in lines
    assert "File: contracts/Acme Lettings/2026-01-15 Flat lease.pdf" in lines
    opening = next(i for i, line in enumerate(lines) if line.startswith("<<<data "))
    mark = lines[opening].split()[1].rstrip(":")
    closing = next(i for i, line in enumerate(lines) if line == f"<<<end of data {mark}>>>")
    inside = "\n".join(lines[opening + 1:closing])
    assert "Lease of the flat" in inside and "[IBAN …2606]" in inside and "rent is due" in inside
    assert "2004" not in text and "3M02" not in text


def test_a_long_text_is_cut_and_the_answer_says_where(gateway_home: Path) -> None:
    made, gateway = _gateway(gateway_home)
    words = " ".join(f"clause{n}" for n in range(2500))
    (made["folder"] / "Research" / "Long notes.txt").write_text(words)
    found = gateway.call("search_papers", {"query": "clause2499"}).data["papers"]
    first = gateway.call("read_paper", {"address": found[0]["address"]})
    assert first.data["offset"] == 0 and first.data["end"] < first.data["length"] == len(words)
    assert f"Cut: characters 0 to {first.data['end']:,} of {len(words):,} are given; give offset=" in first.text
    assert "clause2499" not in first.text
    rest = gateway.call("read_paper", {"address": found[0]["address"], "offset": first.data["end"]})
    assert "clause2499" in rest.text and rest.data["end"] == len(words) and "read on" not in rest.text


@pytest.mark.parametrize("digits", ["4111111111111111", "4111 1111 1111 1111", "41111111", "4111-1111-1111-1111",
                                    "FR1420041010050500013M02606", "FR14 2004 1010 0505 0001 3M02 606",
                                    "20041010050500013M02606", "2004 1010 0505", "0505"])
def test_an_iban_and_a_card_number_are_never_found_by_their_digits(read_only, digits: str) -> None:
    _made, gateway = read_only
    answer = gateway.call("search_papers", {"query": digits})
    assert answer.data["papers"] == [] and "(no paper found)" in answer.text
    # Where they are written, they are masked, the last four kept to tell two apart.
    for title, query, label in (("Card renewal", "renewal", "[card …1111]"), ("Card agreement", "governed", "[card …1111]"),
                                ("Annual statement", "quiet", "[IBAN …2606]")):
        text = _read(gateway, title, query)
        assert label in text and "4111 1111" not in text and "2004 1010" not in text


def test_the_closed_projects_papers_are_in_no_answer(read_only) -> None:
    made, gateway = read_only
    folder = made["folder"]
    answers = []
    for query in (CANARY, "strongbox", "berth", "extension", "builders", "inventory", "handover", "plumtree",
                  "keeper", "harbor", "atlas", "nothingmatcheshere"):
        answers.append(gateway.call("search_papers", {"query": query}))
    for answer in answers:
        text = answer.text + json.dumps(answer.data)
        for word in (CANARY, "Strongbox", "Berth", "Atlas Builders", "keeper@", "Extension works"):
            assert word not in text, word
    # One closed by its path, one by its correspondent (a senders route), one by its tag (project:atlas).
    assert {a.data["left_out"] for a in answers} == {3}
    assert answers[7].data["papers"]  # plumtree: the open papers are found beside the kept ones
    kept = [store.address_of("file", folder / "Vault" / "2026-05-01 Strongbox inventory.pdf"),
            store.address_of("file", folder / "letters" / sample.KEEPER / "2026-05-02 Berth handover.pdf"),
            store.address_of("paperless", made["export"] / "manifest.json", 3)]
    refusals = []
    for address in (*kept, "papers:doc/000000000000"):
        refused = gateway.call("read_paper", {"address": address})
        assert refused.is_error
        refusals.append(refused.text.replace(address, "ADDRESS"))
    # A kept paper is refused exactly as an address that names nothing.
    assert len(set(refusals)) == 1 and "closed to AI agents" in refusals[0] and CANARY not in refusals[0]


def test_things_outside_projects_closed_leave_only_an_open_projects_tagged_paper(gateway_home: Path) -> None:
    made = sample.everything(gateway_home, CANARY)
    config = {**made["config"], "access": {"outside_projects": False}}
    gateway = make_gateway([gateway_papers], home=gateway_home, config=config, projects=made["projects"])
    plumtree = gateway.call("search_papers", {"query": "plumtree"})
    assert [p["title"] for p in plumtree.data["papers"]] == ["Seed order"]  # tagged garden, an open project
    assert plumtree.data["left_out"] == 12  # every other of the 13 papers


def test_an_unchanged_file_is_not_read_again_and_a_changed_or_gone_one_is(gateway_home: Path) -> None:
    made, gateway = _gateway(gateway_home)
    permit = made["folder"] / "letters" / "City Council" / "2026-03-10 Parking permit.txt"
    assert gateway.call("search_papers", {"query": "parking"}).data["papers"]
    status = permit.stat()
    # Same size, same time: the store keeps what it read (nothing is read again).
    permit.write_text(permit.read_text().replace("parking", "bicycle"))
    os.utime(permit, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert gateway.call("search_papers", {"query": "parking"}).data["papers"]
    assert not gateway.call("search_papers", {"query": "bicycle"}).data["papers"]
    os.utime(permit, ns=(status.st_atime_ns, status.st_mtime_ns + 5_000_000_000))
    assert gateway.call("search_papers", {"query": "bicycle"}).data["papers"]
    permit.unlink()
    assert not gateway.call("search_papers", {"query": "bicycle"}).data["papers"]
    # The export read again when its manifest changes: a document gone from it goes.
    manifest = made["export"] / "manifest.json"
    records = [r for r in json.loads(manifest.read_text()) if r.get("pk") != 4 or r["model"] != "documents.document"]
    manifest.write_text(json.dumps(records, indent=2))
    assert not gateway.call("search_papers", {"query": "tulip"}).data["papers"]


def test_a_manifest_naming_files_outside_its_export_names_none(gateway_home: Path) -> None:
    made, gateway = _gateway(gateway_home)
    manifest = made["export"] / "manifest.json"
    records = json.loads(manifest.read_text())
    for record in records:
        if record["model"] == "documents.document" and record["pk"] == 4:
            record["__exported_file_name__"] = "../letters/City Council/2026-03-10 Parking permit.txt"
    manifest.write_text(json.dumps(records))
    seed = gateway.call("search_papers", {"query": "tulip"}).data["papers"]
    file = gateway.call("read_paper", {"address": seed[0]["address"]}).data["file"]
    assert file == "paperless-export/2026-04-01 Seed order-archive.pdf"  # the archive, never the file outside
    # The file it named stays a paper of its own.
    assert gateway.call("search_papers", {"query": "parking"}).data["papers"]


def test_a_broken_manifest_fails_alone(gateway_home: Path) -> None:
    made, gateway = _gateway(gateway_home)
    (made["export"] / "manifest.json").write_text('[{"model": "documents.document", "pk": 1, "fields": {')
    answer = gateway.call("search_papers", {"query": "plumtree"})
    assert "paper not read: paperless-export/manifest.json" in answer.text
    assert "Soil survey" in {p["title"] for p in answer.data["papers"]}


def test_bad_arguments_say_what_to_do(read_only) -> None:
    _made, gateway = read_only
    for tool, arguments, said in (("read_paper", {"address": "/etc/passwd"}, "not a paper's address"),
                                  ("search_papers", {"query": "…"}, "no word to search"),
                                  ("search_papers", {"query": "lease", "kind": "invoice"}, "kind")):
        answer = gateway.call(tool, arguments)
        assert answer.is_error and said in answer.text, (tool, answer.text)


def test_a_missing_folder_is_said(gateway_home: Path) -> None:
    gateway = make_gateway([gateway_papers], home=gateway_home, config={
        "plugins": {"papers": {"folder": str(gateway_home / "Nowhere")}}})
    answer = gateway.call("search_papers", {"query": "lease"})
    assert "no documents folder at" in answer.text and "[plugins.papers]" in answer.text


def test_an_iban_cut_in_two_by_the_bound_is_not_left_half_visible(gateway_home: Path) -> None:
    made, gateway = _gateway(gateway_home, max_chars=1000)
    filler = " ".join(f"word{n}" for n in range(170))[:985]
    (made["folder"] / "Research" / "Cut statement.txt").write_text(f"{filler} {sample.IBAN} and more words after it.")
    found = gateway.call("search_papers", {"query": "word1"}).data["papers"]
    answer = gateway.call("read_paper", {"address": found[0]["address"]})
    assert "Read in part: only its first 1,000 characters were read (max_chars)" in answer.text
    for part in ("FR14", "2004", "1010", "0505"):
        assert part not in answer.text
        assert not gateway.call("search_papers", {"query": part}).data["papers"]


def test_a_project_opened_or_closed_holds_from_the_next_call(gateway_home: Path) -> None:
    from gateway.testing import write_config

    made, gateway = _gateway(gateway_home)
    assert not gateway.call("search_papers", {"query": "strongbox"}).data["papers"]
    opened = [dict(p, ai=True) if p["id"] == "vault" else p for p in made["projects"]]
    manifest = write_config(gateway_home, projects=opened).with_name("projects.toml")
    stamp = manifest.stat().st_mtime_ns + 2_000_000_000
    os.utime(manifest, ns=(stamp, stamp))
    found = gateway.call("search_papers", {"query": "strongbox"})
    assert [p["title"] for p in found.data["papers"]] == ["Strongbox inventory"] and found.data["left_out"] == 2
    manifest = write_config(gateway_home, projects=made["projects"]).with_name("projects.toml")
    os.utime(manifest, ns=(stamp + 2_000_000_000, stamp + 2_000_000_000))
    assert not gateway.call("search_papers", {"query": "strongbox"}).data["papers"]


def test_a_folder_past_max_files_is_read_in_part_and_says_so(gateway_home: Path) -> None:
    _made, gateway = _gateway(gateway_home, max_files=3)
    answer = gateway.call("search_papers", {"query": "plumtree"})
    assert "only the first 3 files of the documents folder were read (max_files in [plugins.papers])." in answer.text
