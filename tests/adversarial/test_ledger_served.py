"""Budgets and bank accounts through a real `gateway serve`, spoken to with the MCP SDK's own client.

A closed project's canary sits in a budget line and in transactions placed by an account route (and the account
below it), a tag, `project:` metadata (beancount's and hledger's), a payee (a subjects route) and an account's
`open` metadata: no answer of any tool holds it, every list says it left something out, and a search's count of
what it kept is the same whatever its words. An IBAN and a card number are masked and found by no writing of their
digits; a broken journal fails alone, named in the answer, and the server goes on.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import gateway_ledger
from gateway_ledger import sample

from gateway.canary import PROJECT
from gateway.testing import Sample, check_closed_project, make_gateway, serve_client, write_config

CANARY = "Sargassocanary"
SEARCHES = (CANARY, "retainer", "strongbox", "berth", "parcel", "gutter", "boiler", "flowers", "example",
            "nothingmatcheshere")


def _text(result) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content) + json.dumps(
        result.structured_content or {}, ensure_ascii=False)


def test_a_closed_project_is_never_shown_by_the_ledger(gateway_home: Path) -> None:
    made = sample.everything(gateway_home, CANARY, project=PROJECT)
    settings = {"journals": [str(made["beancount"]), str(made["hledger"])]}
    # The journals read once before the server starts, so that no answer comes before the store is filled (the
    # served refresh then finds them unchanged); the check writes its own config and manifest over these.
    warm = make_gateway([("ledger", gateway_ledger)], home=gateway_home,
                        config={"gateway": {"plugins": ["ledger"], "refresh_budget_ms": 60_000},
                                "plugins": {"ledger": settings}})
    assert "Grocer Example" in warm.call("search_transactions", {"query": "grocer"}).text
    report = check_closed_project(
        gateway_home, plugin="ledger", canary=CANARY, settings=settings,
        samples=[Sample("accounts", "Expenses:Lawsuit", "a budget line and a transaction, by account route"),
                 Sample("subjects", "Harbor Marina", "a transaction, by its payee")],
        calls={"budgets": [{}, {"period": f"{made['today']:%Y}"}], "accounts": [{}],
               "search_transactions": [{"query": q} for q in SEARCHES]},
        lists=[("budgets", {}), ("accounts", {}), ("search_transactions", {"query": "example"}),
               ("search_transactions", {"query": "nothingmatcheshere"})])
    assert report.answers >= 13
    assert report.left_out["budgets {}"] >= 4 and report.left_out["accounts {}"] >= 4
    # A search's count of what it kept is the same whatever its words.
    assert report.left_out['search_transactions {"query": "example"}'] == report.left_out[
        'search_transactions {"query": "nothingmatcheshere"}'] == 9


def test_numbers_masked_and_a_broken_journal_failing_alone_when_served(gateway_home: Path) -> None:
    made = sample.everything(gateway_home, CANARY)
    broken = made["beancount"].parent / "broken.beancount"
    broken.write_text('2026-01-01 open Assets:Cash\n2026-01-02 * "Cafe" "cut off\n  Assets:Cash -3 EUR\n')
    table = {"journals": [str(made["beancount"]), str(broken), str(made["hledger"])]}
    write_config(gateway_home, {"gateway": {"plugins": ["ledger"], "refresh_budget_ms": 60_000},
                                "plugins": {"ledger": table}}, projects=made["projects"])
    forms = (sample.IBAN_DIGITS, "DE89370400440532013000", "DE89 3704 0044 0532 0130 00", "0532", "4111111111111111",
             "4111 1111 1111 1111", "4111", "00123456789", "0012 3456 789")

    async def play(client):
        seen = {"tools": {t.name for t in (await client.list_tools()).tools}}
        for tool, arguments in [("accounts", {}), ("budgets", {}), ("search_transactions", {"query": "ticket"}),
                                ("search_transactions", {"query": "electricity"}),
                                *(("search_transactions", {"query": form}) for form in forms)]:
            result = await client.call_tool(tool, arguments)
            seen[(tool, json.dumps(arguments))] = (bool(result.is_error), _text(result))
        return seen

    async def serve():
        async with serve_client(gateway_home) as client:
            return await play(client)

    seen = anyio.run(serve)
    assert seen.pop("tools") == {"budgets", "accounts", "search_transactions"}
    for (tool, arguments), (error, text) in seen.items():
        assert not error, (tool, arguments, text)
        for digits in (sample.IBAN_DIGITS, "4111 1111", "4111111111111111", "00123456789", CANARY):
            assert digits not in text, (tool, arguments, digits)
        assert "journal not read: broken.beancount: its tool found errors in it" in text
    accounts = seen[("accounts", "{}")][1]
    assert "number: [IBAN …3000]" in accounts and "card: [card …1111]" in accounts
    assert "Assets:Bank:Savings-[account …6789]" in accounts
    assert "card: [card …1111]" in seen[("search_transactions", json.dumps({"query": "ticket"}))][1]
    assert "number: [IBAN …3000]" in seen[("search_transactions", json.dumps({"query": "electricity"}))][1]
    for form in forms:
        assert "(no transaction found)" in seen[("search_transactions", json.dumps({"query": form}))][1], form
