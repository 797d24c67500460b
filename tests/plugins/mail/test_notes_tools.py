"""Contacts, notes, ties and find on invented files, through the gateway's own call path."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import gateway_mail
import pytest
from gateway_mail.mail import sample
from gateway_mail.notes import sample as sample_notes

from gateway.testing import make_gateway, read_audit

CANARY = "zebracanary"


@pytest.fixture
def world(gateway_home: Path):
    mail_root = gateway_home / "Mail" / "personal"
    ids = sample.world(mail_root, CANARY, time.time())
    notes_root = gateway_home / "Notes"
    contacts_root = gateway_home / ".local" / "share" / "vdirsyncer" / "contacts"
    paths = sample_notes.notes(notes_root, CANARY)
    uids = sample_notes.contacts(contacts_root, CANARY)

    def gateway(projects=sample_notes.PROJECTS, outside_projects: bool | None = None, **extra):
        config = sample.config(mail_root, notes=str(notes_root), contacts=str(contacts_root), **extra)
        if outside_projects is not None:
            config["access"] = {"outside_projects": outside_projects}
        return make_gateway([gateway_mail], home=gateway_home, config=config, projects=projects)

    return {"ids": ids, "notes": notes_root, "contacts": contacts_root, "paths": paths, "uids": uids,
            "gateway": gateway, "home": gateway_home}


def test_the_tools_with_their_schemas_and_hints(world) -> None:
    listed = {t.name: t.tool for t in world["gateway"]().catalogue().tools}
    part2 = ["search_contacts", "search_notes", "read_note", "add_note", "link", "links", "find"]
    assert [n for n in listed if n in part2] == part2
    for name in ("search_contacts", "search_notes", "read_note", "links", "find"):
        assert listed[name].read_only
    for name in ("add_note", "link"):
        assert not listed[name].read_only and not listed[name].destructive and not listed[name].open_world
    schema = {n: listed[n].input_schema for n in part2}
    assert set(schema["search_contacts"]["properties"]) == {"query", "limit"}
    assert schema["search_contacts"]["required"] == ["query"]
    assert schema["search_contacts"]["properties"]["limit"]["default"] == 20
    assert schema["search_notes"]["properties"]["limit"]["default"] == 20
    assert set(schema["read_note"]["properties"]) == {"address"} and schema["read_note"]["required"] == ["address"]
    assert set(schema["add_note"]["properties"]) == {"title", "text", "folder", "project"}
    assert set(schema["add_note"]["required"]) == {"title", "text"}
    assert set(schema["link"]["properties"]) == {"address", "to"} and set(schema["link"]["required"]) == {"address", "to"}
    assert set(schema["links"]["properties"]) == {"address"}
    assert set(schema["find"]["properties"]) == {"query", "limit"}
    assert listed["add_note"].private_arguments == ("text",)


def test_contacts_are_found_masked_and_the_kept_ones_counted_whatever_the_words(world) -> None:
    served = world["gateway"]()
    answers = [served.call("search_contacts", {"query": q}) for q in ("plumtree", CANARY, "nothinghere")]
    assert all(not a.is_error for a in answers)
    assert {a.data["left_out"] for a in answers} == {1}
    assert all(CANARY not in a.text and CANARY not in str(a.data) and "Keeper" not in a.text for a in answers)
    names = [c["name"] for c in answers[0].data["contacts"]]
    assert set(names) == {"Ada Lovelace", "Paul Plumber"}
    ada = next(c for c in answers[0].data["contacts"] if c["name"] == "Ada Lovelace")
    assert ada["address"] == "sioul:contact/ada-1" and ada["emails"] == ["ada@example.org"]
    assert "1 contact left out" in answers[0].text
    banker = served.call("search_contacts", {"query": "Banker"})
    assert "3M02 606" not in banker.text and "2004 1010" not in banker.text and "606" in banker.text
    # Searching a masked number's digits finds nothing: the index holds the masked text only.
    assert served.call("search_contacts", {"query": "20041010"}).data["contacts"] == []
    assert served.call("search_contacts", {"query": '"2004" "1010"'}).data["contacts"] == []
    # Plain words with symbols are taken as words, not FTS5 syntax.
    assert [c["name"] for c in served.call("search_contacts", {"query": "ada@example.org"}).data["contacts"]] == [
        "Ada Lovelace"]


def test_a_contact_tied_to_a_closed_project_is_kept(world) -> None:
    served = world["gateway"]()
    assert not served.call("link", {"address": "sioul:contact/ada-1", "to": "sioul:project/plumbing"}).is_error
    answer = served.call("search_contacts", {"query": "plumtree"})
    assert answer.data["left_out"] == 1
    closed = [dict(p, ai=False) if p["id"] == "plumbing" else p for p in sample_notes.PROJECTS]
    answer = world["gateway"](projects=closed).call("search_contacts", {"query": "plumtree"})
    assert answer.data["left_out"] == 3 and answer.data["contacts"] == []


def test_notes_are_found_read_and_kept(world) -> None:
    served = world["gateway"]()
    answers = [served.call("search_notes", {"query": q}) for q in ("plumtree", CANARY, "nothinghere")]
    assert {a.data["left_out"] for a in answers} == {1}
    assert all(CANARY not in a.text and CANARY not in str(a.data) for a in answers)
    found = {h["address"] for h in answers[0].data["notes"]}
    assert found == {"sioul:note/Welcome.md", "sioul:note/Plumbing/quote.md", "sioul:note/Bank.md"}
    read = served.call("read_note", {"address": "sioul:note/Plumbing/quote.md"})
    assert not read.is_error and "plumtree pipes" in read.text and read.data["title"] == "Quote"
    assert read.text.count(read.text.splitlines()[-1]) >= 1
    bank = served.call("read_note", {"address": "sioul:note/Bank.md"})
    assert "2004 1010" not in bank.text and "606" in bank.text
    refused = served.call("read_note", {"address": "sioul:note/Vault/secret.md"})
    assert refused.is_error and "closed to AI agents" in refused.text and CANARY not in refused.text
    assert "Vault" not in refused.text.replace("sioul:note/Vault/secret.md", "")
    # A note that does not exist inside a closed folder is refused the same way: no oracle by address.
    assert "closed to AI agents" in served.call("read_note", {"address": "sioul:note/Vault/none.md"}).text
    resource = served.read("sioul:note/Plumbing/quote.md")
    assert "plumtree pipes" in resource.text
    assert served.read("sioul:note/Vault/secret.md").is_error


def test_a_note_is_read_only_inside_the_notes_folder(world, tmp_path: Path) -> None:
    served = world["gateway"]()
    outside = world["home"] / "outside.md"
    outside.write_text("# Out\n\nsecretoutside\n")
    (world["notes"] / "away.md").symlink_to(outside)
    (world["notes"] / "awaydir").symlink_to(world["home"])
    for address in ("sioul:note/../outside.md", "sioul:note//etc/passwd.md", "sioul:note/away.md",
                    "sioul:note/awaydir/outside.md", "sioul:note/C:/x.md", "sioul:note/%2e%2e/outside.md",
                    "sioul:note/CON.md/x.md", "sioul:note/Welcome", "sioul:note/.hidden.md", "mid:x@example.org"):
        answer = served.call("read_note", {"address": address})
        assert answer.is_error and "secretoutside" not in answer.text, address
    assert served.call("search_notes", {"query": "secretoutside"}).data["notes"] == []


def test_add_note_writes_a_new_file_and_two_of_one_title_both_exist(world) -> None:
    served = world["gateway"]()
    first = served.call("add_note", {"title": "Garden plan", "text": "Plant plumtrees."})
    second = served.call("add_note", {"title": "Garden plan", "text": "Another."})
    assert not first.is_error and not second.is_error
    assert first.data["address"] == "sioul:note/Garden%20plan.md"
    assert second.data["address"] == "sioul:note/Garden%20plan%20(2).md"
    assert (world["notes"] / "Garden plan.md").read_text() == "# Garden plan\n\nPlant plumtrees.\n"
    assert (world["notes"] / "Garden plan (2).md").read_text() == "# Garden plan\n\nAnother.\n"
    assert "Changed: one new file" in first.text
    read = served.call("read_note", {"address": second.data["address"]})
    assert "Another." in read.text
    found = served.call("search_notes", {"query": "plumtrees"}).data["notes"]
    assert [h["address"] for h in found] == [first.data["address"]]
    audit = [line for line in read_audit(world["home"]) if line.get("tool") == "add_note"]
    assert audit and "Plant" not in str(audit) and audit[0]["arguments"]["text"] == {"length": 16}


def test_add_note_keeps_titles_on_one_line_and_folders_inside(world) -> None:
    served = world["gateway"]()
    assert "one line" in served.call("add_note", {"title": "a\nStatus: done", "text": "x"}).text
    for folder in ("../out", "/tmp", "C:/x", "CON", "a/../../b", "~/x"):
        answer = served.call("add_note", {"title": "t", "text": "x", "folder": folder})
        assert answer.is_error, folder
    assert not (world["home"] / "out").exists()
    (world["notes"] / "link").symlink_to(world["home"])
    assert served.call("add_note", {"title": "t", "text": "x", "folder": "link"}).is_error
    assert not (world["home"] / "t.md").exists()
    long = served.call("add_note", {"title": "é" * 900, "text": "x"})
    assert not long.is_error
    name = Path(long.data["file"]).name
    assert len(name.encode()) <= 255 and name.endswith(".md")
    odd = served.call("add_note", {"title": "CON", "text": "x", "folder": "sub/dir"})
    assert odd.data["address"] == "sioul:note/sub/dir/_CON.md"


def test_add_note_into_a_project(world) -> None:
    served = world["gateway"]()
    added = served.call("add_note", {"title": "Pipes", "text": "plumtree", "project": "plumbing"})
    assert not added.is_error and added.data["ties"] == ["sioul:project/plumbing"]
    assert served.call("links", {"address": added.data["address"]}).data["ties"] == [
        {"address": "sioul:project/plumbing", "title": "Plumbing"}]
    for project in ("vault", "nosuchproject"):
        refused = served.call("add_note", {"title": "x", "text": "y", "project": project})
        assert refused.is_error and "closed to AI agents" in refused.text
    assert served.call("add_note", {"title": "x", "text": "y", "folder": "Vault"}).is_error
    assert not (world["notes"] / "x.md").exists() and not (world["notes"] / "Vault" / "x.md").exists()
    closed = world["gateway"](outside_projects=False)
    assert closed.call("add_note", {"title": "loose", "text": "y"}).is_error
    assert not closed.call("add_note", {"title": "in plumbing", "text": "y", "project": "plumbing"}).is_error


def test_a_tie_is_made_once_only_to_known_things_or_pages(world) -> None:
    served = world["gateway"]()
    ids = world["ids"]
    note = "sioul:note/Welcome.md"
    made = served.call("link", {"address": note, "to": f"mid:{ids['plumber']}"})
    assert not made.is_error and made.data["made"] is True
    again = served.call("link", {"address": f"mid:<{ids['plumber']}>", "to": note})
    assert not again.is_error and again.data["made"] is False
    assert not served.call("link", {"address": note, "to": "https://example.org/garden"}).is_error
    ties = served.call("links", {"address": note}).data["ties"]
    assert [t["address"] for t in ties] == [f"mid:{ids['plumber']}", "https://example.org/garden"]
    for bad in ("file:///etc/passwd", "/etc/passwd", "ftp://example.org/x", "javascript:alert(1)",
                "https://example.org/\nSTATUS:COMPLETED", "sioul:note/Nothing.md", "mid:nothing@example.org",
                "sioul:contact/nobody", "sioul:task/x%0Ay"):
        answer = served.call("link", {"address": note, "to": bad})
        assert answer.is_error, bad
    assert len(served.call("links", {"address": note}).data["ties"]) == 2


def test_nothing_is_tied_to_a_closed_project_or_its_things(world) -> None:
    served = world["gateway"]()
    ids = world["ids"]
    for a, b in (("sioul:note/Welcome.md", "sioul:project/vault"), ("sioul:note/Welcome.md", f"mid:{ids['vault']}"),
                 ("sioul:note/Vault/secret.md", "https://example.org"), ("sioul:contact/keeper-1", "sioul:note/Bank.md"),
                 ("sioul:note/Welcome.md", "sioul:project/nosuch")):
        answer = served.call("link", {"address": a, "to": b})
        assert answer.is_error and "closed to AI agents" in answer.text, (a, b)
    for address in ("sioul:note/Vault/secret.md", "sioul:contact/keeper-1", f"mid:{ids['vault']}",
                    "sioul:project/vault"):
        answer = served.call("links", {"address": address})
        assert answer.is_error and "closed to AI agents" in answer.text, address


def test_links_leave_out_and_count_the_kept_ends(world) -> None:
    served = world["gateway"]()
    note = "sioul:note/Welcome.md"
    assert not served.call("link", {"address": note, "to": "sioul:contact/plumber-1"}).is_error
    assert not served.call("link", {"address": note, "to": "sioul:contact/ada-1"}).is_error
    closed = [dict(p, ai=False) if p["id"] == "plumbing" else p for p in sample_notes.PROJECTS]
    later = world["gateway"](projects=closed).call("links", {"address": note})
    assert later.data["left_out"] == 1 and [t["address"] for t in later.data["ties"]] == ["sioul:contact/ada-1"]
    assert "Plumber" not in later.text and "1 tie left out" in later.text


def test_find_searches_every_kind_without_a_count(world) -> None:
    served = world["gateway"]()
    answer = served.call("find", {"query": "plumtree"})
    kinds = {f["kind"] for f in answer.data["found"]}
    assert {"mail", "contact", "note"} <= kinds
    assert "left_out" not in answer.data and "left out" not in answer.text
    for words in (CANARY, f"plumtree {CANARY}", "Kim Keeper", "Vault plan"):
        found = served.call("find", {"query": words})
        assert CANARY not in found.text and CANARY not in str(found.data)
        assert not [f for f in found.data["found"] if "keeper" in f["address"] or "Vault/" in f["address"]]
    assert served.call("find", {"query": "plumtree", "limit": 2}).data["found"].__len__() == 2


def test_indexes_hold_masked_text_only_and_are_private(world) -> None:
    served = world["gateway"]()
    served.call("search_notes", {"query": "plumtree"})
    served.call("search_contacts", {"query": "plumtree"})
    served.call("link", {"address": "sioul:note/Welcome.md", "to": "https://example.org"})
    cache = world["home"] / ".cache" / "gateway" / "plugins" / "mail"
    data = world["home"] / ".local" / "share" / "gateway" / "plugins" / "mail"
    for path in (cache / "notes-index.sqlite", cache / "contacts-index.sqlite", data / "ties.sqlite3"):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path
    for path in (cache / "notes-index.sqlite", cache / "contacts-index.sqlite"):
        raw = path.read_bytes() + b"".join(p.read_bytes() for p in path.parent.glob(path.name + "-wal"))
        assert b"2004 1010" not in raw and b"3M02" not in raw, path
        assert b"plumtree" in raw


def test_an_edited_and_a_removed_note_are_seen(world) -> None:
    served = world["gateway"]()
    assert served.call("search_notes", {"query": "garden"}).data["notes"]
    welcome = world["notes"] / "Welcome.md"
    os.replace(welcome, world["notes"] / "Renamed.md")
    assert [h["address"] for h in served.call("search_notes", {"query": "garden"}).data["notes"]] == [
        "sioul:note/Renamed.md"]
    (world["notes"] / "Renamed.md").unlink()
    assert served.call("search_notes", {"query": "garden"}).data["notes"] == []


@pytest.fixture
def everything(gateway_home: Path):
    made = sample_notes.everything(gateway_home, CANARY)
    made["gateway"] = lambda: make_gateway([gateway_mail], home=gateway_home, config=made["config"],
                                           projects=made["projects"])
    return made


def test_find_reaches_tasks_events_and_projects_too(everything) -> None:
    served = everything["gateway"]()
    kinds = {f["kind"]: f["address"] for f in served.call("find", {"query": "Dupont"}).data["found"]}
    assert kinds.get("project") == "sioul:project/dupont" and kinds.get("event") == "sioul:event/dupont-visit"
    tiles = served.call("find", {"query": "tiles"}).data["found"]
    assert [f["address"] for f in tiles] == ["sioul:task/dupont-3"]
    for words in (CANARY, "strongbox", "Vault", "keys"):
        answer = served.call("find", {"query": words})
        assert CANARY not in answer.text and "vault" not in str(answer.data["found"]).lower(), words


def test_a_project_page_gives_its_notes_and_its_client(everything) -> None:
    served = everything["gateway"]()
    page = served.call("read_project", {"address": "sioul:project/plumbing"})
    assert not page.is_error, page.text
    assert [n["address"] for n in page.data["notes"]] == ["sioul:note/Plumbing/quote.md"]
    assert [c["address"] for c in page.data["contacts"]] == ["sioul:contact/plumber-1"]
    assert "Paul Plumber" in page.text and "sioul:note/Plumbing/quote.md" in page.text
    tied = served.call("link", {"address": "sioul:note/Welcome.md", "to": "sioul:project/dupont"})
    assert not tied.is_error
    dupont = served.call("read_project", {"address": "sioul:project/dupont"})
    assert "sioul:note/Welcome.md" in [n["address"] for n in dupont.data["notes"]]
    assert "sioul:note/Welcome.md" in [t["address"] for t in dupont.data["ties"]]


def test_tasks_and_events_are_tied_only_when_open(everything) -> None:
    served = everything["gateway"]()
    assert not served.call("link", {"address": "sioul:task/dupont-1", "to": "sioul:note/Welcome.md"}).is_error
    assert served.call("links", {"address": "sioul:task/dupont-1"}).data["ties"][0]["address"] == (
        "sioul:note/Welcome.md")
    for kept in ("sioul:task/vault-1", "sioul:task/vault-2", "sioul:event/vault-event", "sioul:task/both-1"):
        answer = served.call("link", {"address": kept, "to": "https://example.org"})
        assert answer.is_error and "closed to AI agents" in answer.text and CANARY not in answer.text, kept
    assert served.call("link", {"address": "sioul:task/nosuch", "to": "https://example.org"}).is_error


def test_a_note_whose_name_holds_a_colon_is_read(world) -> None:
    (world["notes"] / "Meeting: kickoff.md").write_text("# Kickoff\n\nplumtree agenda\n")
    served = world["gateway"]()
    [hit] = [h for h in served.call("search_notes", {"query": "agenda"}).data["notes"]]
    assert hit["address"] == "sioul:note/Meeting:%20kickoff.md"
    assert "plumtree agenda" in served.call("read_note", {"address": hit["address"]}).text
    assert served.call("read_note", {"address": "sioul:note/C:/Meeting: kickoff.md"}).is_error
