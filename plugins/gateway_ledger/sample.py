"""Invented journals in beancount's and hledger's own formats, for the tests, the benchmark and the demo.

The people and firms are invented; the IBAN is the documented example of the German banks' format
(DE89 3704 0044 0532 0130 00) and the card number the well-known test number 4111 1111 1111 1111, neither anyone's.
Each closed-project thing holds the canary word and is placed by one way: an account route (and the account
below it), a tag, `project:` metadata, a payee (subjects route), an account's `open` metadata, a budget line.
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

IBAN = "DE89 3704 0044 0532 0130 00"
IBAN_DIGITS = "370400440532013000"
CARD = "4111 1111 1111 1111"
ACCOUNT_NUMBER = "0012 3456 789"  # checks out as neither an IBAN nor a card: masked by the plugin's own rule


def days(today: date) -> list[str]:
    """Days of this month up to today, for transactions the default period holds."""
    first = today.replace(day=1)
    return [(first + timedelta(days=min(n, today.day - 1))).isoformat() for n in range(8)]


def beancount_journal(canary: str, project: str, today: date) -> str:
    d = days(today)
    year = today.year
    return f"""option "title" "Household"
option "operating_currency" "EUR"

{year - 1}-01-01 open Assets:Bank:Checking EUR
  number: "{IBAN}"
{year - 1}-01-01 open Assets:Bank:Savings-{ACCOUNT_NUMBER.replace(' ', '')} EUR
{year - 1}-01-01 open Liabilities:Card EUR
  card: "{CARD}"
{year - 1}-01-01 open Equity:Opening EUR
{year - 1}-01-01 open Expenses:Food EUR
{year - 1}-01-01 open Expenses:Travel EUR
{year - 1}-01-01 open Expenses:Household EUR
{year - 1}-01-01 open Expenses:Lawsuit EUR
{year - 1}-01-01 open Expenses:Lawsuit:Fees EUR
{year - 1}-01-01 open Expenses:{canary}
  project: "{project}"
{year - 1}-01-01 open Expenses:{canary}:Gifts

{year - 1}-01-01 custom "budget" Expenses:Food "monthly" 400.00 EUR
{year - 1}-01-01 custom "budget" Expenses:Travel "monthly" 150.00 EUR
{year - 1}-01-01 custom "budget" Expenses:Lawsuit "monthly" 300.00 EUR
{year - 1}-01-01 custom "budget" Expenses:Household "yearly" 1200.00 EUR
  project: "{project}"
{year - 1}-01-01 custom "budget" Expenses:{canary}:Gifts "monthly" 50.00 EUR

{year - 1}-01-02 * "Opening balance"
  Assets:Bank:Checking  2500.00 EUR
  Assets:Bank:Savings-{ACCOUNT_NUMBER.replace(' ', '')}  10000.00 EUR
  Equity:Opening

{d[0]} * "Grocer Example" "weekly shop"
  iban: "{IBAN}"
  Expenses:Food  52.10 EUR
  Assets:Bank:Checking

{d[1]} * "Bakery Sample" "bread and cake, refund to card {CARD}"
  Expenses:Food  12.40 EUR
  Liabilities:Card

{d[2]} * "Law Firm Example" "{canary} retainer, first part"
  Expenses:Lawsuit:Fees  150.00 EUR
  Assets:Bank:Checking

{d[3]} * "Locksmith Example" "{canary} strongbox" #{project}
  Expenses:Household  80.00 EUR
  Assets:Bank:Checking

{d[4]} * "Harbor Marina" "{canary} berth for the summer"
  Expenses:Travel  200.00 EUR
  Assets:Bank:Checking

{d[5]} * "Courier Example" "{canary} parcel"
  project: "{project}"
  Expenses:Travel  20.00 EUR
  Assets:Bank:Checking

{d[6]} * "Florist Example" "flowers"
  Expenses:{canary}:Gifts  35.00 EUR
  Assets:Bank:Checking

{d[7]} * "Train Example" "ticket to the coast"
  card: "{CARD}"
  Expenses:Travel  64.00 EUR
  Assets:Bank:Checking
"""


def hledger_journal(canary: str, project: str, today: date) -> str:
    d = days(today)
    year = today.year
    return f"""; the household's shared costs, kept with hledger
account Assets:Joint  ; number: {IBAN}
account Expenses:Utilities
account Expenses:Garden

~ monthly from {year - 1}-01-01
    Expenses:Utilities       120.00 EUR
    Expenses:Garden           60.00 EUR
    Assets:Joint

~ monthly from {year - 1}-01-01  ; project:{project}
    Expenses:Repairs:{canary}   90.00 EUR
    Assets:Joint

{year - 1}-01-02 Opening
    Assets:Joint            1500.00 EUR
    Equity:Opening

{d[0]} Power Example | electricity for the month
    Expenses:Utilities        61.50 EUR
    Assets:Joint

{d[1]} Nursery Example | seedlings, paid by card {CARD}
    Expenses:Garden           24.00 EUR
    Assets:Joint

{d[2]} Roofer Example | {canary} gutter  ; {project}:
    Expenses:Utilities        45.00 EUR
    Assets:Joint

{d[3]} Plumber Example | {canary} boiler  ; project:{project}
    Expenses:Utilities        70.00 EUR
    Assets:Joint
"""


def everything(home: Path, canary: str, project: str = "vault", today: date | None = None) -> dict:
    """Both journals, and the config and manifest that go with them; what the tests look for, by name."""
    today = today or date.today()
    folder = home / "finance"
    folder.mkdir(parents=True, exist_ok=True)
    bean = folder / "household.beancount"
    bean.write_text(beancount_journal(canary, project, today), encoding="utf-8")
    journal = folder / "shared.journal"
    journal.write_text(hledger_journal(canary, project, today), encoding="utf-8")
    config = {"gateway": {"plugins": ["ledger"], "refresh_budget_ms": 60_000},
              "plugins": {"ledger": {"journals": [str(bean), str(journal)]}}}
    projects = [
        {"id": project, "name": "Vault matters", "ai": False, "accounts": ["Expenses:Lawsuit"],
         "subjects": ["Harbor Marina"]},
        {"id": "garden", "name": "Garden", "ai": True, "accounts": ["Expenses:Garden"]},
    ]
    return {"beancount": bean, "hledger": journal, "config": config, "projects": projects, "today": today}
