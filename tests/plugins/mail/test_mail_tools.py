"""The four tools and the two resources on a Maildir of invented mail, through the gateway's own call path."""

from __future__ import annotations

import email
import email.policy
import time
from pathlib import Path

import gateway_mail
import pytest
from gateway_mail.mail import sample

from gateway.testing import make_gateway, read_audit

CANARY = "zebracanary"


@pytest.fixture
def world(gateway_home: Path):
    root = gateway_home / "Mail" / "personal"
    ids = sample.world(root, CANARY, time.time())

    def gateway(projects=sample.PROJECTS, outside_projects: bool | None = None, **mail):
        config = sample.config(root, **mail)
        if outside_projects is not None:
            config["access"] = {"outside_projects": outside_projects}
        return make_gateway([gateway_mail], home=gateway_home, config=config, projects=projects)

    return root, ids, gateway


def test_the_tools_and_their_hints(world) -> None:
    _root, _ids, gateway = world
    listed = {t.name: t.tool for t in gateway().catalogue().tools}
    assert list(listed)[:4] == ["porch", "search_mail", "read_message", "draft_reply"]
    for name in ("porch", "search_mail", "read_message"):
        assert listed[name].read_only and not listed[name].destructive and not listed[name].open_world
    draft = listed["draft_reply"]
    assert not draft.read_only and not draft.destructive and not draft.open_world
    assert draft.private_arguments == ("body",)
    schema = listed["search_mail"].input_schema
    assert set(schema["properties"]) == {"query", "account", "folder", "days", "limit"}
    assert schema["required"] == ["query"] and schema["properties"]["limit"]["default"] == 20
    assert set(draft.input_schema["properties"]) == {"address", "body", "to", "cc", "subject", "reply_all"}
    assert set(draft.input_schema["required"]) == {"address", "body"}
    assert set(listed["porch"].input_schema["properties"]) == {"open"}
    assert listed["read_message"].input_schema["required"] == ["address"]


def test_search_counts_kept_hits_whatever_the_words(world) -> None:
    _root, _ids, gateway = world
    served = gateway()
    answers = [served.call("search_mail", {"query": words}) for words in ("plumtree", CANARY, "nothinghere")]
    assert all(not a.is_error for a in answers)
    # Kept: the vault's message and its reply, and the two claiming the closed client's address (a closed
    # project's sender route keeps mail whether or not the account's server authenticated it).
    assert {a.data["left_out"] for a in answers} == {4} and {a.data["blocked"] for a in answers} == {1}
    assert all(CANARY not in a.text and CANARY not in str(a.data) for a in answers)
    assert answers[1].data["hits"] == []
    # The scope narrows the count: nothing of the closed project is in the archive folder.
    assert served.call("search_mail", {"query": "plumtree", "folder": "Archive"}).data["left_out"] == 0
    # With an account and days too, whatever the words (counts read from the kept ids, then the scope).
    for words in ("plumtree", CANARY, "nothinghere"):
        scoped = served.call("search_mail", {"query": words, "account": "personal", "days": 7}).data
        assert (scoped["left_out"], scoped["blocked"]) == (4, 1)


def test_search_gives_newest_first_within_its_scope(world) -> None:
    _root, ids, gateway = world
    served = gateway()
    hits = served.call("search_mail", {"query": "plumtree"}).data["hits"]
    dates = [h["date"] for h in hits]
    assert dates == sorted(dates, reverse=True)
    assert f"mid:{ids['old']}" in [h["address"] for h in hits]
    recent = served.call("search_mail", {"query": "plumtree", "days": 7}).data["hits"]
    assert f"mid:{ids['old']}" not in [h["address"] for h in recent]
    archive = served.call("search_mail", {"query": "plumtree", "folder": "Archive/2026"}).data["hits"]
    assert [h["address"] for h in archive] == [f"mid:{ids['old']}"]
    assert "newest first" in served.call("search_mail", {"query": "plumtree"}).text


def test_search_refuses_what_it_cannot_do(world) -> None:
    _root, _ids, gateway = world
    served = gateway()
    assert "no account named" in served.call("search_mail", {"query": "x", "account": "work"}).text
    assert "FTS5" in served.call("search_mail", {"query": '"unbalanced'}).text
    long = served.call("search_mail", {"query": " ".join(["w"] * 40)})
    assert long.is_error and "over the limit of 32" in long.text
    assert served.call("search_mail", {"query": "x", "limit": 0}).is_error
    assert served.call("search_mail", {"query": "x", "unknown": 1}).is_error


def test_a_closed_conversation_is_closed_whole(world) -> None:
    _root, ids, gateway = world
    served = gateway()
    for role in ("vault", "vault_reply"):
        refused = served.call("read_message", {"address": f"mid:{ids[role]}"})
        assert refused.is_error and "closed to AI agents" in refused.text and "Vault" not in refused.text


