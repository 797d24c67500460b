"""Files from strangers, function by function: the parser's bounds, HTML laid out for the masks, the index keeping
what it parsed, and draft headers decoded before they are checked. The attacks through a real server are in
tests/adversarial/test_mail_hostile.py."""

from __future__ import annotations

import email.parser
import email.policy
from pathlib import Path

import pytest
from gateway_mail.mail import drafts, index, parse, sample
from gateway_mail.mail.accounts import Account

from gateway import ToolError
from gateway.api.deadline import DeadlinePassed


def _parts(count: int) -> bytes:
    part = b"--B\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=a\r\n\r\nx\r\n"
    return (b"From: Mallory <mallory@example.net>\r\nSubject: Parts\r\nMessage-ID: <parts@example.net>\r\n"
            b"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n"
            b"--B\r\nContent-Type: text/plain\r\n\r\nThe text.\r\n" + part * count + b"--B--\r\n")


def _nested(levels: int) -> bytes:
    opening = "".join(f"Content-Type: multipart/mixed; boundary=b{i}\r\n\r\n--b{i}\r\n" for i in range(levels))
    closing = "".join(f"\r\n--b{i}--\r\n" for i in reversed(range(levels)))
    return ("From: Eve <eve@example.net>\r\nSubject: Deep\r\nMIME-Version: 1.0\r\n" + opening
            + "Content-Type: text/plain\r\n\r\nat the bottom" + closing).encode()


def _nested_messages(levels: int) -> bytes:
    opening = "".join("Content-Type: message/rfc822\r\n\r\nFrom: x@example.net\r\n" for _ in range(levels))
    return ("From: Eve <eve@example.net>\r\nSubject: Deep\r\n" + opening + "\r\nat the bottom\r\n").encode()


def test_html_cells_share_their_rows_line_and_a_br_or_a_block_ends_one() -> None:
    html = ("<html><head><title>t</title><style>p{}</style></head><body><script>var x = 1;</script>"
            "<table><tr><td>4111</td><td>1111</td><td>1111</td><td>1111</td></tr>"
            "<tr><th>IBAN</th><td>FR14 2004<br>1010 0505</td></tr></table>"
            "<p>Card 5555 5555\n   5555 4444 on file.</p><div>one</div><div>two</div>"
            "<pre>a  b\n c</pre><!-- a comment 1234 --></body></html>")
    text = parse.html_to_text(html)
    assert text.splitlines() == ["4111 1111 1111 1111", "IBAN FR14 2004", "1010 0505", "",
                                 "Card 5555 5555 5555 4444 on file.", "", "one", "two", "a b", "c"]
    assert "var x" not in text and "p{}" not in text and "1234" not in text and "t\n" not in text
    assert "IBAN FR14 2004\n1010 0505" in text


def test_deeply_nested_html_is_walked_without_recursion() -> None:
    assert parse.html_to_text("<div>" * 200 + "deep words" + "</div>" * 200) == "deep words"
    assert isinstance(parse.html_to_text("<div>" * 50_000 + "deeper" + "</div>" * 50_000), str)  # libxml2's own cap


@pytest.mark.parametrize(("data", "why"), [
    (_nested(1100), "only its envelope was read: MIME parts nested more than 32 deep"),
    (_nested_messages(1100), "only its envelope was read: MIME parts nested more than 32 deep"),
    (_parts(parse.MAX_PARTS), "only its envelope was read: more than 1000 MIME parts"),
])
def test_a_message_past_a_bound_is_read_by_its_envelope_and_says_why(data: bytes, why: str) -> None:
    parsed = parse.parse(data, file_time=12.0)
    assert parsed.unreadable == why
    assert parsed.sender == ("mallory@example.net" if b"Mallory" in data else "eve@example.net")
    assert parsed.subject in ("Parts", "Deep") and parsed.text == "" and parsed.attachments == ()


def test_the_bounds_themselves_are_read_whole() -> None:
    parsed = parse.parse(_parts(parse.MAX_PARTS - 3))
    assert parsed.unreadable == "" and parsed.text.strip() == "The text." and len(parsed.attachments) == 997
    assert parse.parse(_nested(parse.MAX_DEPTH - 1)).unreadable == ""


