"""Attachments played as attacks through a real `gateway serve --http` and the SDK's own clients.

A closed project's subject route whose words, and a canary, are only in a PDF attached to an innocent message
(a server of its own, over stdio): no tool gives the canary, the message is refused by read_message and
read_attachment with the sentence an unknown one gets, and every search counts it the same. (While a closed project
has subject routes, any message whose masked words hold a mask label is kept too, the mail plugin's rule for hidden
text: so the other tests run on a server with no such project.) One server for the rest of the module. A card on page 3 of a PDF is masked and found by none of its digits; a word only in a PDF finds its message. A
200-page PDF, a PDF whose one page inflates to 64 MB, zip bombs shaped as .docx (honest and lying about their
sizes) and a password-locked PDF are each answered with a sentence, while a second client pings: every ping is
answered within two seconds and the server's peak memory stays within 300 MB of what it was idle.
"""

from __future__ import annotations

import time
from functools import cache
from pathlib import Path

import anyio
import pytest
from gateway_mail.mail import sample

from gateway.testing import serve_client, write_config
from tests.adversarial.organizer_attack import Server, assert_bounded, attack, settle_idle, text_of

CANARY = "wyvernattachcanary"
ROUTE = "Kestrel ledger"
CARD = "4000 0566 5566 5556"  # Luhn-valid test number
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PROJECTS = [*sample.PROJECTS, {"id": "kestrel", "name": "Kestrel", "ai": False, "subjects": [ROUTE]}]


@cache
def _heavy_files() -> tuple[tuple[str, str, bytes], ...]:
    """The long file, the bombs and the locked PDF: made once a process for both worlds (the bombs are seconds of
    CPU to compress)."""
    return (
        ("long.pdf", PDF, sample.pdf([f"Page {n} of the long report" for n in range(1, 201)])),
        ("bomb.pdf", PDF, sample.pdf_bomb()),
        ("bomb.docx", DOCX, sample.zip_bomb()),
        ("liar.docx", DOCX, sample.zip_bomb(declared_honestly=False)),
        ("locked.pdf", PDF, sample.encrypted_pdf("the locked lychee words")),
    )


def _world(home: Path, projects: list[dict]) -> Path:
    root = home / "Mail" / "personal"
    sample.world(root, "attachworldcanary", time.time())
    inbox = root / "INBOX"
    now = time.time()

    def put(message_id: str, subject: str, files: list[tuple[str, str, bytes]], body: str = "See attached.") -> None:
        sample.deliver(inbox, sample.with_attachments(
            files, sender="Ada Example <ada@example.net>", subject=subject, body=body, message_id=message_id,
            date=now - 30, headers=sample.authenticated("example.net")))

    put("kestrel@example.net", "Quarterly papers", [("report.pdf", PDF, sample.pdf(
        ["Cover page", f"The {ROUTE} for this quarter.\nSecret word {CANARY}"]))])
    put("card@example.net", "Receipt", [("receipt.pdf", PDF, sample.pdf(
        ["Receipt", "Thank you", f"Charged to card {CARD}\nfor the loquat saplings"]))])
    put("bombs@example.net", "Heavy files", list(_heavy_files()))
    write_config(home, sample.config(root), projects=projects)
    return root


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("attachments")
    home = base / "home"
    home.mkdir()
    _world(home, sample.PROJECTS)
    server = Server(home, base / "stderr")
    settle_idle(server)
    yield server
    server.stop()


def test_a_closed_projects_words_only_in_an_attachment_keep_the_message(gateway_home: Path) -> None:
    _world(gateway_home, PROJECTS)
    searches = [CANARY, "kestrel", "ledger", '"Kestrel ledger"', "Quarterly", "papers", "plumtree"]
    calls = [("search_mail", {"query": q}) for q in searches] + [
        ("porch", {"open": True}),
        ("read_message", {"address": "mid:kestrel@example.net"}),
        ("read_attachment", {"address": "mid:kestrel@example.net", "part": 1}),
        ("read_attachment", {"address": "mid:nobody@example.net", "part": 1}),
        ("find", {"query": CANARY}),
    ]

    async def play():
        async with serve_client(gateway_home) as client:
            return [await client.call_tool(tool, arguments) for tool, arguments in calls]

    given = anyio.run(play)
    for answer in (text_of(a) for a in given):
        assert CANARY not in answer and "Quarterly papers" not in answer and "report.pdf" not in answer
    searched = given[:len(searches)]
    counts = {a.structured_content["left_out"] for a in searched}
    assert len(counts) == 1 and counts.pop() >= 3  # the vault's two, the client's claimed two, and this one
    refused, unknown = given[-3], given[-2]
    assert refused.is_error and unknown.is_error
    assert text_of(refused).replace("kestrel@example.net", "X") == text_of(unknown).replace("nobody@example.net", "X")
    assert given[-4].is_error


def test_a_card_in_a_pdf_is_masked_and_a_pdf_word_finds_its_message(served: Server) -> None:
    calls = [("search_mail", {"query": q}) for q in ("loquat", "0566", '"4000 0566"', "4000056655665556")] + [
        ("read_attachment", {"address": "mid:card@example.net", "part": 1})]
    seen = attack(served, calls)
    hits = [[h["address"] for h in a.structured_content["hits"]] for a in seen.answers[:4]]
    assert hits == [["mid:card@example.net"], [], [], []]
    read = text_of(seen.answers[4])
    assert "loquat saplings" in read and "[card …5556]" in read and "0566" not in read and "[page 3 of 3]" in read


def test_long_files_bombs_and_a_locked_pdf_are_answered_within_bounds(served: Server) -> None:
    calls = [("read_attachment", {"address": "mid:bombs@example.net", "part": n}) for n in range(1, 6)] + [
        ("search_mail", {"query": "lychee"}), ("search_mail", {"query": '"bomb words"'})]
    seen = attack(served, calls)
    long, bomb, honest, liar, locked = (text_of(a) for a in seen.answers[:5])
    assert not any(a.is_error for a in seen.answers)
    assert "only its first 50 pages of 200" in long and "Page 50 of the long report" in long
    assert "page 1 not read" in bomb and "bomb words" not in bomb
    assert "unzips to" in honest and "decompression bomb" in honest
    assert "lies about its sizes" in liar
    assert "encrypted with a password" in locked and "lychee" not in locked
    assert [a.structured_content["hits"] for a in seen.answers[5:]] == [[], []]
    assert_bounded(served, seen)
