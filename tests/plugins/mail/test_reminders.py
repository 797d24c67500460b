"""reminders: the VALARMs of the person's tasks and events (relative to the start, the end or the due time, absolute,
repeated, each occurrence of a repeating event) and the remind program's reminders, in the person's zone, placed by
the gate as their task's, event's or file's; listed by `now` and the Porch's "now" part too."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import gateway_mail
import pytest
from gateway_mail.plan import sample as sample_plan

from gateway.testing import make_gateway
from tests.plugins.mail.test_plan_real_components import _khal, _run

PARIS = ZoneInfo("Europe/Paris")
UTC = ZoneInfo("UTC")
CANARY = "otterremindcanary"
PROJECTS = [{"id": "garden", "name": "Garden", "ai": True},
            {"id": "vault", "name": "Vault", "ai": False, "paths": []}]


def _at(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def _alarm(*lines: str) -> list[str]:
    return ["BEGIN:VALARM", "ACTION:DISPLAY", *lines, "END:VALARM"]


@pytest.fixture
def world(gateway_home: Path):
    now = datetime.now(PARIS).replace(second=0, microsecond=0)
    soon = now + timedelta(hours=3)
    tasks, calendars = gateway_home / "vdir" / "tasks" / "home", gateway_home / "vdir" / "calendars" / "personal"
    stamp = "DTSTAMP:20261101T080000Z"

    def task(uid: str, *lines: str) -> None:
        sample_plan.put(tasks, uid, sample_plan.ics("VTODO", uid, [stamp, *lines]))

    def event(uid: str, *lines: str) -> None:
        sample_plan.put(calendars, uid, sample_plan.ics("VEVENT", uid, [stamp, *lines]))

    # No start: rings from its due time, 15 minutes before.
    task("bins", "SUMMARY:Put the bins out", f"DUE:{_at(soon)}", *_alarm("TRIGGER:-PT15M", "DESCRIPTION:Bins!"))
    # RELATED=END of a task is its due time; a hostile REPEAT is bounded.
    task("seeds", "SUMMARY:Order seeds", f"DTSTART:{_at(soon - timedelta(hours=1))}", f"DUE:{_at(soon + timedelta(days=1))}",
         *_alarm("TRIGGER;RELATED=END:-PT1H", "REPEAT:1000000", "DURATION:PT1M"))
    task("absolute", "SUMMARY:Call the nursery", *_alarm(f"TRIGGER;VALUE=DATE-TIME:{_at(soon + timedelta(days=2))}"))
    task("done", "SUMMARY:Already done", "STATUS:COMPLETED", f"DUE:{_at(soon)}", *_alarm("TRIGGER:-PT5M"))
    task("vault-task", f"SUMMARY:{CANARY} open the box", "REFID:vault", f"DUE:{_at(soon)}", *_alarm("TRIGGER:-PT5M"))
    event("dentist", "SUMMARY:Dentist", f"DTSTART:{_at(soon)}", f"DTEND:{_at(soon + timedelta(hours=1))}",
          "LOCATION:Rue des Dents", *_alarm("TRIGGER:-PT30M"), *_alarm("TRIGGER;RELATED=END:PT0S"))
    event("yoga", "SUMMARY:Yoga", f"DTSTART;TZID=Europe/Paris:{soon + timedelta(hours=1):%Y%m%dT%H%M%S}",
          f"DTEND;TZID=Europe/Paris:{soon + timedelta(hours=2):%Y%m%dT%H%M%S}", "RRULE:FREQ=DAILY;COUNT=30",
          *_alarm("TRIGGER:-PT10M"))
    event("vault-event", f"SUMMARY:{CANARY} meeting", "CATEGORIES:project:vault", f"DTSTART:{_at(soon)}",
          f"DTEND:{_at(soon + timedelta(hours=1))}", *_alarm("TRIGGER:-PT20M", f"DESCRIPTION:{CANARY}"))
    mail_plan = sample_plan.config(gateway_home)["plugins"]["mail"]

    def gateway(**extra):
        return make_gateway([gateway_mail], home=gateway_home, config={"gateway": {"plugins": ["mail"]},
                            "plugins": {"mail": {**mail_plan, **extra}}}, projects=PROJECTS)

    return now, soon, gateway


def test_the_alarms_of_tasks_and_events_ring_in_the_persons_zone_soonest_first(world) -> None:
    now, soon, gateway = world
    answer = gateway().call("reminders", {"days": 7})
    assert not answer.is_error, answer.text
    rings = answer.data["reminders"]
    assert [r["at"] for r in rings] == sorted(r["at"] for r in rings)
    by_what = {}
    for ring in rings:
        by_what.setdefault(ring["for"], []).append(ring)
    shown = lambda moment: moment.astimezone(PARIS).strftime("%Y-%m-%d %H:%M")  # noqa: E731
    [bins] = by_what["Put the bins out"]
    assert (bins["at"], bins["when"], bins["says"], bins["address"]) == (
        shown(soon - timedelta(minutes=15)), "15 minutes before the start", "Bins!", "sioul:task/bins")
    seeds = by_what["Order seeds"]
    assert len(seeds) == 11 and seeds[0]["when"] == "1 hour before the due time"  # REPEAT bounded: 1 + 10 rings
    assert seeds[1]["at"] == shown(soon + timedelta(days=1) - timedelta(minutes=59))
    [nursery] = by_what["Call the nursery"]
    assert nursery["at"] == shown(soon + timedelta(days=2)) and nursery["when"].startswith("set for")
    dentist = by_what["Dentist"]
    assert [d["at"] for d in dentist] == [shown(soon - timedelta(minutes=30)), shown(soon + timedelta(hours=1))]
    assert dentist[1]["when"] == "at the end" and dentist[0]["kind"] == "event"
    yoga = by_what["Yoga"]
    assert len(yoga) in (7, 8) and all(y["when"] == "10 minutes before the start" for y in yoga)
    assert yoga[0]["at"] == shown(soon + timedelta(minutes=50)) and yoga[1]["occurrence"][11:] == yoga[0]["occurrence"][11:]
    assert "Already done" not in by_what
    # The closed project's task and event: left out and counted, never named.
    assert answer.data["left_out"] == 2 and "2 reminders left out" in answer.text
    assert CANARY not in answer.text + str(answer.data)


def test_now_and_the_porch_list_the_next_24_hours(world) -> None:
    _now, soon, gateway = world
    served = gateway(admin_windows=[])
    moment = served.call("now", {})
    assert "Reminders in the next 24 hours:" in moment.text and "Put the bins out" in moment.text
    assert moment.data["reminders_total"] == 4 and len(moment.data["reminders"]) == 4  # bins, dentist twice, yoga
    assert moment.data["reminders_left_out"] == 2 and CANARY not in moment.text + str(moment.data)
    porch = served.call("porch", {})
    assert "Now:" in porch.text and "Put the bins out" in porch.text and CANARY not in porch.text
    assert porch.data["now"]["reminders_total"] == moment.data["reminders_total"]
    closed = gateway(admin_windows=["00:00-00:00"]).call("porch", {})  # outside the windows: counted only
    assert "Put the bins out" not in closed.text and "reminders in the next 24 hours" in closed.text


def test_an_alarm_khal_wrote_is_read(world, gateway_home: Path) -> None:
    now, _soon, gateway = world
    calendars = gateway_home / "vdir" / "calendars"
    config = _khal(gateway_home, calendars)
    start = now + timedelta(days=1)
    _run(gateway_home, "khal", "-c", str(config), "new", "-a", "personal", "--alarms", "45m",
         start.strftime("%Y-%m-%d"), start.strftime("%H:%M"), (start + timedelta(hours=1)).strftime("%H:%M"),
         "Piano lesson")
    rings = gateway().call("reminders", {"days": 3}).data["reminders"]
    [piano] = [r for r in rings if r["for"] == "Piano lesson"]
    assert piano["at"] == (start - timedelta(minutes=45)).strftime("%Y-%m-%d %H:%M")
    assert piano["when"] == "45 minutes before the start"


@pytest.mark.skipif(shutil.which("remind") is None, reason="Debian's remind (apt install remind; .ci/run does)")
def test_remind_files_are_read_by_remind_itself_and_run_nothing(world, gateway_home: Path) -> None:
    now, _soon, gateway = world
    folder = gateway_home / "reminders"
    folder.mkdir()
    tomorrow = (now + timedelta(days=1)).date()
    ran = gateway_home / "ran"
    (folder / "home.rem").write_text(
        f"REM {tomorrow:%b %d %Y} AT 16:45 MSG Call Ada about the quinces%\n"
        f"REM {tomorrow:%b %d %Y} MSG Pay the rent%\n"
        f"REM {tomorrow:%b %d %Y} RUN touch {ran}\n"
        f"REM {tomorrow:%b %d %Y} MSG [shell(\"touch {ran}\")]%\n")
    vault = folder / "vault"
    vault.mkdir()
    (vault / "vault.rem").write_text(f"REM {tomorrow:%b %d %Y} AT 10:00 MSG {CANARY} the box%\n")
    (folder / "all.rem").write_text("INCLUDE home.rem\nINCLUDE vault/vault.rem\n")
    projects = [*PROJECTS[:1], {"id": "vault", "name": "Vault", "ai": False, "paths": [str(vault)]}]
    served = make_gateway([gateway_mail], home=gateway_home, projects=projects, config={
        "gateway": {"plugins": ["mail"]},
        "plugins": {"mail": {**sample_plan.config(gateway_home)["plugins"]["mail"], "remind": str(folder / "all.rem")}}})
    answer = served.call("reminders", {"days": 3})
    assert not answer.is_error, answer.text
    remind = [r for r in answer.data["reminders"] if r["kind"] == "remind"]
    assert {(r["at"], r["for"]) for r in remind} >= {(f"{tomorrow} 16:45", "Call Ada about the quinces"),
                                                    (tomorrow.isoformat(), "Pay the rent")}
    assert any(r["source"] == "remind file home.rem, line 1" for r in remind)
    assert not ran.exists()  # RUN and shell() are off
    assert CANARY not in answer.text + str(answer.data) and answer.data["left_out"] == 3  # two alarms, one REM
    assert str(gateway_home) not in answer.text + str(answer.data)
    missing = make_gateway([gateway_mail], home=gateway_home, projects=PROJECTS, config={
        "gateway": {"plugins": ["mail"]}, "plugins": {"mail": {"remind": str(folder / "nowhere.rem")}}})
    said = missing.call("reminders", {})
    assert not said.is_error and "does not exist ([plugins.mail] remind" in said.text