def test_an_empty_authentication_results_is_no_verdict_and_no_error() -> None:
    data = (b"From: Rita <rita@example.net>\r\nAuthentication-Results: ;\r\nAuthentication-Results:\r\n"
            b"Subject: Hello\r\n\r\nThe text.\r\n")
    parsed = parse.parse(data, authserv_id=sample.OWN_SERVER)
    assert parsed.unreadable == "" and parsed.auth == parse.UNAUTHENTICATED and parsed.text.strip() == "The text."


def test_any_failure_while_reading_fails_that_part_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(message):
        raise LookupError("an unknown charset")

    monkeypatch.setattr(parse, "_text_of", broken)
    parsed = parse.parse(bytes(sample.message(subject="Still here", sender="Ada <ada@example.net>")))
    assert parsed.subject == "Still here" and parsed.sender == "ada@example.net" and parsed.text == ""
    assert parsed.unreadable == "its text could not be read"


def test_a_parse_past_its_time_is_read_by_its_envelope(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parse, "MAX_SECONDS", -1.0)
    parsed = parse.parse(_parts(3))
    assert parsed.unreadable == "only its envelope was read: parsing took longer than -1 s"
    assert parsed.subject == "Parts"


def test_a_file_past_the_size_bound_is_read_up_to_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parse, "MAX_BYTES", 1024 * 1024)
    path = tmp_path / "long"
    path.write_bytes(b"From: Lou <lou@example.net>\r\nSubject: Long\r\n\r\n" + b"0123456789abcde\n" * 100_000)
    parsed = parse.parse_file(path)
    assert parsed.unreadable == "only its first 1 MB were read" and parsed.subject == "Long"
    assert 1024 * 1024 - 100 < len(parsed.text) <= 1024 * 1024


def test_a_long_text_is_masked_then_cut_and_a_number_across_the_cut_is_hidden() -> None:
    card = "4111 1111 1111 1111"
    text = "x" * 990 + f" card {card} " + "y" * 5000
    parsed = parse.parse(bytes(sample.message(subject="Cut", body=text)))
    shown = parse.masked(parsed, 1000)
    assert shown.cut and len(shown.text) == 1000 and "4111" not in shown.text
    assert not parse.masked(parsed).cut


def _account(root: Path) -> Account:
    return Account("personal", root, ("pat@example.org",), sample.OWN_SERVER)