def test_a_closed_sender_route_keeps_unauthenticated_mail_and_an_open_one_needs_proof(world) -> None:
    _root, ids, gateway = world
    served = gateway()
    # Both claim the closed client's address, neither authenticated by the account's own server: closing errs
    # towards keeping, so the closed project's sender route keeps both (a forger gains nothing by being kept).
    for role in ("forged", "claimed"):
        refused = served.call("read_message", {"address": f"mid:{ids[role]}"})
        assert refused.is_error and "closed to AI agents" in refused.text
    # Opened, the same route needs proof: unauthenticated mail is of no project (shown while outside projects
    # are open, kept while they are closed), said forged when it is.
    opened = [p if p["id"] != "client" else {**p, "ai": True} for p in sample.PROJECTS]
    forged = gateway(projects=opened).call("read_message", {"address": f"mid:{ids['forged']}"})
    assert not forged.is_error and "FORGED" in forged.text and forged.data["forged"] is True
    claimed = gateway(projects=opened).call("read_message", {"address": f"mid:{ids['claimed']}"})
    assert not claimed.is_error and "not checked" in claimed.text
    assert gateway(projects=opened, outside_projects=False).call(
        "read_message", {"address": f"mid:{ids['claimed']}"}).is_error
    # Authenticated, the sender routes it: the plumber's open project, even while outside projects are closed.
    assert not gateway(outside_projects=False).call("read_message", {"address": f"mid:{ids['plumber']}"}).is_error
    # A subject route still places unauthenticated mail.
    by_subject = [*opened, {"id": "words", "ai": False, "subjects": ["Other words"]}]
    assert gateway(projects=by_subject).call("read_message", {"address": f"mid:{ids['claimed']}"}).is_error


def test_outside_projects_closed_gives_only_opened_projects_mail(world) -> None:
    _root, ids, gateway = world
    served = gateway(outside_projects=False)
    hits = served.call("search_mail", {"query": "plumber OR plumtree"}).data["hits"]
    assert [h["address"] for h in hits] == [f"mid:{ids['plumber']}"]
    assert served.call("read_message", {"address": f"mid:{ids['friend']}"}).is_error


def test_blocked_senders_are_only_counted(world) -> None:
    _root, ids, gateway = world
    served = gateway()
    assert "blocked" in served.call("read_message", {"address": f"mid:{ids['blocked']}"}).text
    porch = served.call("porch", {})
    assert porch.data["accounts"][0]["blocked"] == 1 and "You won" not in porch.text


def test_read_message_gives_the_envelope_then_the_framed_masked_text(world) -> None:
    root, ids, gateway = world
    answer = gateway().call("read_message", {"address": f"mid:{ids['plumber']}"})
    lines = answer.text.splitlines()
    assert lines[0] == f"Address: mid:{ids['plumber']}"
    assert "From: Joe Plumber <joe@plumbing.example.com>" in lines
    assert "Attachment 1: invoice.pdf (application/pdf, 17 bytes)" in lines
    assert "<<<data" in answer.text and "3M02 606" not in answer.text and "4111 1111" not in answer.text
    assert "01 23 45 67 89" in answer.text and "2026-118" in answer.text  # a phone, an invoice number: left
    assert answer.data["attachments"] == [{"part": 1, "name": "invoice.pdf", "type": "application/pdf", "size": 17}]
    assert answer.data["file"].startswith("INBOX/new/") and not answer.data["file"].startswith("/")
    by_path = gateway().call("read_message", {"address": str(root / answer.data["file"])})
    assert not by_path.is_error and by_path.data["address"] == f"mid:{ids['plumber']}"
    mark = answer.text.split("<<<data ", 1)[1][:16]
    assert mark not in by_path.text  # a fresh mark for each answer


def test_codes_are_hidden_wherever_they_are_written(world) -> None:
    _root, ids, gateway = world
    served = gateway()
    code = served.call("read_message", {"address": f"mid:{ids['code']}"})
    for form in ("482 913", "482-913", "48 29 13", "482913", "abcdef0123456789", "accounts.example.com"):
        assert form not in code.text and form not in str(code.data), form
    assert "Subject: [code] is your code" in code.text
    table = served.call("read_message", {"address": f"mid:{ids['table']}"})
    assert "[code]" in table.text
    assert not any(line.strip() in "739156" and line.strip() for line in table.text.splitlines()[12:-1])
    assert served.call("search_mail", {"query": "482913"}).data["hits"] == []
    porch = served.call("porch", {})
    assert "A code arrived from Bank <noreply@bank.example.com>" in porch.text and not any(code in porch.text for code in ("482 913", "482913"))


