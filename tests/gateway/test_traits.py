"""One decision for every plugin: each route kind on the traits a thing reports, the proof rule, masked words,
folders as the tools print them, hard links, phone numbers, addresses as cards and invitations write them."""

from __future__ import annotations

import os

import pytest

from gateway import Person, Reason, Traits
from gateway.gate.access import Gate, Manifest


def gate_of(*projects, outside: bool = True) -> Gate:
    return Gate(Manifest.from_dict({"project": list(projects)}), outside_projects=outside)


# --- each route kind -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "route", "traits", "taken"),
    [
        ("paths", "/srv/law", Traits(paths=["/srv/law/Mail/cur/1:2,S"]), True),
        ("paths", "/srv/law", Traits(paths=["/srv/lawyer/x"]), False),
        ("paths", "/srv/law", Traits(paths=["/elsewhere/x", "/srv/law"]), True),  # any of its files
        ("senders", "@law.example.net", Traits(people=[Person("lee@law.example.net")]), True),
        ("senders", "@law.example.net", Traits(people=[Person("para@chambers.law.example.net")]), True),
        ("senders", "@law.example.net", Traits(people=[Person("lee@outlaw.example.net")]), False),
        ("senders", "lee@law.example.net", Traits(people=[Person("LEE@Law.Example.Net")]), True),
        ("subjects", "Smith v. Jones", Traits(words=["Hearing: smith v. jones"]), True),
        ("subjects", "ACME-2291", Traits(words=["Re: hello", "the body names acme-2291 once"]), True),
        ("subjects", "ACME-2291", Traits(words=["Re: hello"]), False),
        ("folders", "Archive", Traits(account="work", folder="Archive/2026"), True),
        ("folders", "Archive", Traits(account="work", folder="Archives"), False),
        ("accounts", "Work", Traits(account="work", folder="INBOX"), True),
        ("accounts", "work", Traits(account="home", folder="INBOX"), False),
        ("lists", "Lawsuit", Traits(list="lawsuit"), True),
        ("calendars", "work", Traits(calendar=" Work "), True),
        ("calendars", "work", Traits(list="work"), False),  # a list is no calendar
        ("addressbooks", "clients", Traits(addressbook="Clients"), True),
        ("apps", "Signal", Traits(apps=["signal-desktop"]), True),
        ("apps", "Signal", Traits(apps=["Signalis"]), False),
        ("urls", "law.example.net/cases", Traits(urls=["https://LAW.example.net/cases/12"]), True),
        ("urls", "law.example.net/cases", Traits(urls=["https://law.example.net/blog"]), False),
    ],
)
def test_each_route_kind_takes_every_thing_with_its_trait(kind, route, traits, taken):
    gate = gate_of({"id": "lawsuit", kind: [route]})
    assert gate.owners(traits) == ({"lawsuit"} if taken else set())
    took = [r for r in gate.explain(traits) if r.took]
    assert took == ([Reason("lawsuit", kind, route, True)] if taken else [])


def test_a_thing_that_names_its_project_belongs_to_it_without_case():
    gate = gate_of({"id": "Lawsuit"})
    assert gate.owners(Traits(projects=["LAWSUIT"])) == {"Lawsuit"}
    assert gate.explain(Traits(projects=["lawsuit"])) == [Reason("Lawsuit", "project", "Lawsuit", True)]
    assert gate.owners(Traits(projects=["lawsuits"])) == set()


def test_a_thing_with_no_traits_is_in_no_project_and_follows_outside_projects():
    gate = gate_of({"id": "lawsuit", "paths": ["/"], "senders": ["@example.net"]}, outside=False)
    assert gate.owners(Traits()) == set() and not gate.allows(gate.owners(Traits()))


def test_owners_of_is_the_same_decision_one_value_at_a_time():
    gate = gate_of({"id": "garden", "ai": True, "senders": ["@garden.example.org"], "folders": ["Garden"]})
    assert gate.owners_of(sender="bo@garden.example.org") == {"garden"}  # a sender given here counts as proven
    assert gate.owners_of(folder="INBOX/Garden") == {"garden"}
    assert gate.owners_of(subject="nothing") == set()


# --- the proof rule ---------------------------------------------------------------------------------------


def test_a_closed_sender_route_keeps_a_sender_nobody_authenticated():
    gate = gate_of({"id": "lawsuit", "senders": ["@law.example.net"]})
    forged = Traits(people=[Person("lee@law.example.net", proven=False)])
    assert gate.owners(forged) == {"lawsuit"} and not gate.allows(gate.owners(forged))


def test_an_open_sender_route_opens_only_a_proven_sender():
    gate = gate_of({"id": "garden", "ai": True, "senders": ["@garden.example.org"]}, outside=False)
    unproven = Traits(people=[Person("bo@garden.example.org")])
    proven = Traits(people=[Person("bo@garden.example.org", proven=True)])
    assert gate.owners(unproven) == set() and not gate.allows(gate.owners(unproven))
    assert gate.owners(proven) == {"garden"} and gate.allows(gate.owners(proven))
    (reason,) = gate.explain(unproven)
    assert not reason.took and reason.kind == "senders" and "nothing proves" in reason.why_not
    assert "did not authenticate" in reason.why_not