def test_a_message_read_in_part_is_indexed_recorded_and_not_read_again(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "Mail"
    path = sample.deliver(root / "INBOX", _nested(1100))
    sample.deliver(root / "INBOX", sample.message(subject="Fine"))
    connection = index.connect(tmp_path / "mail-index.sqlite")
    counts = index.refresh(connection, [_account(root)])
    assert counts["read"] == 2 and counts["unreadable"] == 1
    assert index.unreadable(connection, "personal") == (
        1, [(f"INBOX/cur/{path.name}", "only its envelope was read: MIME parts nested more than 32 deep")])
    assert [r[0] for r in connection.execute("SELECT subject FROM messages ORDER BY subject")] == ["Deep", "Fine"]
    reads = []
    monkeypatch.setattr(index, "parse_file", lambda *a: reads.append(a) or parse.parse_file(*a))
    index.refresh(connection, [_account(root)], full=True)
    assert reads == []
    path.write_bytes(bytes(sample.message(subject="Mended")))
    index.refresh(connection, [_account(root)], full=True)
    assert len(reads) == 1 and index.unreadable(connection, "personal") == (0, [])


def test_rows_parsed_before_a_deadline_are_kept(tmp_path: Path) -> None:
    root = tmp_path / "Mail"
    for number in range(5):
        sample.deliver(root / "INBOX", sample.message(subject=f"Message {number}"))
    connection = index.connect(tmp_path / "mail-index.sqlite")
    looks = []

    def check() -> None:  # a look per file listed (5), then per file parsed: the deadline passes at the third
        looks.append(1)
        if len(looks) == 5 + 3:
            connection.set_progress_handler(lambda: 1, 1)
            raise DeadlinePassed("the call took longer than 30 s")

    with pytest.raises(DeadlinePassed):
        index.refresh(connection, [_account(root)], check=check)
    connection.set_progress_handler(None, 0)
    kept = connection.execute("SELECT count(*) FROM messages").fetchone()[0]
    assert kept == 3
    assert index.refresh(connection, [_account(root)])["read"] == 2


@pytest.mark.parametrize("subject", [
    "Hi\r\nBcc: eve@example.com",
    "=?utf-8?q?Hi=0D=0ABcc=3A_eve=40example.com?=",
    "=?utf-8?b?SGkNCkJjYzogZXZlQGV4YW1wbGUuY29t?=",
    "=?utf-8?q?=3D=3Futf-8=3Fq=3FHi=3D0D=3D0ABcc=3D3A=5Feve=3D40example.com=3F=3D?=",
    "Hi\x85Bcc: eve@example.com",
    "=?utf-8?q?Hi=C2=85Bcc=3A_eve=40example.com?=",
    "Hi\u2028Bcc: eve@example.com",
    "=?utf-8?q?Hi=E2=80=A9Bcc=3A_eve=40example.com?=",
    "Hi\u202eevil",
    "Hi\x00there",
])
def test_a_subject_holding_a_break_in_any_form_is_refused(subject: str) -> None:
    with pytest.raises(ToolError, match="line break or a control character"):
        drafts._one_line("subject", subject)


def test_a_subject_decodes_to_what_is_set() -> None:
    assert drafts._one_line("subject", "=?utf-8?q?Caf=C3=A9?= at noon") == "Café at noon"
    assert drafts._one_line("subject", "Plain words") == "Plain words"
    with pytest.raises(ToolError):
        drafts._one_line("subject", "=?utf-8?q?" * 1 + "=3D=3Futf-8=3Fq=3F=3D3D=3D3Futf-8=3D3Fq=3D3F=3D3D3D?=" * 3)


def test_the_originals_subject_is_cleaned_and_settles() -> None:
    double = "=?utf-8?q?=3D=3Futf-8=3Fq=3FHi=3D0D=3D0ABcc=3D3A=5Feve=3D40example.com=3F=3D?="
    assert drafts._reply_subject(double) == "Re: Hi Bcc: eve@example.com"
    assert drafts._reply_subject("Re: line\u2028break\u200d") == "Re: line break"
    nested = "Hi"
    for _ in range(8):
        nested = "=?utf-8?q?" + "".join(f"={b:02X}" for b in nested.encode()) + "?="
    cleaned = drafts._reply_subject(nested)
    assert "=?" not in cleaned.replace("= ?", "") and drafts.settled(cleaned) == cleaned


@pytest.mark.parametrize("value", [
    "=?utf-8?q?Ada=0D=0ABcc=3A_eve=40example.com?= <ada@example.net>",
    '"=?utf-8?q?Ada=0ABcc=3A?=" <ada@example.net>',
    "Ada\u2028Bcc <ada@example.net>",
])
def test_a_recipient_with_a_break_once_decoded_is_refused(value: str) -> None:
    with pytest.raises(ToolError, match="line break or a control character"):
        drafts.recipient(value)


def test_only_plain_ids_are_answered() -> None:
    assert drafts._message_ids(("a@example.net", "=?utf-8?q?x=0D=0A?=", "b\x00@example.net", "c@example.net")) == [
        "a@example.net", "c@example.net"]


def test_the_draft_is_read_back_and_refused_when_a_header_was_added() -> None:
    headers = [("From", drafts.recipient("pat@example.org")), ("To", [drafts.recipient("Ada <ada@example.net>")]),
               ("Subject", "Fine")]
    data = drafts.draft_bytes(headers, "Body.")
    back = email.parser.BytesParser(policy=email.policy.default).parsebytes(data)
    assert [k.lower() for k in back] == ["from", "to", "subject", "content-type", "content-transfer-encoding",
                                         "mime-version"]
    # A value that skipped the checks: a Python without the fix of CVE-2024-6923 would write the Bcc line, and
    # the reading back refuses it; one with the fix encodes it. Either way no draft holds a header not set.
    try:
        data = drafts.draft_bytes([*headers[:2], ("Subject", "=?utf-8?q?Hi=0D=0ABcc=3A_eve=40example.com?=")],
                                  "Body.")
    except ToolError as error:
        assert "would not be the ones the gateway set" in str(error)
    else:
        back = email.parser.BytesParser(policy=email.policy.default).parsebytes(data)
        assert "bcc" not in [k.lower() for k in back] and b"\nBcc:" not in data


def test_a_part_of_too_many_header_fields_is_read_by_its_envelope() -> None:
    data = b"From: Eve <eve@example.net>\r\nSubject: Fields\r\n" + b"X-Filler: y\r\n" * (parse.MAX_HEADERS + 1)
    parsed = parse.parse(data + b"\r\nThe text.\r\n")
    assert parsed.unreadable == "only its envelope was read: more than 1000 header fields in one part"
    assert parsed.subject == "Fields" and parsed.sender == "eve@example.net"


def test_a_file_of_too_many_lines_is_read_up_to_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parse, "MAX_LINES", 1000)
    parsed = parse.parse(b"From: Lou <lou@example.net>\r\nSubject: Lines\r\n\r\n" + b"a\n" * 5000)
    assert parsed.unreadable == "only its first 1,000 lines were read"
    assert parsed.text.count("a") == 1000 - 3