def test_a_message_giving_a_password_is_kept_whole(world) -> None:
    _root, ids, gateway = world
    answer = gateway().call("read_message", {"address": f"mid:{ids['password']}"})
    assert "Xy7!pq9Zk" not in answer.text and "112233" not in answer.text
    assert "a message giving a password, kept from agents" in answer.text


def test_encrypted_mail_gives_its_envelope_only(world) -> None:
    _root, ids, gateway = world
    answer = gateway().call("read_message", {"address": f"mid:{ids['encrypted']}"})
    assert "Encrypted: yes" in answer.text and "PGP MESSAGE" not in answer.text and "<<<data" not in answer.text


def test_the_porch_keeps_to_the_admin_windows(world) -> None:
    _root, _ids, gateway = world
    hour = time.localtime().tm_hour
    closed_window = f"{(hour + 2) % 24:02d}:00-{(hour + 3) % 24:02d}:00"
    served = gateway(admin_windows=[closed_window])
    counts = served.call("porch", {})
    assert not counts.data["full"] and "counts only" in counts.text and "Invoice" not in counts.text
    assert counts.data["window"]["next_opens"] == f"{(hour + 2) % 24:02d}:00"
    opened = served.call("porch", {"open": True})
    assert opened.data["full"] and "Invoice from the plumber" in opened.text
    # The forged message is kept by the closed client's sender route: counted as kept, not as set aside.
    assert opened.data["accounts"][0]["left_out"] == 4 and opened.data["accounts"][0]["set_aside"] == 0


def test_the_resources_give_the_tools_text(world) -> None:
    _root, ids, gateway = world
    served = gateway()
    assert served.read("sioul:porch").text.startswith("The Porch")
    message = served.read(f"mid:{ids['friend']}")
    assert "Does Tuesday work for you?" in message.text
    assert served.read(f"mid:{ids['vault']}").is_error


def _draft_files(root: Path) -> list[Path]:
    return sorted((root / "Drafts" / "cur").iterdir())


def test_a_draft_reply_is_a_new_file_in_drafts(world) -> None:
    root, ids, gateway = world
    answer = gateway().call("draft_reply", {"address": f"mid:{ids['friend']}", "body": "Tuesday works.\nPat",
                                            "reply_all": True})
    assert not answer.is_error, answer.text
    [path] = _draft_files(root)
    assert path.name.endswith(":2,D") and not list((root / "Drafts" / "tmp").iterdir())
    assert answer.data["draft"].startswith("sioul:draft/") and root / answer.data["file"] == path
    draft = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    assert draft["From"] == "pat@example.org" and draft["To"] == "ada@example.net"
    assert draft["In-Reply-To"] == f"<{ids['friend']}>" and draft["References"] == f"<{ids['friend']}>"
    assert draft["Subject"] == "Re: Tuesday?" and draft["Message-ID"].endswith("@example.org>")
    assert draft.get_content().strip() == "Tuesday works.\nPat" and draft["Cc"] is None  # only Pat was copied
    assert "nothing was sent" in answer.text.lower() or "sends it themselves" in answer.text


def test_draft_fields_are_checked(world) -> None:
    root, ids, gateway = world
    served = gateway()
    address = f"mid:{ids['friend']}"
    for arguments in (
        {"to": ["ada@example.net, eve@example.com"]},
        {"to": ["ada@example.net eve@example.com"]},
        {"to": ['"eve@example.com" <ada@example.net>']},
        {"to": ["ada@example.net\r\nBcc: eve@example.com"]},
        {"cc": ["not an address"]},
        {"subject": "Hi\r\nBcc: eve@example.com"},
        {"subject": "Hi\nthere"},
    ):
        refused = served.call("draft_reply", {"address": address, "body": "x", **arguments})
        assert refused.is_error, arguments
    assert _draft_files(root) == []
    closed = served.call("draft_reply", {"address": f"mid:{ids['vault_reply']}", "body": "x"})
    assert closed.is_error and "closed to AI agents" in closed.text and _draft_files(root) == []


def test_two_drafts_never_share_a_file_and_the_body_is_logged_by_length(world, gateway_home: Path) -> None:
    root, ids, gateway = world
    served = gateway()
    for _ in range(2):
        served.call("draft_reply", {"address": f"mid:{ids['friend']}", "body": "secret words of the reply"})
    assert len(_draft_files(root)) == 2
    entries = [e for e in read_audit(gateway_home) if e.get("tool") == "draft_reply"]
    assert entries and all("secret words" not in str(e) for e in entries)
    assert entries[0]["arguments"]["body"] == {"length": len("secret words of the reply")}


