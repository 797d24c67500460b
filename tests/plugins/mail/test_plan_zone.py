"""The person's zone and hours, times written by an agent, and the project membership rules."""

from __future__ import annotations

from datetime import date, datetime, time
from zoneinfo import ZoneInfo

import pytest
from gateway_mail import zone
from gateway_mail.projects import projects

from gateway import ToolError

PARIS = ZoneInfo("Europe/Paris")
CLOCK = datetime(2026, 12, 1, 23, 30, tzinfo=ZoneInfo("UTC"))  # already 2 December in Paris


def test_a_time_given_in_utc_lands_in_the_persons_zone():
    when = zone.parse_when("2026-12-03T08:00Z", PARIS)
    assert when == datetime(2026, 12, 3, 9, 0, tzinfo=PARIS)
    assert when.tzinfo is PARIS
    assert zone.parse_when("2026-12-03T10:00+03:00", PARIS).hour == 8


def test_a_local_time_is_the_persons_and_a_date_stays_a_date():
    assert zone.parse_when("2026-12-03 09:00", PARIS) == datetime(2026, 12, 3, 9, 0, tzinfo=PARIS)
    assert zone.parse_when("2026-12-03", PARIS) == date(2026, 12, 3)


def test_today_is_the_persons_day_not_utcs():
    assert zone.parse_when("today", PARIS, CLOCK) == date(2026, 12, 2)
    assert zone.parse_when("Tomorrow", PARIS, CLOCK) == date(2026, 12, 3)


@pytest.mark.parametrize("text", ["next week", "2026-12-03\nDTSTART:2027", "2026-13-40", "x" * 100])
def test_what_is_not_a_time_is_refused_saying_what_is_taken(text):
    with pytest.raises(ToolError, match="not a time"):
        zone.parse_when(text, PARIS)


def test_hours_say_within_and_next_opening():
    hours = zone.hours_of({"hours": "08:30-18:30"})
    assert hours.within(datetime(2026, 12, 2, 9, 0, tzinfo=PARIS))
    assert not hours.within(datetime(2026, 12, 2, 19, 0, tzinfo=PARIS))
    assert hours.next_start(datetime(2026, 12, 2, 19, 0, tzinfo=PARIS)) == datetime(2026, 12, 3, 8, 30, tzinfo=PARIS)
    night = zone.hours_of({"hours": "22:00-06:00"})
    assert night.within(datetime(2026, 12, 2, 23, 0, tzinfo=PARIS)) and not night.within(
        datetime(2026, 12, 2, 12, 0, tzinfo=PARIS))
    assert zone.hours_of({}).start == time(8, 30)


def test_a_wrong_zone_or_span_is_said_not_taken_for_a_default():
    with pytest.raises(zone.ZoneError, match="Mars/Olympus"):
        zone.zone_of({"timezone": "Mars/Olympus"})
    with pytest.raises(zone.ZoneError, match="span"):
        zone.hours_of({"hours": "all day"})
    assert zone.zone_name(zone.zone_of({"timezone": "Europe/Paris"})) == "Europe/Paris"


def test_an_item_names_its_projects_by_refid_and_category():
    assert projects.tagged(["dupont", "project:leroy"], ["Work", "project:martin", "PROJECT:"]) == {
        "dupont", "leroy", "martin"}


def test_a_step_belongs_to_its_bigger_tasks_projects_all_the_way_up_and_cycles_end():
    own = {"top": frozenset({"dupont"}), "mid": frozenset(), "leaf": frozenset({"leroy"}), "a": frozenset({"x"}),
           "b": frozenset({"y"})}
    parents = {"leaf": "mid", "mid": "top", "a": "b", "b": "a"}
    owners = projects.owners_with_parents(own, parents.get)
    assert owners("leaf") == {"dupont", "leroy"}
    assert owners("mid") == {"dupont"}
    assert owners("a") == owners("b") == {"x", "y"}


def test_a_project_address_old_and_new():
    assert projects.id_of_address("sioul:case/dupont") == projects.id_of_address("sioul:project/dupont") == "dupont"
    assert projects.id_of_address("sioul:task/dupont") is None