def test_a_huge_subject_is_read_cut_and_masked_before_it_is_cut() -> None:
    parsed = parse.parse(b"From: a@example.net\r\nSubject: " + b"word " * 100_000 + b"\r\n\r\nText.\r\n")
    assert len(parsed.subject) <= parse.MAX_HEADER_CHARS
    shown = parse.masked(parsed)
    assert len(shown.subject) == parse.MAX_FIELD
    card = parse.masked(parse.parse(b"From: a@example.net\r\nSubject: " + b"x" * (parse.MAX_FIELD - 10)
                                    + b" 4111 1111 1111 1111\r\n\r\nText.\r\n"))
    assert "4111" not in card.subject


def test_plain_values_of_every_kind_are_written_and_read_back_whole() -> None:
    to = [drafts.recipient("Zoë Ünïcode <zoe@example.net>"), drafts.recipient("bounce+x=example.com@example.org"),
          *(drafts.recipient(f"Person Number {i} <p{i}@example.net>") for i in range(20))]
    subject = drafts._reply_subject("Ünïcode sübject " * 60)
    references = " ".join(f"<ref{i}.long.identifier@mail.example.net>" for i in range(40))
    data = drafts.draft_bytes([("From", drafts.recipient("pat@example.org")), ("To", to), ("Subject", subject),
                               ("References", references)], "Body\nFrom me\n")
    back = email.parser.BytesParser(policy=email.policy.default).parsebytes(data)
    assert [a.addr_spec for a in back["To"].addresses] == [a.addr_spec for a in to]
    assert back["To"].addresses[0].display_name == "Zoë Ünïcode" and str(back["Subject"]) == subject
    assert " ".join(str(back["References"]).split()) == references


def test_read_message_names_at_most_fifty_recipients_and_counts_the_rest(gateway_home: Path) -> None:
    import gateway_mail
    from gateway_mail.mail import answers

    from gateway.testing import make_gateway

    root = gateway_home / "Mail"
    crowd = ", ".join(f"p{i}@example.net" for i in range(3000))
    sample.deliver(root / "INBOX", sample.message(subject="Crowd", to=crowd, message_id="crowd@example.org"))
    gateway = make_gateway([gateway_mail], home=gateway_home, config=sample.config(root))
    answer = gateway.call("read_message", {"address": "mid:crowd@example.org"})
    assert len(answer.data["to"]) == answers.RECIPIENTS_SHOWN and answer.data["to_more"] == 2950
    assert "p49@example.net and 2950 more" in answer.text


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 70_000])
def test_a_message_file_is_read_whole_up_to_the_bound_and_no_further(tmp_path: Path, size: int) -> None:
    from spamfilter import read_up_to

    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    path = tmp_path / "message"
    path.write_bytes(data)
    for bound in (size + 1, size, max(size - 1, 0), 10):
        with open(path, "rb", buffering=0) as handle:
            assert read_up_to(handle, bound) == data[:bound]