def test_unknown_keys_turn_the_plugin_off(world) -> None:
    _root, _ids, gateway = world
    served = gateway(maildir="~/Mail")
    catalogue = served.catalogue()
    assert any("unknown key in [plugins.mail]: maildir" in p for p in catalogue.problems)
    assert catalogue.tools and all(listed.off for listed in catalogue.tools)  # listed, each call saying why
    assert "unknown key in [plugins.mail]: maildir" in served.call("porch", {}).text
    bad_account = gateway(admin_windows=["soon"])
    assert "admin_windows" in bad_account.call("porch", {}).text


def test_folder_routes_take_the_folder_and_those_under_it(world) -> None:
    _root, ids, gateway = world
    served = gateway(projects=[*sample.PROJECTS, {"id": "past", "ai": False, "folders": ["Archive"]}])
    assert served.call("read_message", {"address": f"mid:{ids['old']}"}).is_error
    assert served.call("search_mail", {"query": "plumtree"}).data["left_out"] == 5
    assert "Last year" not in served.call("search_mail", {"query": "plumtree"}).text


def test_the_porch_sets_junk_aside_and_leaves_the_persons_own_folders_out(world) -> None:
    root, _ids, gateway = world
    sample.deliver(root / "Junk", sample.message(subject="Cheap pills", date=time.time() - 60), flags=None)
    sample.deliver(root / "Sent", sample.message(sender="pat@example.org", subject="Mine", date=time.time() - 60),
                   flags=None)
    account = gateway().call("porch", {}).data["accounts"][0]
    assert account["new"] == 1 and account["set_aside"] == 1  # the junk one (the forged one is the client's, kept)
    assert [m["subject"] for m in account["new_messages"]] == ["Invoice from the plumber"]


def test_a_subject_hidden_by_a_mask_opens_no_project(world) -> None:
    """An open project's subject route must take the masked subject itself: text a label hides opens nothing."""
    _root, ids, gateway = world
    code = f"mid:{ids['code']}"  # subject "482913 is your code", masked "[code] is your code"
    hidden = gateway(projects=[{"id": "bank", "ai": True, "subjects": ["2913"]}], outside_projects=False)
    answer = hidden.call("search_mail", {"query": "verification"})
    assert answer.data["hits"] == [] and answer.data["left_out"] >= 1
    shown = gateway(projects=[{"id": "bank", "ai": True, "subjects": ["is your code"]}], outside_projects=False)
    assert [h["address"] for h in shown.call("search_mail", {"query": "verification"}).data["hits"]] == [code]


def test_a_closed_subject_route_may_take_what_a_label_hides() -> None:
    from gateway_mail.mail.gating import _pattern, may_take

    def takes(route: str, masked_subject: str) -> bool:
        return may_take(route.casefold(), _pattern(masked_subject.casefold()))

    assert takes("ACME-2291", "Ticket ACME-[code]: your login code is [code]")
    assert takes("2291", "Your code is [code]") and takes("code is 48", "Your code is [code]")
    assert not takes("ACME-2291", "Your code is [code]")  # a code hides no letter
    assert not takes("Invoice", "Your code is [code]") and not takes("ME-12-x", "ACME-[code]")
    assert takes("anything at all", "See [link] now") and takes("Plumber", "[IBAN …0189] due")
    assert not takes("Plumber", "Nothing hidden here")


def test_a_draft_carries_the_accounts_display_name(world) -> None:
    root, ids, gateway = world
    answer = gateway(accounts=[{"name": "personal", "maildir": str(root), "addresses": ["pat@example.org"],
                                "from_name": "Pat Example"}]).call(
        "draft_reply", {"address": f"mid:{ids['friend']}", "body": "Tuesday works."})
    assert not answer.is_error, answer.text
    [path] = _draft_files(root)
    draft = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    assert draft["From"] == "Pat Example <pat@example.org>" and "From: Pat Example <pat@example.org>" in answer.text
    broken = gateway(accounts=[{"name": "personal", "maildir": str(root), "from_name": "Pat\r\nBcc: x@example.net"}])
    refused = broken.call("search_mail", {"query": "x"})
    assert refused.is_error and "from_name must be a name on one line" in refused.text


def test_read_message_names_the_messages_open_projects_and_never_a_closed_one(world) -> None:
    root, ids, gateway = world
    plumber = gateway().call("read_message", {"address": f"mid:{ids['plumber']}"})
    assert not plumber.is_error and "Projects: plumbing" in plumber.text and plumber.data["projects"] == ["plumbing"]
    friend = gateway().call("read_message", {"address": f"mid:{ids['friend']}"})
    assert "Projects:" not in friend.text and friend.data["projects"] == []
    closed = gateway(projects=[dict(p, ai=False) if p["id"] == "plumbing" else p for p in sample.PROJECTS])
    kept = closed.call("read_message", {"address": f"mid:{ids['plumber']}"})
    assert kept.is_error and "plumbing" not in kept.text
