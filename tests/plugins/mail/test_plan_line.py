"""A project's line of time on its page (read_project): its dated things newest first, gated as the rest."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import gateway_mail
import pytest
from gateway_mail.mail import sample
from gateway_mail.plan import sample as sample_plan
from gateway_mail.plan import vdir

from gateway.testing import make_gateway

CANARY = "numbatlinecanary"
PARIS = ZoneInfo("Europe/Paris")


@pytest.fixture
def plan(gateway_home: Path):
    vdir.forget()
    now = datetime.now(PARIS)
    made = sample_plan.world(gateway_home, CANARY, now)
    mail_root = gateway_home / "Mail" / "personal"
    sample.world(mail_root, "mailcanaryword", time.time())
    tasks, calendars = made["tasks"] / "work", made["calendars"] / "personal"
    done = (now - timedelta(days=2)).astimezone(ZoneInfo("UTC")).strftime("%Y%m%dT%H%M%SZ")
    past = (now - timedelta(days=10)).date()

    def task(uid: str, *lines: str) -> None:
        sample_plan.put(tasks, uid, sample_plan.ics("VTODO", uid, ["STATUS:COMPLETED", f"COMPLETED:{done}", *lines]))

    def event(uid: str, *lines: str) -> None:
        sample_plan.put(calendars, uid, sample_plan.ics("VEVENT", uid, [
            f"DTSTART;TZID=Europe/Paris:{past:%Y%m%d}T140000", f"DTEND;TZID=Europe/Paris:{past:%Y%m%d}T150000",
            *lines]))

    task("dupont-done", "SUMMARY:Choose the sink", "REFID:dupont")
    event("dupont-past", "SUMMARY:First visit at the Duponts", "REFID:dupont")
    # Shared with the closed project, and the closed project's own: in no line while it is closed.
    task("shared-done", f"SUMMARY:{CANARY} shared and done", "CATEGORIES:project:dupont,project:vault")
    event("shared-past", f"SUMMARY:{CANARY} shared and past", "REFID:dupont", "REFID:vault")
    task("vault-done", f"SUMMARY:{CANARY} the vault's done", "REFID:vault")

    def gateway(projects=sample_plan.PROJECTS):
        config = sample_plan.config(gateway_home, mail_root)
        return make_gateway([gateway_mail], home=gateway_home, config=config, projects=projects)

    yield gateway
    vdir.forget()


def _opened(name: str) -> list[dict]:
    return [{**p, "ai": True} if p["id"] == name else p for p in sample_plan.PROJECTS]


def test_a_projects_line_of_time_gives_its_dated_things_newest_first(plan) -> None:
    page = plan().call("read_project", {"address": "sioul:project/dupont"})
    assert not page.is_error, page.text
    line = page.data["line_of_time"]
    whens = [entry["when"] for entry in line]
    assert whens == sorted(whens, reverse=True)
    kinds = {entry.get("address", "mail"): entry["what"] for entry in line}
    assert kinds == {"sioul:task/dupont-3": "task due", "sioul:event/dupont-visit": "event",
                     "sioul:task/dupont-1": "task due", "sioul:task/dupont-done": "task done",
                     "sioul:event/dupont-past": "event", "mail": "mail"}
    assert [entry["count"] for entry in line if entry["what"] == "mail"] == [1]  # the plumber's message
    assert "Line of time, newest first:" in page.text and "task done: Choose the sink" in page.text
    assert {"sioul:task/dupont-done", "sioul:event/dupont-past"} <= set(page.given)


def test_a_closed_projects_things_never_appear_in_another_projects_line(plan) -> None:
    page = plan().call("read_project", {"address": "sioul:project/dupont"})
    assert not page.is_error, page.text
    shown = page.text + str(page.data)
    assert CANARY not in shown
    for kept in ("shared-done", "shared-past", "vault-done", "both-1"):
        assert kept not in shown
    # Left out and counted: the open task shared with the vault, and the line's task done and past event.
    assert page.data["left_out"] == 3
    # Opened, the same things are there: the line would show them if the gate let it.
    opened = plan(projects=_opened("vault")).call("read_project", {"address": "sioul:project/dupont"})
    addresses = {entry.get("address") for entry in opened.data["line_of_time"]}
    assert {"sioul:task/shared-done", "sioul:event/shared-past"} <= addresses
    assert "sioul:task/vault-done" not in addresses  # the vault's own is not the Dupont project's
    assert opened.data["left_out"] == 0