def test_why_an_address_could_not_be_proven_comes_from_the_plugin():
    gate = gate_of({"id": "garden", "ai": True, "senders": ["@garden.example.org"]})
    traits = Traits(people=[Person("bo@garden.example.org", why_unproven="account work has no authserv_id")])
    (reason,) = gate.explain(traits)
    assert "account work has no authserv_id" in reason.why_not and reason.project == "garden"


def test_a_thing_from_a_closed_and_an_open_route_is_kept_whatever_the_proof():
    gate = gate_of({"id": "garden", "ai": True, "senders": ["bo@garden.example.org"]},
                   {"id": "lawsuit", "senders": ["@law.example.net"]})
    traits = Traits(people=[Person("bo@garden.example.org", proven=True), "lee@law.example.net"])
    assert gate.owners(traits) == {"garden", "lawsuit"} and not gate.allows(gate.owners(traits))


# --- words and mask labels --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("masked", "route", "closed_takes", "open_takes"),
    [
        ("dossier acme-[code]", "ACME-2291", True, False),  # the code label may hide the digits
        ("dossier [code]", "ACME-2291", False, False),  # a code is never letters
        ("see [link] for the file", "law.example.net/acme", True, False),  # a link may hide anything
        ("your [card …4242] was charged", "smith", True, False),
        ("dossier acme-2291", "ACME-2291", True, True),  # plain words: the same for both
        ("nothing here", "ACME-2291", False, False),
    ],
)
def test_a_closed_route_takes_words_a_label_could_hide_an_open_one_only_words_it_reads(
    masked, route, closed_takes, open_takes
):
    traits = Traits(words=["Re: hello", masked])
    assert gate_of({"id": "lawsuit", "subjects": [route]}).owners(traits) == ({"lawsuit"} if closed_takes else set())
    opened = gate_of({"id": "garden", "ai": True, "subjects": [route]})
    assert opened.owners(traits) == ({"garden"} if open_takes else set())
    if closed_takes and not open_takes:
        (reason,) = opened.explain(traits)
        assert not reason.took and "behind a mask" in reason.why_not


def test_a_blank_subject_route_takes_nothing():
    assert gate_of({"id": "x", "subjects": ["  "]}).owners(Traits(words=["a b c"])) == set()


# --- folders ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("route", "account", "folder", "taken"),
    [
        ("work/INBOX", "work", "INBOX", True),  # as search_mail prints it
        ("work/INBOX", "home", "INBOX", False),
        ("Work/Lawsuit", "work", "Lawsuit/2026", True),  # the account without case, the folders inside
        ("work/Lawsuit", "work", "INBOX/Lawsuit", True),  # offlineimap's nesting under INBOX
        ("Lawsuit", "work", "Lawsuit", True),  # a bare name: that folder in every account
        ("Lawsuit", "home", "INBOX/Lawsuit", True),
        ("Lawsuit", "home", "inbox/Lawsuit", True),  # INBOX is a name without case
        ("INBOX", "home", "Inbox", True),
        ("Lawsuit", "home", "Lawsuits", False),
        ("Lawsuit", "home", "Archive/Lawsuit", False),
        ("/Lawsuit/", "home", "Lawsuit", True),
    ],
)
def test_folder_routes_take_the_form_the_tools_print_and_bare_names_everywhere(route, account, folder, taken):
    gate = gate_of({"id": "lawsuit", "folders": [route]})
    assert gate.owners(Traits(account=account, folder=folder)) == ({"lawsuit"} if taken else set())


# --- files: links -----------------------------------------------------------------------------------------


def test_a_file_hard_linked_out_of_a_closed_routes_folder_is_taken(tmp_path):
    closed = tmp_path / "lawsuit"
    closed.mkdir()
    (closed / "brief.md").write_text("the brief")
    outside = tmp_path / "notes"
    outside.mkdir()
    os.link(closed / "brief.md", outside / "brief.md")
    gate = gate_of({"id": "lawsuit", "paths": [str(closed)]})
    assert gate.owners(Traits(paths=[str(outside / "brief.md")])) == {"lawsuit"}
    (outside / "other.md").write_text("another note")
    assert gate.owners(Traits(paths=[str(outside / "other.md")])) == set()


def test_a_hard_link_made_into_a_closed_folder_takes_the_file_outside_too(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "plan.md").write_text("plan")
    (tmp_path / "lawsuit").mkdir()
    os.link(tmp_path / "notes" / "plan.md", tmp_path / "lawsuit" / "plan.md")
    gate = gate_of({"id": "lawsuit", "paths": [str(tmp_path / "lawsuit")]})
    assert gate.owners(Traits(paths=[str(tmp_path / "notes" / "plan.md")])) == {"lawsuit"}


