"""Notes, contacts and ties: their privacy rules played as attacks through a real `gateway serve` and the SDK client.

A note never leaves the notes folder (`..`, escaped dots, absolute paths, drives, device names, a link on the way,
the resource template too); two notes of one title both exist; a tie is made once, only to what the gateway knows
or an http(s) page, never to a file, another scheme or with a line break; masks on notes and contacts, their
indexes masked; per-project access (left out and counted whatever the words, refused by address, nothing
written into or tied to a closed project, nothing outside projects while those are closed).
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from gateway_mail.notes import sample as sample_notes

from gateway.testing import read_audit, serve_client, write_config

CANARY = "quillwortnotecanary"


def _text(result) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {}, ensure_ascii=False)


def _world(home: Path, outside_projects: bool | None = None) -> dict:
    made = sample_notes.everything(home, CANARY)
    config = made["config"]
    if outside_projects is not None:
        config["access"] = {"outside_projects": outside_projects}
    write_config(home, config, projects=made["projects"])
    return made


def _serve(home: Path, play):
    async def run():
        async with serve_client(home) as client:
            return await play(client)

    return anyio.run(run)


async def _read(client, uri: str) -> str:
    try:
        return json.dumps((await client.read_resource(uri)).model_dump(mode="json"))
    except Exception as refusal:  # noqa: BLE001 - a refusal is an answer too
        return f"refused: {refusal}"


def test_a_note_never_leaves_the_notes_folder(gateway_home: Path) -> None:
    made = _world(gateway_home)
    outside = gateway_home / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"# Secret\n\n{CANARY}\n")
    (made["notes"] / "away").symlink_to(outside)
    (made["notes"] / "leak.md").symlink_to(outside / "secret.md")

    async def play(client):
        answers = []
        for address in ("sioul:note/../outside/secret.md", "sioul:note/%2e%2e/outside/secret.md",
                        f"sioul:note/{outside}/secret.md", "sioul:note/away/secret.md", "sioul:note/leak.md",
                        "sioul:note/C:/outside/secret.md", "sioul:note/..%2Foutside%2Fsecret.md",
                        "sioul:note/NUL/secret.md"):
            result = await client.call_tool("read_note", {"address": address})
            answers.append((result.is_error, _text(result)))
            answers.append((True, await _read(client, address)))
        for folder in ("../outside", str(outside), "away", "away/deeper", "C:\\outside", "CON", "a/../../outside"):
            result = await client.call_tool("add_note", {"title": "escape", "text": "x", "folder": folder})
            answers.append((result.is_error, _text(result)))
        result = await client.call_tool("add_note", {"title": "../../outside/escape", "text": "x"})
        inside = result.structured_content["file"]
        search = await client.call_tool("search_notes", {"query": CANARY})
        return answers, inside, _text(search)

    answers, inside, search = _serve(gateway_home, play)
    for refused, text in answers:
        assert refused and CANARY not in text, text
    assert inside == "-..-outside-escape.md"  # relative to the notes folder, inside it
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]
    assert not (gateway_home / "escape.md").exists()
    assert CANARY not in search


def test_two_notes_of_one_title_both_exist_and_the_text_is_not_logged(gateway_home: Path) -> None:
    made = _world(gateway_home)

    async def play(client):
        made_notes = []
        for text in ("first words", "second words"):
            result = await client.call_tool("add_note", {"title": "Same title", "text": text})
            made_notes.append(result.structured_content["address"])
        return made_notes

    first, second = _serve(gateway_home, play)
    assert first != second
    assert (made["notes"] / "Same title.md").read_text() == "# Same title\n\nfirst words\n"
    assert (made["notes"] / "Same title (2).md").read_text() == "# Same title\n\nsecond words\n"
    logged = [line for line in read_audit(gateway_home) if line.get("tool") == "add_note"]
    assert len(logged) == 2 and "words" not in json.dumps(logged)


def test_ties_are_made_once_and_only_to_what_the_gateway_knows(gateway_home: Path) -> None:
    made = _world(gateway_home)
    plumber = f"mid:{made['ids']['plumber']}"

    async def play(client):
        note = "sioul:note/Welcome.md"
        first = await client.call_tool("link", {"address": note, "to": plumber})
        second = await client.call_tool("link", {"address": plumber, "to": note})
        refused = []
        for to in ("file:///etc/passwd", "/etc/passwd", "smb://server/share", "javascript:alert(1)",
                   "data:text/html,x", "https://example.org/\r\nDESCRIPTION:injected", "sioul:task/dupont-1%0Ax",
                   "sioul:note/none.md", "mid:none@example.org", "ftp://example.org/x"):
            result = await client.call_tool("link", {"address": note, "to": to})
            refused.append((to, result.is_error))
        links = await client.call_tool("links", {"address": note})
        return first.structured_content, second.structured_content, refused, links.structured_content

    first, second, refused, links = _serve(gateway_home, play)
    assert first["made"] is True and second["made"] is False
    assert all(was_refused for _to, was_refused in refused), refused
    assert [t["address"] for t in links["ties"]] == [plumber]


def test_closed_projects_notes_and_contacts_are_kept_whatever_the_words(gateway_home: Path) -> None:
    made = _world(gateway_home)
    vault_mail = f"mid:{made['ids']['vault']}"

    async def play(client):
        given, counts = [], []
        for query in (CANARY, "plumtree", "Vault", "Keeper", "nothingmatches", f"{CANARY[:6]}*"):
            for tool in ("search_notes", "search_contacts"):
                result = await client.call_tool(tool, {"query": query})
                given.append(_text(result))
                counts.append((tool, result.structured_content["left_out"]))
            given.append(_text(await client.call_tool("find", {"query": query})))
        for address in ("sioul:note/Vault/secret.md", "sioul:note/Vault/other.md"):
            result = await client.call_tool("read_note", {"address": address})
            assert result.is_error
            given.append(_text(result))
            given.append(await _read(client, address))
        writes = [
            ("add_note", {"title": "in", "text": "x", "project": "vault"}),
            ("add_note", {"title": "in", "text": "x", "folder": "Vault"}),
            ("add_note", {"title": "in", "text": "x", "project": "nosuchproject"}),
            ("link", {"address": "sioul:note/Welcome.md", "to": "sioul:project/vault"}),
            ("link", {"address": "sioul:note/Welcome.md", "to": vault_mail}),
            ("link", {"address": "sioul:contact/keeper-1", "to": "https://example.org"}),
            ("link", {"address": "sioul:note/Vault/secret.md", "to": "sioul:note/Welcome.md"}),
            ("link", {"address": "sioul:task/vault-2", "to": "sioul:note/Welcome.md"}),
        ]
        for tool, arguments in writes:
            result = await client.call_tool(tool, arguments)
            assert result.is_error, (tool, arguments)
            given.append(_text(result))
        for address in ("sioul:note/Vault/secret.md", "sioul:contact/keeper-1", vault_mail, "sioul:project/vault",
                        "sioul:event/vault-event"):
            result = await client.call_tool("links", {"address": address})
            assert result.is_error, address
            given.append(_text(result))
        return given, counts

    given, counts = _serve(gateway_home, play)
    for answer in given:
        assert CANARY not in answer and "Kim Keeper" not in answer and "Vault plan" not in answer
    assert {c for t, c in counts if t == "search_notes"} == {1}
    assert {c for t, c in counts if t == "search_contacts"} == {1}
    assert not (made["notes"] / "in.md").exists() and not (made["notes"] / "Vault" / "in.md").exists()


def test_masks_on_notes_and_contacts_and_their_indexes(gateway_home: Path) -> None:
    _world(gateway_home)

    async def play(client):
        return [_text(await client.call_tool(tool, {"query": query}))
                for tool, query in (("search_notes", "Bank"), ("search_contacts", "Banker"),
                                    ("search_notes", "20041010"), ("search_contacts", '"2004" "1010"'),
                                    ("find", "2004 1010"))] + [
            _text(await client.call_tool("read_note", {"address": "sioul:note/Bank.md"}))]

    answers = _serve(gateway_home, play)
    for answer in answers:
        assert "2004 1010" not in answer and "3M02" not in answer
    assert "sioul:note/Bank.md" in answers[0] and "bea@example.net" in answers[1]
    assert '"notes": []' in answers[2] and '"contacts": []' in answers[3]
    cache = gateway_home / ".cache" / "gateway" / "plugins" / "mail"
    for index in ("notes-index.sqlite", "contacts-index.sqlite"):
        raw = b"".join(p.read_bytes() for p in cache.glob(index + "*"))
        assert raw and b"2004 1010" not in raw and b"3M02" not in raw


def test_outside_projects_closed_keeps_loose_notes_and_contacts_and_writes_nothing_outside(
        gateway_home: Path) -> None:
    made = _world(gateway_home, outside_projects=False)

    async def play(client):
        notes = await client.call_tool("search_notes", {"query": "plumtree"})
        contacts = await client.call_tool("search_contacts", {"query": "plumtree"})
        loose = await client.call_tool("add_note", {"title": "loose", "text": "x"})
        tie = await client.call_tool("link", {"address": "sioul:note/Plumbing/quote.md",
                                              "to": "https://example.org"})
        welcome = await client.call_tool("read_note", {"address": "sioul:note/Welcome.md"})
        return notes.structured_content, contacts.structured_content, loose.is_error, tie.is_error, welcome.is_error

    notes, contacts, loose_refused, tie_refused, welcome_refused = _serve(gateway_home, play)
    assert [n["address"] for n in notes["notes"]] == ["sioul:note/Plumbing/quote.md"] and notes["left_out"] == 3
    assert [c["address"] for c in contacts["contacts"]] == ["sioul:contact/plumber-1"]
    assert loose_refused and welcome_refused and not tie_refused
    assert not (made["notes"] / "loose.md").exists()


def test_a_message_tied_to_a_project_is_closed_with_it(gateway_home: Path) -> None:
    """A tie places mail in a project as its routes do: once the person closes the project, the message tied to it
    (in no project by its routes) and its replies are kept, found by no search and refused by address."""
    made = _world(gateway_home)
    friend = f"mid:{made['ids']['friend']}"

    async def tie_and_read(client):
        tie = await client.call_tool("link", {"address": friend, "to": "sioul:project/dupont"})
        read = await client.call_tool("read_message", {"address": friend})
        search = await client.call_tool("search_mail", {"query": "Tuesday"})
        return tie, read, search

    tie, read, search = _serve(gateway_home, tie_and_read)
    assert not tie.is_error, _text(tie)
    assert not read.is_error and "Tuesday" in _text(read)  # the open control: tied to an open project, shown
    assert friend in _text(search)

    closed = [{**project, "ai": False} if project["id"] == "dupont" else project for project in made["projects"]]
    write_config(gateway_home, projects=closed)

    async def read_again(client):
        read = await client.call_tool("read_message", {"address": friend})
        search = await client.call_tool("search_mail", {"query": "Tuesday"})
        porch = await client.call_tool("porch", {})
        return read, search, porch

    read, search, porch = _serve(gateway_home, read_again)
    assert read.is_error and "Tuesday" not in _text(read)
    for answer in (search, porch):
        assert not answer.is_error and friend not in _text(answer) and "Tuesday?" not in _text(answer)
