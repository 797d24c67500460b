"""The tools on timew's own data and factur-x's own invoices: hours per tag and per day, the running interval said
as running, a closed project's hours and invoices left out and counted (the same count whatever the words), and
the person's `gateway access why` and `access list` knowing both kinds of thing."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import gateway_time
import pytest
from gateway_time import described, sample

from gateway.testing import make_gateway

CANARY = "narwhalcanary"
NAMES = ("Vault", "Harbor", "harbor berth", "strongroom", "Quay Office", "crane", "V-9", "H-1", "H-2")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> dict:
    home = tmp_path_factory.mktemp("home")
    made = sample.everything(home, CANARY)
    made["gateway"] = make_gateway([gateway_time], home=home, config=made["config"], projects=made["projects"])
    made["home"] = home
    return made


def _all(answer) -> str:  # noqa: ANN001
    return answer.text + json.dumps(answer.data, ensure_ascii=False)


def test_hours_per_tag_in_total_with_the_running_interval(served: dict) -> None:
    since = str(served["day"] - timedelta(days=3))
    answer = served["gateway"].call("time_spent", {"since": since})
    assert not answer.is_error, answer.text
    tags = {t["tag"]: t["hours"] for t in answer.data["tags"]}
    assert tags["deep work"] == 2.5 and tags["writing"] == 1.0 and tags['say "hi"'] == 3.0
    assert 6.0 <= tags["acme"] < 6.2  # 2.5 + 3 + the half hour running now, and a little more
    assert 7.0 <= answer.data["total_hours"] < 7.2  # each interval once, whatever its tags
    assert "Running now: since" in answer.text and "so far), acme." in answer.text
    assert [p["project"] for p in answer.data["projects"]] == ["acme"] and "By project: acme 6:" in answer.text
    assert answer.data["running"][0]["address"].startswith("time:interval/")
    assert "2 intervals left out: their projects are closed to AI agents." in answer.text


def test_hours_per_day_cut_at_midnight(served: dict) -> None:
    today = served["day"]
    answer = served["gateway"].call("time_spent", {"since": str(today - timedelta(days=2)),
                                                   "until": str(today - timedelta(days=1)), "by": "day"})
    days = {d["day"]: d for d in answer.data["days"]}
    assert days[str(today - timedelta(days=2))]["hours"] == 3.5
    assert days[str(today - timedelta(days=1))]["hours"] == 2.0  # 22:00 to midnight of a 22:00-01:00 interval
    assert "Running now" not in answer.text or answer.data["running"]  # the running one starts today
    assert f"  {today - timedelta(days=2)}  3:30 (3.50 h): acme 2:30, deep work 2:30, writing 1:00" in answer.text


def test_the_count_left_out_is_the_same_whatever_the_project_asked(served: dict) -> None:
    since = str(served["day"] - timedelta(days=5))
    counts = set()
    for project in (None, "acme", "vault", "project:vault", CANARY, "harbor berth", "nothing-at-all"):
        arguments = {"since": since, **({"project": project} if project else {})}
        answer = served["gateway"].call("time_spent", arguments)
        counts.add(answer.data["left_out"])
        if project in ("vault", "project:vault", CANARY, "harbor berth"):
            assert answer.data["total_hours"] == 0 and answer.data["intervals"] == 0
    assert counts == {2}
    for query in (None, CANARY, "Vault", "vault", "Ada", "nothing-at-all"):
        answer = served["gateway"].call("invoices", {"status": "all", **({"query": query} if query else {})})
        assert answer.data["left_out"] == 3, query


def test_a_closed_projects_time_and_invoices_are_in_no_answer(served: dict) -> None:
    gateway = served["gateway"]
    today = served["day"]
    calls = [("time_spent", {}), ("time_spent", {"since": str(today - timedelta(days=30)), "by": "day"}),
             *(("time_spent", {"since": str(today - timedelta(days=30)), "project": p})
               for p in ("vault", "harbor", CANARY)),
             *(("invoices", {"status": s}) for s in ("unpaid", "overdue", "paid", "all")),
             *(("invoices", {"status": "all", "query": q}) for q in (CANARY, "Vault", "Harbor", "quay", "V-9"))]
    for tool, arguments in calls:
        answer = gateway.call(tool, arguments)
        assert not answer.is_error, (tool, arguments, answer.text)
        seen = _all(answer)
        assert CANARY not in seen, (tool, arguments)
        for name in NAMES:
            assert name not in seen, (tool, arguments, name)


def _invoice_address(home: Path, number: str) -> str:
    connection = sqlite3.connect(home / ".cache" / "gateway" / "plugins" / "time" / "time.sqlite3")
    connection.row_factory = sqlite3.Row
    try:
        found = described.invoices_by_key(connection)
    finally:
        connection.close()
    return next(f"{described.INVOICE}{key}" for key, (_paths, fields) in found.items() if fields["number"] == number)


def test_access_why_and_list_know_intervals_and_invoices(served: dict) -> None:
    from gateway.gate import census
    from gateway.gate.why import explain

    gateway = served["gateway"]
    gateway.call("invoices")  # the store is read
    snapshot = gateway.snapshot()
    for number, project, kind in (("V-9", "vault", "project"), ("H-1", "harbor", "senders"),
                                  ("H-2", "harbor", "paths"), ("INV-2026-0042", "acme", "project")):
        address = _invoice_address(served["home"], number)
        known = gateway.traits_of(address, snapshot)
        assert [plugin for plugin, _traits in known] == ["time"], address
        reasons = snapshot.gate.explain(known[0][1])
        assert any(r.took and r.project == project and r.kind == kind for r in reasons), (number, reasons)
        said: list[str] = []
        kept = explain(gateway, address, None, said.append)
        assert kept == (0 if project == "acme" else 1), said
    start = (served["day"] - timedelta(days=1)).strftime("%Y%m%dT090000Z")
    said = []
    assert explain(gateway, f"{described.INTERVAL}{start}", None, said.append) == 1
    assert any("vault" in line for line in said), said
    tally = census.tally(gateway, snapshot)
    assert tally.things["timewarrior intervals"] == 6 and tally.things["invoices"] == 6
    assert tally.taken[("vault", "project", "vault")] == {"timewarrior intervals": 1, "invoices": 1}
    assert tally.taken[("harbor", "subjects", "harbor berth")]["timewarrior intervals"] == 1