def test_a_relative_path_is_never_looked_up_from_where_the_server_runs(tmp_path, monkeypatch):
    (tmp_path / "lawsuit").mkdir()
    (tmp_path / "lawsuit" / "x").write_text("x")
    os.link(tmp_path / "lawsuit" / "x", tmp_path / "x")
    monkeypatch.chdir(tmp_path)
    gate = gate_of({"id": "lawsuit", "paths": [str(tmp_path / "lawsuit")]})
    assert gate.owners(Traits(paths=["x"])) == set()


def test_a_symbolic_link_into_a_closed_folder_is_taken(tmp_path):
    (tmp_path / "lawsuit").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "lawsuit")
    gate = gate_of({"id": "lawsuit", "paths": [str(tmp_path / "lawsuit")]})
    assert gate.owners(Traits(paths=[str(tmp_path / "link" / "brief.md")])) == {"lawsuit"}


# --- people as plugins find them -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "written",
    [
        "Lee Lawyer <lee@law.example.net>",
        "mailto:lee@law.example.net",
        "MAILTO:Lee@Law.Example.Net",
        '"Lawyer, Lee" <lee@law.example.net>',
        "Lee <mailto:lee@law.example.net>",
        "Bo <bo@garden.example.org>, Lee <lee@law.example.net>",  # one of several
    ],
)
def test_email_values_with_display_names_and_mailto_are_addresses(written):
    gate = gate_of({"id": "lawsuit", "senders": ["lee@law.example.net"]})
    assert gate.owners(Traits(people=[written])) == {"lawsuit"}


@pytest.mark.parametrize(
    ("route", "number", "taken"),
    [
        ("+33 6 12 34 56 78", "06 12 34 56 78", True),  # with or without the country code
        ("+33 6 12 34 56 78", "tel:+33-6-12-34-56-78", True),
        ("+33 6 12 34 56 78", "(06) 12.34.56.78", True),
        ("+33 6 12 34 56 78", "06 12 34 56 79", False),
        ("+33 6 12 34 56 78", "lee@law.example.net", False),
    ],
)
def test_phone_numbers_are_compared_by_their_digits(route, number, taken):
    gate = gate_of({"id": "lawsuit", "senders": [route]})
    assert gate.owners(Traits(people=[number])) == ({"lawsuit"} if taken else set())


def test_a_domain_route_is_never_read_as_a_phone_number():
    gate = gate_of({"id": "lawsuit", "senders": ["law.example.net"]})
    assert gate.owners(Traits(people=["para@law.example.net"])) == {"lawsuit"}
    assert gate.owners(Traits(people=["06 12 34 56 78"])) == set()


# --- explain -----------------------------------------------------------------------------------------------


def test_explain_names_every_route_that_took_the_thing_in_every_project():
    gate = gate_of({"id": "lawsuit", "senders": ["@law.example.net"], "subjects": ["Smith v. Jones"]},
                   {"id": "office", "ai": True, "accounts": ["work"]})
    traits = Traits(people=["lee@law.example.net"], words=["Smith v. Jones: hearing"], account="work")
    took = {(r.project, r.kind, r.route) for r in gate.explain(traits) if r.took}
    assert took == {("lawsuit", "senders", "@law.example.net"), ("lawsuit", "subjects", "Smith v. Jones"),
                    ("office", "accounts", "work")}
    assert gate.owners(traits) == {"lawsuit", "office"}


# --- ledger accounts: a route naming an account with `:` takes the accounts below it -----------------------


@pytest.mark.parametrize(
    ("route", "account", "taken"),
    [
        ("Expenses:Lawsuit", "Expenses:Lawsuit", True),
        ("Expenses:Lawsuit", "expenses:lawsuit:Fees:Court", True),
        ("Expenses:Lawsuit:", "Expenses:Lawsuit:Fees", True),
        ("Expenses:Lawsuit", "Expenses:Lawsuits", False),  # a sibling that only starts alike
        ("Expenses:Lawsuit", "Expenses", False),  # the parent is not below the route
        ("Expenses", "Expenses:Food", False),  # no `:`: a name only (a mail account's too)
        ("Expenses:", "Expenses:Food", True),  # a top-level account's tree
        ("Expenses:", "Expenses", True),
        ("work", "work:archive", False),  # a mail account's name without `:` is a name only, as before
    ],
)
def test_an_account_route_with_a_colon_takes_the_accounts_below_it(route, account, taken):
    gate = gate_of({"id": "lawsuit", "accounts": [route]})
    assert gate.owners(Traits(account=account)) == ({"lawsuit"} if taken else set())


def test_only_account_routes_take_what_is_below_them():
    gate = gate_of({"id": "lawsuit", "lists": ["Home:Garden"], "calendars": ["Work:Team"]})
    assert gate.owners(Traits(list="Home:Garden:Beds")) == set()
    assert gate.owners(Traits(calendar="Work:Team")) == {"lawsuit"}
