"""The shared maildirs library: a dot in a folder's name means nesting only where the layout present says so; the
accounts from the table the core gives; conversations joined by the ids their messages name."""

from __future__ import annotations

from pathlib import Path

from maildirs import Conversations, accounts_in, blocked_in, folders, head_of
from maildirs.authentication import FORGED, PASS, UNAUTHENTICATED, passed_by, verdict
from maildirs.conversations import facts_of


def _make(root: Path, *names: str) -> None:
    for name in names:
        for sub in ("cur", "new", "tmp"):
            (root / name / sub).mkdir(parents=True, exist_ok=True)


def _names(root: Path) -> list[str]:
    return [f.name for f in folders(root)]


def test_a_top_level_name_with_a_dot_stays_one_folder(tmp_path: Path) -> None:
    _make(tmp_path, "INBOX", "v1.2", "Archive/2026")  # mbsync, SubFolders Verbatim
    assert _names(tmp_path) == ["INBOX", "Archive/2026", "v1.2"]


def test_a_dotted_name_alone_at_the_top_stays_one_folder(tmp_path: Path) -> None:
    _make(tmp_path, "INBOX", "v1.2")  # no real subfolder, and no folder "v1" beside it
    assert _names(tmp_path) == ["INBOX", "v1.2"]


def test_offlineimap_flat_names_nest_under_the_folder_beside_them(tmp_path: Path) -> None:
    _make(tmp_path, "INBOX", "INBOX.Sent", "INBOX.Lists.python", "release.notes")
    assert _names(tmp_path) == ["INBOX", "INBOX/Lists/python", "INBOX/Sent", "release.notes"]


def test_maildir_plus_plus_dots_are_nesting(tmp_path: Path) -> None:
    for sub in ("cur", "new", "tmp"):
        (tmp_path / sub).mkdir()
    _make(tmp_path, ".Archive.2026", ".v1")
    assert _names(tmp_path) == ["INBOX", "Archive/2026", "v1"]


def test_the_accounts_come_from_the_table_given_with_relative_maildirs_from_the_config_folder(tmp_path: Path) -> None:
    table = {"accounts": [{"name": "p", "maildir": "Mail"}], "blocked": ["@pest.example.net", 3]}
    [account] = accounts_in(table, tmp_path)
    assert account.maildir == tmp_path / "Mail"
    assert accounts_in({}, tmp_path) == [] and blocked_in(table) == ["@pest.example.net"]


def test_a_conversation_shares_its_owners_across_a_broken_references_chain() -> None:
    conversations = Conversations()
    conversations.add(("root@example.org",), frozenset({"vault"}))
    conversations.add(("reply@example.org", "root@example.org"), frozenset())
    # References lost its first entry: joined through the reply it still names.
    conversations.add(("late@example.org", "reply@example.org"), frozenset({"garden"}))
    conversations.add(("other@example.org",), frozenset())
    assert conversations.owners_of(["late@example.org"]) == {"vault", "garden"}
    assert conversations.owners_of(["root@example.org"]) == {"vault", "garden"}
    assert conversations.owners_of(["other@example.org"]) == frozenset()
    assert conversations.owners_of(["unknown@example.org"]) == frozenset()


def test_a_files_ids_subject_and_sender_are_read_from_its_headers(tmp_path: Path) -> None:
    path = tmp_path / "1.eml"
    path.write_bytes(b"From: Ada <ada@example.org>\r\nSubject: =?utf-8?q?Caf=C3=A9_plans?=\r\n"
                     b"Message-ID: <b@example.org>\r\nIn-Reply-To: <a@example.org>\r\n"
                     b"References: <r@example.org>\r\n <a@example.org>\r\n\r\nReferences: <not@example.org>\r\n")
    assert head_of(path) == (("b@example.org", "a@example.org", "r@example.org"), "Caf\u00e9 plans",
                             "Ada <ada@example.org>")
    assert head_of(tmp_path / "gone.eml") is None


def test_a_conversation_gives_every_id_it_holds_for_the_ties_to_be_asked_about() -> None:
    conversations = Conversations()
    conversations.add(("root@example.org",), frozenset())
    conversations.add(("reply@example.org", "root@example.org"), frozenset())
    conversations.add(("late@example.org", "reply@example.org"), frozenset())
    conversations.add(("other@example.org",), frozenset())
    whole = {"root@example.org", "reply@example.org", "late@example.org"}
    assert conversations.ids_with(["late@example.org"]) == whole
    assert conversations.ids_with(["root@example.org", "other@example.org"]) == whole | {"other@example.org"}
    assert conversations.ids_with(["unknown@example.org"]) == {"unknown@example.org"}


def test_only_the_accounts_own_server_authenticates_a_sender() -> None:
    own = "mx.example.org; spf=pass smtp.mailfrom=lee@law.example.net; dkim=pass header.d=law.example.net"
    other = "relay.example.net; dmarc=pass header.from=law.example.net"
    assert verdict([own], "mx.example.org", "lee@law.example.net") == PASS
    assert verdict([own], "", "lee@law.example.net") == UNAUTHENTICATED  # no authserv_id: nothing proves it
    assert verdict([other], "mx.example.org", "lee@law.example.net") == UNAUTHENTICATED  # the sender's own word
    assert verdict([own], "mx.example.org", "lee@elsewhere.example.com") == FORGED  # passes, but not aligned
    assert verdict(["mx.example.org; dmarc=fail header.from=law.example.net"], "mx.example.org",
                   "lee@law.example.net") == FORGED
    assert passed_by([own, other], "lee@law.example.net") == ("mx.example.org", "relay.example.net")
    assert passed_by([own], "lee@elsewhere.example.com") == ()


def test_a_files_facts_hold_the_servers_that_passed_its_sender_and_its_recipients(tmp_path: Path) -> None:
    path = tmp_path / "1.eml"
    path.write_bytes(b"Authentication-Results: mx.example.org;\r\n spf=pass smtp.mailfrom=ada@example.org\r\n"
                     b"Authentication-Results: relay.example.net; spf=fail smtp.mailfrom=ada@example.org\r\n"
                     b"From: Ada <ADA@example.org>\r\nTo: Lee <lee@law.example.net>, bo@example.com\r\n"
                     b"Cc: Ada <ada@example.org>\r\nSubject: Plans\r\nMessage-ID: <b@example.org>\r\n\r\nText\r\n")
    facts = facts_of(path)
    assert facts is not None and facts.passed_by == ("mx.example.org",)
    assert facts.recipients == ("lee@law.example.net", "bo@example.com", "ada@example.org")
    assert (facts.ids, facts.subject, facts.sender) == (("b@example.org",), "Plans", "Ada <ADA@example.org>")
    assert facts_of(tmp_path / "gone.eml") is None
