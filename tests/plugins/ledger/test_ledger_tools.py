"""The ledger's tools on journals checked by their own tools (bean-check, hledger check): budgets against actual,
accounts and their balances, transactions searched, account numbers masked, the gate by account route (and the
accounts below it), tag, `project:` metadata and payee, a broken or huge journal failing alone, and a journal
unchanged since the last call not read again."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import gateway_ledger
import pytest
from click.testing import CliRunner
from gateway_ledger import sample
from gateway_ledger.budgets import period_of, planned

from gateway import ToolError
from gateway.testing import make_gateway
from tests.shared_home import shared_gateway

CANARY = "Quahogcanary"


def _gateway(home: Path, **settings):
    made = sample.everything(home, CANARY)
    made["config"]["plugins"]["ledger"].update(settings)
    gateway = make_gateway([("ledger", gateway_ledger)], home=home, config=made["config"], projects=made["projects"])
    return made, gateway


# The tests that only ask (none writes a file or the config) share one home of samples and one gateway on it:
# the ledger are read once, by the first call, instead of once a test.
_shared, read_only = shared_gateway("ledger", _gateway)


def test_the_sample_journals_are_valid_for_beancount_and_hledger_themselves(gateway_home: Path) -> None:
    made = sample.everything(gateway_home, CANARY)
    checked = subprocess.run([str(Path(sys.executable).parent / "bean-check"), str(made["beancount"])],
                             capture_output=True, text=True)
    assert checked.returncode == 0 and not checked.stdout.strip(), checked.stdout + checked.stderr
    hledger = shutil.which("hledger")
    assert hledger, "hledger is needed (Debian: apt-get install hledger; .ci/run installs it)"
    checked = subprocess.run([hledger, "-f", str(made["hledger"]), "check"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def test_budgets_give_budget_against_actual_per_category_this_month(read_only) -> None:
    _made, gateway = read_only
    answer = gateway.call("budgets")
    assert not answer.is_error, answer.text
    lines = answer.text.splitlines()
    assert lines[0].startswith(f"Budgets for {date.today():%Y-%m}")
    assert "Expenses:Food  52.10 of 400.00 EUR (13%), 347.90 EUR left  [household.beancount]" in lines
    assert "Expenses:Travel  64.00 of 150.00 EUR (43%), 86.00 EUR left  [household.beancount]" in lines
    assert "Expenses:Utilities  61.50 of 120.00 EUR (51%), 58.50 EUR left  [shared.journal]" in lines
    # Kept: the Lawsuit line (account route), Household (project: metadata), the canary's gifts (its account's
    # open metadata, inherited by the account below) and hledger's repairs (project: tag on the periodic rule).
    assert "4 budget lines left out: their projects are closed to AI agents." in lines
    assert answer.data["left_out"] == 4 and {b["account"] for b in answer.data["budgets"]} == {
        "Expenses:Food", "Expenses:Garden", "Expenses:Travel", "Expenses:Utilities"}
    assert CANARY not in answer.text and CANARY not in json.dumps(dict(answer.data))


def test_a_period_is_a_month_a_quarter_a_year_or_two_days(read_only) -> None:
    today = date(2026, 12, 9)
    assert period_of(None, today) == (date(2026, 12, 1), date(2027, 1, 1), "2026-12")
    assert period_of("2026-02", today) == (date(2026, 2, 1), date(2026, 3, 1), "2026-02")
    assert period_of("2026-Q4", today) == (date(2026, 10, 1), date(2027, 1, 1), "2026-Q4")
    assert period_of("2025", today) == (date(2025, 1, 1), date(2026, 1, 1), "2025")
    assert period_of("2026-12-01..2026-12-15", today)[:2] == (date(2026, 12, 1), date(2026, 12, 16))
    for wrong in ("last month", "2026-13", "2026-12-15..2026-12-01", "2020-01-01..2026-01-01"):
        with pytest.raises(ToolError):
            period_of(wrong, today)
    # Fava's convention: a budget spread over its interval's days; a yearly 1200 plans 100 in a 31-day month of 372.
    rules = [{"interval": "yearly", "date": "2026-01-01", "amount": "1200.00"}]
    assert str(planned(rules, date(2026, 1, 1), date(2027, 1, 1))) == "1200.00"
    assert str(planned(rules, date(2026, 12, 1), date(2027, 1, 1))) == "101.92"
    assert planned(rules, date(2025, 12, 1), date(2026, 1, 1)) is None  # not yet in force
    _made, gateway = read_only
    wrong = gateway.call("budgets", {"period": "someday"})
    assert wrong.is_error and "2026-Q4" in wrong.text


def test_accounts_give_balances_with_account_numbers_kept_to_their_last_four(read_only) -> None:
    _made, gateway = read_only
    answer = gateway.call("accounts")
    text = answer.text
    assert "Assets:Bank:Checking  2,383.90 EUR  (opened " in text and "number: [IBAN …3000]" in text
    assert "Assets:Bank:Savings-[account …6789]  10,000.00 EUR" in text
    assert "card: [card …1111]" in text
    assert sample.IBAN_DIGITS not in text and "00123456789" not in text and "4111 1111" not in text
    assert "Assets:Joint  1,438.50 EUR  [shared.journal]" in text
    # Kept accounts: the lawsuit and its fees (account route), the canary's account and the one below it.
    assert "4 accounts left out: their projects are closed to AI agents." in text
    assert "transactions left out of these balances" in text
    assert CANARY not in text and "Lawsuit" not in text


def test_search_gives_transactions_newest_first_with_their_postings(read_only) -> None:
    _made, gateway = read_only
    answer = gateway.call("search_transactions", {"query": "example", "limit": 2})
    assert "3 transactions found, the newest 2 given" in answer.text
    dates = [t["date"] for t in answer.data["transactions"]]
    assert dates == sorted(dates, reverse=True)
    first = gateway.call("search_transactions", {"query": "grocer"})
    (grocer,) = first.data["transactions"]
    assert grocer["payee"] == "Grocer Example" and grocer["narration"] == "weekly shop"
    assert grocer["meta"] == {"iban": "[IBAN …3000]"}
    assert [(p["account"], p["amount"]) for p in grocer["postings"]] == [
        ("Expenses:Food", "52.10"), ("Assets:Bank:Checking", "-52.10")]
    assert grocer["address"].startswith("ledger:txn/") and grocer["address"] in first.given
    # The frame: payees and narrations between two lines carrying the same mark.
    assert "<<<data " in first.text and "Grocer Example | weekly shop" in first.text


def test_a_closed_projects_transactions_are_kept_and_counted_whatever_the_words(read_only) -> None:
    _made, gateway = read_only
    counts = set()
    for query in (CANARY, "retainer", "strongbox", "berth", "parcel", "gutter", "boiler", "flowers", "example",
                  "nothingmatcheshere", "Lawsuit", "Harbor"):
        answer = gateway.call("search_transactions", {"query": query})
        assert not answer.is_error and CANARY not in answer.text, query
        for kept in ("retainer", "strongbox", "berth", "parcel", "gutter", "boiler", "flowers"):
            assert kept not in answer.text, (query, kept)
        counts.add(answer.data["left_out"])
    # By account route (Lawsuit:Fees), tag (#vault, hledger's vault:), project: metadata (both formats), payee
    # (a subjects route), the open metadata of the account (Gifts), and two whose masked words could hide the
    # subjects route (a card number in the narration: the core errs towards keeping).
    assert counts == {9}


def test_an_iban_and_a_card_are_masked_and_found_by_no_digits(read_only) -> None:
    _made, gateway = read_only
    forms = (sample.IBAN_DIGITS, "DE89370400440532013000", "0532", "013000", "4111111111111111", "4111", "4111 1111 1111")
    for form in forms:
        answer = gateway.call("search_transactions", {"query": form})
        assert "(no transaction found)" in answer.text, form
    train = gateway.call("search_transactions", {"query": "ticket coast"}).data["transactions"][0]
    assert train["meta"] == {"card": "[card …1111]"}
    power = gateway.call("search_transactions", {"query": "electricity"})
    assert "number: [IBAN …3000]" in power.text and "0532" not in power.text


def test_a_broken_journal_fails_only_itself_and_is_named(gateway_home: Path) -> None:
    made, gateway = _gateway(gateway_home)
    folder = made["beancount"].parent
    broken_bean = folder / "broken.beancount"
    # Each error is on a line holding a closed project's word: the tools' own messages quote such lines.
    broken_bean.write_text('2026-01-01 open Assets:Cash\n2026-01-02 open Expenses:quietcanary\n'
                           '2026-01-02 * "Cafe" "cut off\n  Assets:Cash -3 EUR\n')
    broken_ledger = folder / "broken.journal"
    broken_ledger.write_text("2026-13-45 Cafe quietcanary\n    Assets:Cash   -3 EUR\n    Expenses:Food\n")
    journals = [str(made["beancount"]), str(broken_bean), str(broken_ledger), str(made["hledger"])]
    made["config"]["plugins"]["ledger"]["journals"] = journals
    gateway = make_gateway([("ledger", gateway_ledger)], home=gateway_home, config=made["config"],
                           projects=made["projects"])
    for tool, arguments in (("budgets", {}), ("accounts", {}), ("search_transactions", {"query": "grocer"})):
        answer = gateway.call(tool, arguments)
        assert not answer.is_error, answer.text
        assert ("journal not read: broken.beancount: its tool found errors in it (the person runs bean-check "
                "broken.beancount to see them)") in answer.text
        assert "journal not read: broken.journal: its tool found errors in it (the person runs hledger check -f " \
            "broken.journal to see them)" in answer.text
        assert "quietcanary" not in answer.text  # the tools' words, which quote the lines, are the person's alone
    assert "Grocer Example" in answer.text  # the others are read
    from gateway.commands.doctor import run_checks

    said: list[str] = []
    run_checks(gateway, said.append)
    doctor = "\n".join(said)
    assert "broken.beancount" in doctor and "beancount says" in doctor and "hledger says" in doctor


def test_a_journal_past_its_bounds_is_not_read(gateway_home: Path) -> None:
    made, gateway = _gateway(gateway_home, max_file_mb=1, max_transactions=1000)
    huge = made["beancount"].parent / "huge.beancount"
    lines = ['2026-01-01 open Assets:Cash EUR', '2026-01-01 open Expenses:Food EUR']
    lines += [f'2026-02-01 * "Shop {n}" "bread"\n  Expenses:Food 1 EUR\n  Assets:Cash\n' for n in range(1500)]
    huge.write_text("\n".join(lines))
    big = made["beancount"].parent / "big.journal"
    big.write_text("; padding\n" * 120_000)
    made["config"]["plugins"]["ledger"].update(journals=[str(made["beancount"]), str(huge), str(big)])
    gateway = make_gateway([("ledger", gateway_ledger)], home=gateway_home, config=made["config"],
                           projects=made["projects"])
    answer = gateway.call("accounts")
    assert "journal not read: huge.beancount: holds more than 1,000 transactions (max_transactions)" in answer.text
    assert "journal not read: big.journal: is 1 MiB, over the bound of 1 MiB (max_file_mb)" in answer.text
    assert "Assets:Bank:Checking" in answer.text


def test_an_unchanged_journal_is_not_read_again_and_a_changed_one_is(gateway_home: Path) -> None:
    import os

    made, gateway = _gateway(gateway_home)
    assert "Grocer Example" in gateway.call("search_transactions", {"query": "grocer"}).text
    # The same size and time, other words (as a backup tool restores a file): not read again, the store keeps its rows.
    journal = made["beancount"]
    status = journal.stat()
    journal.write_text(journal.read_text().replace("Grocer Example", "Grabby Example"))
    os.utime(journal, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert "Grocer Example" in gateway.call("search_transactions", {"query": "grocer"}).text
    assert "(no transaction found)" in gateway.call("search_transactions", {"query": "grabby"}).text
    # A changed journal is read again whole.
    with made["hledger"].open("a") as handle:
        handle.write(f"\n{date.today()} Kiosk Example | a newspaper\n    Expenses:Utilities  2.50 EUR\n"
                     "    Assets:Joint\n")
    assert "Kiosk Example" in gateway.call("search_transactions", {"query": "newspaper"}).text
    os.utime(journal, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000_000))
    assert "Grabby Example" in gateway.call("search_transactions", {"query": "grabby"}).text


def test_no_journal_set_says_which_setting_to_write(gateway_home: Path) -> None:
    gateway = make_gateway([("ledger", gateway_ledger)], home=gateway_home,
                           config={"gateway": {"plugins": ["ledger"]}})
    answer = gateway.call("budgets")
    assert answer.is_error and "[plugins.ledger] journals" in answer.text


def test_access_why_and_list_know_the_ledgers_things(gateway_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _made, gateway = _gateway(gateway_home)
    gateway.call("accounts")  # the store is read by the first call
    import sqlite3

    store = gateway_home / ".cache" / "gateway" / "plugins" / "ledger" / "ledger.sqlite3"
    with sqlite3.connect(store) as connection:
        fees = connection.execute("SELECT key FROM transactions WHERE narration LIKE '%retainer%'").fetchone()[0]
        grocer = connection.execute("SELECT key FROM transactions WHERE payee = 'Grocer Example'").fetchone()[0]
    from gateway.commands import cli
    from gateway.commands.cli import main

    monkeypatch.setattr(cli, "_gateway", lambda: gateway)
    kept = CliRunner().invoke(main, ["access", "why", f"ledger:txn/{fees}"], catch_exceptions=False)
    assert "taken by vault (closed): accounts route 'Expenses:Lawsuit'" in kept.output, kept.output
    given = CliRunner().invoke(main, ["access", "why", f"ledger:txn/{grocer}"], catch_exceptions=False)
    assert "open to agents" in given.output, given.output
    listed = CliRunner().invoke(main, ["access", "list"], catch_exceptions=False)
    assert "accounts 'Expenses:Lawsuit'" in listed.output and "ledger transactions of household.beancount" in listed.output


def test_without_hledger_an_hledger_journal_says_hledger_is_needed(gateway_home: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _made, gateway = _gateway(gateway_home)
    monkeypatch.setenv("PATH", str(tmp_path))  # no hledger on it; beancount's reader runs by this Python's path
    answer = gateway.call("accounts")
    assert "journal not read: shared.journal: reading an hledger or ledger journal needs the hledger program" in (
        answer.text)
    assert "apt-get install hledger" in answer.text and "Assets:Bank:Checking" in answer.text


def test_a_budget_written_otherwise_is_said_and_the_journal_still_read(gateway_home: Path) -> None:
    made, gateway = _gateway(gateway_home)
    with made["beancount"].open("a") as handle:
        handle.write(f'\n{date.today().year - 1}-01-01 custom "budget" Expenses:Food "fortnightly" 90.00 EUR\n')
    answer = gateway.call("budgets")
    assert "Expenses:Food  52.10 of 400.00 EUR" in answer.text
    assert "1 problem found by the journals' own tools" in answer.text
    from gateway.commands.doctor import run_checks

    said: list[str] = []
    run_checks(gateway, said.append)
    assert any('a budget is written custom "budget"' in line for line in said), said


def test_things_in_no_project_follow_outside_projects(gateway_home: Path) -> None:
    made = sample.everything(gateway_home, CANARY)
    made["config"]["access"] = {"outside_projects": False}
    gateway = make_gateway([("ledger", gateway_ledger)], home=gateway_home, config=made["config"],
                           projects=made["projects"])
    budgets = gateway.call("budgets")
    # Only the open project's line (Expenses:Garden, by its account route) is given.
    assert [b["account"] for b in budgets.data["budgets"]] == ["Expenses:Garden"]
    assert "Grocer" not in gateway.call("search_transactions", {"query": "grocer"}).text
    accounts = gateway.call("accounts")
    assert [a["account"] for a in accounts.data["accounts"]] == ["Expenses:Garden"]


def test_a_reading_past_its_output_bound_fails_that_journal_alone(gateway_home: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from gateway_ledger import journals

    monkeypatch.setattr(journals, "MAX_OUTPUT", 2000)  # the sample's readings are larger: both stopped by the system
    _made, gateway = _gateway(gateway_home)
    answer = gateway.call("accounts")
    assert not answer.is_error and "(no account)" in answer.text
    assert "journal not read: household.beancount: beancount's reading of it is larger than" in answer.text
    assert "journal not read: shared.journal: hledger's reading of it is larger than" in answer.text


def test_a_change_in_an_included_file_is_read(gateway_home: Path) -> None:
    made, _gateway_made = _gateway(gateway_home)
    folder = made["beancount"].parent
    more = folder / "2026-more.beancount"
    more.write_text(f'{date.today()} * "Kiosk Example" "a newspaper"\n  Expenses:Food  2.50 EUR\n'
                    "  Assets:Bank:Checking\n")
    main = folder / "main.beancount"
    main.write_text(f'include "{made["beancount"].name}"\ninclude "{more.name}"\n')
    made["config"]["plugins"]["ledger"]["journals"] = [str(main)]
    gateway = make_gateway([("ledger", gateway_ledger)], home=gateway_home, config=made["config"],
                           projects=made["projects"])
    assert "Kiosk Example" in gateway.call("search_transactions", {"query": "newspaper"}).text
    assert "Grocer Example" in gateway.call("search_transactions", {"query": "grocer"}).text
    with more.open("a") as handle:
        handle.write(f'\n{date.today()} * "Kiosk Example" "a magazine"\n  Expenses:Food  4.00 EUR\n'
                     "  Assets:Bank:Checking\n")
    assert "a magazine" in gateway.call("search_transactions", {"query": "magazine"}).text
