"""Hostile PDFs beside the person's papers: a compression bomb, a page that never ends, an encrypted PDF, 2,000
pages and a file cut short. Each fails (or is read in part) alone, bounded, and is named; the others are read."""

from __future__ import annotations

import shutil
from pathlib import Path

import gateway_papers
import pytest
from gateway_papers import sample
from gateway_papers.reading import Bounds, Reader, ReadError

from gateway.testing import make_gateway
from tests.plugins.papers import hostile

CANARY = "wombatcanary"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return hostile.made_once(tmp_path_factory)


def test_each_hostile_pdf_fails_alone_in_the_reading_process(made: dict[str, Path], tmp_path: Path) -> None:
    with Reader(Bounds(200 << 20, 20, 1_000_000, 10.0, 1024, 64 << 20)) as reader:
        said = {}
        for name in ("bomb", "endless", "encrypted", "truncated"):
            with pytest.raises(ReadError) as failed:
                reader.pdf(made[name])
            said[name] = str(failed.value)
        long = reader.pdf(made["long"])
        ordinary = reader.pdf(sample.pdf(tmp_path / "ordinary.pdf", "An ordinary letter."))
    assert "compression bomb" in said["bomb"]
    assert any(bound in said["endless"] for bound in hostile.ENDLESS_BOUNDS), said["endless"]
    assert "encrypted with a password" in said["encrypted"]
    assert "not a readable PDF" in said["truncated"]
    assert (long["pages"], long["read"]) == (2000, 20) and "first 20 of its 2,000 pages" in long["partial"]
    assert "Page 20 of" in long["text"] and "Page 21 of" not in long["text"]
    assert "An ordinary letter." in ordinary["text"]
    # Stopped by its time, the page that never ends took its process with it and the next file had a new one;
    # stopped by a bound the reading process keeps itself, that process went on (the files after it were read).
    assert reader.started == (2 if "max_seconds" in said["endless"] else 1) or "max_memory_mb" in said["endless"]
    assert 1 <= reader.started <= 2


def test_a_file_over_the_size_bound_is_not_opened(made: dict[str, Path]) -> None:
    with Reader(Bounds(512 << 10, 50, 1_000_000, 3.0, 1024, 64 << 20)) as reader:
        with pytest.raises(ReadError, match=r"it is 1.0 MiB, over the limit of 0.5 MiB \(max_file_mb\)"):
            reader.pdf(made["long"])
        assert reader.started == 0


def test_hostile_files_are_named_and_the_other_papers_answer(gateway_home: Path, made: dict[str, Path]) -> None:
    papers = sample.everything(gateway_home, CANARY)
    inbox = papers["folder"] / "Inbox"
    inbox.mkdir()
    for path in made.values():
        shutil.copy(path, inbox / path.name)
    config = papers["config"]
    config["plugins"]["papers"].update({"max_seconds": 10, "max_pages": 20})
    gateway = make_gateway([gateway_papers], home=gateway_home, config=config, projects=papers["projects"])
    answer = gateway.call("search_papers", {"query": "plumtree"})
    assert not answer.is_error and {"Soil survey", "Receipt"} <= {p["title"] for p in answer.data["papers"]}
    lines = answer.text.splitlines()
    for name, whys in (("bomb", ("compression bomb",)), ("endless", hostile.ENDLESS_BOUNDS),
                       ("encrypted", ("encrypted with a password",)), ("truncated", ("not a readable PDF",))):
        assert any(line.startswith(f"paper not read: Inbox/{name}.pdf: ") and any(why in line for why in whys)
                   for line in lines), name
    assert any(line.startswith("paper read in part: Inbox/long.pdf: only the first 20 of its 2,000 pages")
               for line in lines)
    assert answer.data["not_read"] == 5
    # The long one is searchable by its first pages, and says it was read in part.
    found = gateway.call("search_papers", {"query": "ledgerline"}).data["papers"]
    read = gateway.call("read_paper", {"address": found[0]["address"]})
    assert "Read in part: only the first 20 of its 2,000 pages were read (max_pages)" in read.text
    assert "Pages: 2,000" in read.text
    # Nothing is read again while nothing changed: the next answer comes from the store at once.
    again = gateway.call("search_papers", {"query": "plumtree"})
    assert again.data["not_read"] == 5


def test_a_failed_file_in_a_closed_project_is_not_named(gateway_home: Path, made: dict[str, Path]) -> None:
    papers = sample.everything(gateway_home, CANARY)
    shutil.copy(made["truncated"], papers["folder"] / "Vault" / f"{CANARY} deeds.pdf")
    gateway = make_gateway([gateway_papers], home=gateway_home, config=papers["config"], projects=papers["projects"])
    answer = gateway.call("search_papers", {"query": "plumtree"})
    assert CANARY not in answer.text and "not read" not in answer.text and answer.data["not_read"] == 0


def test_a_file_past_the_memory_cap_fails_alone(tmp_path: Path) -> None:
    wide = hostile.wide(tmp_path / "wide.pdf")
    ordinary = sample.pdf(tmp_path / "ordinary.pdf", "An ordinary letter.")
    # The reading process starts in about 55 MB (Python and pypdf); 128 MiB cannot hold a 70 MB stream inflated.
    with Reader(Bounds(200 << 20, 20, 1_000_000, 60.0, 128, 64 << 20)) as reader:
        with pytest.raises(ReadError, match=r"needed more than the 128 MiB allowed \(max_memory_mb\)"):
            reader.pdf(wide)
        assert "An ordinary letter." in reader.pdf(ordinary)["text"]
        assert reader.started == 2  # the process that ran out of memory is not used again
