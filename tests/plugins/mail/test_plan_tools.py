"""The plan's tools (tasks, agenda, projects, now) on invented vdirs, through the gateway's own call path."""

from __future__ import annotations

import os
import time
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import gateway_mail
import icalendar
import pytest
from gateway_mail.mail import sample
from gateway_mail.plan import sample as sample_plan
from gateway_mail.plan import tasks, vdir

from gateway.testing import make_gateway

CANARY = "quokkaplancanary"
PARIS = ZoneInfo("Europe/Paris")


@pytest.fixture
def plan(gateway_home: Path):
    vdir.forget()
    made = sample_plan.world(gateway_home, CANARY, datetime.now(PARIS))
    mail_root = gateway_home / "Mail" / "personal"
    ids = sample.world(mail_root, "mailcanaryword", time.time())

    def gateway(projects=sample_plan.PROJECTS, outside_projects: bool | None = None, **extra):
        config = sample_plan.config(gateway_home, mail_root, **extra)
        if outside_projects is not None:
            config["access"] = {"outside_projects": outside_projects}
        return make_gateway([gateway_mail], home=gateway_home, config=config, projects=projects)

    yield made, ids, gateway
    vdir.forget()


def _opened(name: str) -> list[dict]:
    return [{**p, "ai": True} if p["id"] == name else p for p in sample_plan.PROJECTS]


def _component(path: Path, kind: str = "VTODO"):
    return next(c for c in icalendar.Calendar.from_ical(path.read_bytes()).walk(kind))


def test_the_plan_tools_their_schemas_and_hints(plan) -> None:
    _made, _ids, gateway = plan
    listed = {t.name: t.tool for t in gateway().catalogue().tools}
    expected = {
        "list_tasks": ({"view", "project", "list", "limit"}, []), "agenda": ({"start", "days"}, []),
        "list_projects": (set(), []), "read_project": ({"address"}, ["address"]), "now": (set(), []),
        "reminders": ({"days", "limit"}, []),
        "add_task": ({"title", "project", "list", "due", "priority", "tags", "from_message", "parent", "description",
                      "start", "repeat"}, ["title"]),
        "complete_task": ({"address"}, ["address"]),
        "add_event": ({"title", "start", "end", "location", "calendar", "description", "repeat"}, ["title", "start"]),
    }
    for name, (properties, required) in expected.items():
        schema = listed[name].input_schema
        assert set(schema["properties"]) == properties, name
        assert sorted(schema.get("required", [])) == sorted(required), name
    assert listed["list_tasks"].input_schema["properties"]["view"]["enum"] == ["now", "today", "all"]
    assert listed["list_tasks"].input_schema["properties"]["view"]["default"] == "now"
    assert listed["list_tasks"].input_schema["properties"]["limit"]["default"] == 50
    assert listed["agenda"].input_schema["properties"]["start"]["default"] == "today"
    assert listed["agenda"].input_schema["properties"]["days"]["default"] == 7
    priority = listed["add_task"].input_schema["properties"]["priority"]
    assert (priority["minimum"], priority["maximum"]) == (1, 9)
    assert listed["add_task"].input_schema["properties"]["tags"]["items"] == {"type": "string"}
    for name in ("list_tasks", "agenda", "list_projects", "read_project", "now"):
        assert listed[name].read_only
    for name in ("add_task", "complete_task", "add_event"):
        assert not listed[name].read_only and not listed[name].destructive and not listed[name].open_world


def test_the_next_step_comes_first_and_says_why(plan) -> None:
    _made, _ids, gateway = plan
    answer = gateway(projects=_opened("vault")).call("list_tasks", {})
    assert not answer.is_error, answer.text
    addresses = [t["address"] for t in answer.data["tasks"]]
    # The vault's step is the most overdue; the Dupont step inherits its bigger task's date; bread is due today.
    assert addresses[:2] == ["sioul:task/vault-2", "sioul:task/dupont-2"]
    assert set(addresses[2:4]) == {"sioul:task/both-1", "sioul:task/bread"}
    assert "overdue" in answer.data["tasks"][0]["why"]
    assert answer.data["tasks"][1]["why"].startswith("a step of a bigger task overdue")
    # A task with open steps, a task waiting on an open one, and a task done are not next steps.
    assert not {"sioul:task/vault-1", "sioul:task/dupont-1", "sioul:task/dupont-3", "sioul:task/done-1"} & set(
        addresses)


def test_the_next_step_of_a_closed_project_is_said_kept_and_nothing_of_it_given(plan) -> None:
    _made, _ids, gateway = plan
    served = gateway()
    answer = served.call("list_tasks", {})
    assert answer.data["next_kept"] is True and "next step is kept" in answer.text
    assert CANARY not in answer.text and CANARY not in str(answer.data)
    assert answer.data["tasks"][0]["address"] == "sioul:task/dupont-2"
    moment = served.call("now", {})
    assert moment.data.get("next_step_kept") is True and "next_step" not in moment.data
    assert CANARY not in moment.text + str(moment.data)


def test_a_task_waiting_on_a_closed_ones_keeps_its_place_and_the_closed_one_is_in_no_answer(plan) -> None:
    _made, _ids, gateway = plan
    closed = gateway().call("list_tasks", {"view": "all"}).data["tasks"]
    opened = gateway(projects=_opened("vault")).call("list_tasks", {"view": "all"}).data["tasks"]
    visible = [t["address"] for t in closed]
    assert visible == [t["address"] for t in opened if t["address"] in visible]
    tiles = next(t for t in closed if t["address"] == "sioul:task/dupont-3")
    assert "waits_on" not in tiles and "vault" not in str(tiles)
    assert next(t for t in opened if t["address"] == "sioul:task/dupont-3")["waits_on"] == ["sioul:task/vault-1"]


def test_a_task_in_two_projects_is_shown_only_when_both_are_open(plan) -> None:
    _made, _ids, gateway = plan
    for projects, shown in ((sample_plan.PROJECTS, False), (_opened("vault"), True)):
        answer = gateway(projects=projects).call("list_tasks", {"view": "all", "project": "dupont"})
        assert ("sioul:task/both-1" in [t["address"] for t in answer.data["tasks"]]) is shown
        assert answer.data["left_out"] == (0 if shown else 1)


def test_lists_leave_out_and_count(plan) -> None:
    _made, _ids, gateway = plan
    served = gateway()
    assert served.call("list_tasks", {"view": "all"}).data["left_out"] == 3  # vault-1, vault-2, both-1
    agenda = served.call("agenda", {"days": 3})
    assert agenda.data["left_out"] == 1 and CANARY not in agenda.text
    projects = served.call("list_projects", {})
    assert [p["id"] for p in projects.data["projects"]] == ["dupont"] and projects.data["left_out"] == 2


def test_things_outside_projects_follow_their_setting(plan) -> None:
    _made, _ids, gateway = plan
    served = gateway(outside_projects=False)
    shown = [t["address"] for t in served.call("list_tasks", {"view": "all"}).data["tasks"]]
    assert "sioul:task/bread" not in shown and "sioul:task/dupont-1" in shown
    events = [e["address"] for e in served.call("agenda", {}).data["events"]]
    assert events == ["sioul:event/dupont-visit"]
    refused = served.call("add_event", {"title": "Dentist", "start": "2026-12-04 10:00"})
    assert refused.is_error and "only the person can open it" in refused.text
    assert served.call("add_task", {"title": "Nothing's"}).is_error
    assert not served.call("add_task", {"title": "For Claire", "project": "dupont"}).is_error
    moment = served.call("now", {})
    assert not moment.is_error and "Now:" in moment.text


def test_add_task_writes_todomans_fields_in_a_new_file(plan) -> None:
    made, ids, gateway = plan
    served = gateway()
    answer = served.call("add_task", {"title": "Call Claire back", "project": "sioul:project/dupont",
                                      "due": "2026-12-03T08:00Z", "priority": 2, "tags": ["phone"],
                                      "from_message": f"mid:{ids['plumber']}", "parent": "sioul:task/dupont-1",
                                      "list": "work"})
    assert not answer.is_error, answer.text
    path = made["tasks"] / answer.data["file"]  # relative to the vdir's root: no home spelled out
    assert path.parent == made["tasks"] / "work" and path.name == answer.data["address"][len("sioul:task/"):] + ".ics"
    todo = _component(path)
    assert str(todo["SUMMARY"]) == "Call Claire back" and str(todo["STATUS"]) == "NEEDS-ACTION"
    due = todo["DUE"].dt
    assert due == datetime(2026, 12, 3, 9, 0, tzinfo=PARIS) and due.tzinfo.key == "Europe/Paris"
    assert b"DUE;TZID=Europe/Paris:20261203T090000" in path.read_bytes()
    assert int(todo["PRIORITY"]) == 2 and str(todo["REFID"]) == "dupont"
    assert [str(c) for c in todo["CATEGORIES"].cats] == ["phone", "project:dupont"]
    assert str(todo["RELATED-TO"]) == "dupont-1" and todo["RELATED-TO"].params["RELTYPE"] == "PARENT"
    assert f"mid:{ids['plumber']}" in str(todo["DESCRIPTION"])
    listed = served.call("list_tasks", {"view": "all", "project": "dupont"})
    assert answer.data["address"] in [t["address"] for t in listed.data["tasks"]]


def test_what_an_agent_writes_stays_on_one_line(plan) -> None:
    _made, _ids, gateway = plan
    served = gateway()
    before = sorted(_made["tasks"].rglob("*.ics")) + sorted(_made["calendars"].rglob("*.ics"))
    for tool, arguments in (
        ("add_task", {"title": "Pay\nDTSTART:20270101T000000Z"}),
        ("add_task", {"title": "Pay\u2028STATUS:COMPLETED"}),
        ("add_task", {"title": "Pay", "tags": ["a\rb"]}),
        ("add_task", {"title": "Pay", "tags": ["one,two"]}),
        ("add_task", {"title": "Pay", "due": "2026-12-03\nRRULE:FREQ=DAILY"}),
        ("add_task", {"title": "Pay", "from_message": "mid:x@example.org\nATTACH:file:///etc/passwd"}),
        ("add_event", {"title": "Visit", "start": "2026-12-03 09:00", "location": "Here\nATTENDEE:x@example.com"}),
        ("add_event", {"title": "Visit\x0bthere", "start": "2026-12-03 09:00"}),
    ):
        answer = served.call(tool, arguments)
        assert answer.is_error, (tool, arguments)
    assert sorted(_made["tasks"].rglob("*.ics")) + sorted(_made["calendars"].rglob("*.ics")) == before


def test_a_time_given_in_utc_lands_in_the_persons_zone(plan) -> None:
    made, _ids, gateway = plan
    answer = gateway().call("add_event", {"title": "Plumber again", "start": "2026-12-03T08:00:00Z",
                                          "location": "12 rue des Lilas"})
    assert not answer.is_error, answer.text
    assert answer.data["start"] == "2026-12-03 09:00" and answer.data["end"] == "2026-12-03 10:00"
    raw = (made["calendars"] / answer.data["file"]).read_bytes()
    assert b"DTSTART;TZID=Europe/Paris:20261203T090000" in raw and b"BEGIN:VTIMEZONE" in raw
    event = _component(made["calendars"] / answer.data["file"], "VEVENT")
    assert str(event["LOCATION"]) == "12 rue des Lilas"


def test_complete_task_changes_only_its_five_lines(plan) -> None:
    made, _ids, gateway = plan
    path = made["files"]["dupont-1"]
    before = path.read_bytes()
    answer = gateway().call("complete_task", {"address": "sioul:task/dupont-1"})
    assert not answer.is_error, answer.text
    after = path.read_bytes()
    assert b"\r\n" in after and b"\n" not in after.replace(b"\r\n", b"")
    changed = {"STATUS", "COMPLETED", "PERCENT-COMPLETE", "LAST-MODIFIED", "SEQUENCE"}

    def others(raw: bytes) -> list[bytes]:
        return [line for line in raw.split(b"\r\n") if line.split(b":")[0].split(b";")[0].decode() not in changed]

    assert others(after) == others(before)
    assert b"X-TODOMAN-SPECIAL:keep me" in after
    todo = _component(path)
    assert str(todo["STATUS"]) == "COMPLETED" and int(todo["PERCENT-COMPLETE"]) == 100
    assert int(todo["SEQUENCE"]) == 1 and todo["COMPLETED"].dt.tzinfo is not None


def test_a_task_done_is_reopened_only_by_the_person(plan) -> None:
    made, _ids, gateway = plan
    served = gateway()
    assert not served.call("complete_task", {"address": "sioul:task/bread"}).is_error
    done = made["files"]["bread"].read_bytes()
    again = served.call("complete_task", {"address": "sioul:task/bread"})
    assert not again.is_error and again.data["changed"] is False and "Only the person reopens" in again.text
    assert made["files"]["bread"].read_bytes() == done
    assert "sioul:task/bread" not in [t["address"] for t in served.call("list_tasks", {"view": "all"}).data["tasks"]]


def test_a_folded_line_and_lf_endings_survive_marking_done() -> None:
    raw = (b"BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VTODO\nUID:f1\nSUMMARY:A long title that was folded by\n  its"
           b" writer\nSTATUS:IN-PROCESS\nSEQUENCE:4\nX-UNKNOWN;X-P=1:kept\nPERCENT-COMPLETE:40\nEND:VTODO\n"
           b"END:VCALENDAR\n")
    done = tasks.mark_done(raw, "f1", datetime(2026, 12, 1, 10, tzinfo=ZoneInfo("UTC")))
    assert b"SUMMARY:A long title that was folded by\n  its writer\n" in done
    assert b"SEQUENCE:5\n" in done and b"STATUS:COMPLETED\n" in done and b"PERCENT-COMPLETE:100\n" in done
    assert b"X-UNKNOWN;X-P=1:kept\n" in done and b"COMPLETED:20261201T100000Z" in done
    assert done.index(b"STATUS:COMPLETED") < done.index(b"SEQUENCE:5")  # each replaced where it stood


def test_a_repeating_tasks_next_occurrence_moves_due_and_start_and_a_finished_rule_makes_none() -> None:
    raw = (b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VTODO\r\nUID:bins\r\nSUMMARY:Bins out\r\n"
           b"DTSTART;VALUE=DATE:20261130\r\nDUE;VALUE=DATE:20261201\r\nRRULE:FREQ=WEEKLY;UNTIL=20261215T000000Z\r\n"
           b"SEQUENCE:3\r\nSTATUS:IN-PROCESS\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT1H\r\n"
           b"DESCRIPTION:bins\r\nEND:VALARM\r\nEND:VTODO\r\nEND:VCALENDAR\r\n")
    now = datetime(2026, 12, 1, 10, tzinfo=ZoneInfo("UTC"))
    following = tasks.next_occurrence(raw, "bins", now)
    assert following is not None and following.due == date(2026, 12, 8) and following.uid != "bins"
    made = icalendar.Calendar.from_ical(following.data).walk("VTODO")[0]
    assert made["DTSTART"].dt == date(2026, 12, 7) and made["DUE"].dt == date(2026, 12, 8)
    assert str(made["STATUS"]) == "NEEDS-ACTION" and int(made["SEQUENCE"]) == 0 and "COMPLETED" not in made
    assert str(made["SUMMARY"]) == "Bins out" and made.walk("VALARM") and "RRULE" in made
    done = tasks.mark_done(raw, "bins", now, end_repeat=True)
    assert b"RRULE" not in done and b"BEGIN:VALARM" in done and b"STATUS:COMPLETED" in done
    last = raw.replace(b"20261130", b"20261208").replace(b"20261201", b"20261215")
    assert tasks.next_occurrence(last, "bins", now) == tasks.Next(None)  # the rule's last date: none after
    assert tasks.next_occurrence(raw.replace(b"RRULE:FREQ=WEEKLY;UNTIL=20261215T000000Z\r\n", b""), "bins",
                                 now) is None


def test_nothing_is_written_into_or_marked_done_in_a_closed_project(plan) -> None:
    made, ids, gateway = plan
    served = gateway()
    before = {p: p.read_bytes() for p in made["tasks"].rglob("*.ics")}
    for tool, arguments in (
        ("add_task", {"title": "Sneak in", "project": "vault"}),
        ("add_task", {"title": "Sneak in", "project": "sioul:case/vault"}),
        ("add_task", {"title": "Sneak in", "project": "nosuchproject"}),
        ("add_task", {"title": "A step", "parent": "sioul:task/vault-1"}),
        ("add_task", {"title": "A step", "parent": "sioul:task/vault-2", "project": "dupont"}),
        ("add_task", {"title": "From the vault", "from_message": f"mid:{ids['vault']}"}),
        ("complete_task", {"address": "sioul:task/vault-2"}),
        ("complete_task", {"address": "sioul:task/both-1"}),
    ):
        answer = served.call(tool, arguments)
        assert answer.is_error and "only the person can open it" in answer.text, (tool, arguments, answer.text)
        assert CANARY not in answer.text
    assert {p: p.read_bytes() for p in made["tasks"].rglob("*.ics")} == before


def test_a_project_by_its_address_and_a_kept_one_refused(plan) -> None:
    _made, _ids, gateway = plan
    served = gateway()
    page = served.call("read_project", {"address": "sioul:project/dupont"})
    assert not page.is_error, page.text
    assert [t["address"] for t in page.data["tasks"]] == ["sioul:task/dupont-2", "sioul:task/dupont-1",
                                                          "sioul:task/dupont-3"]
    assert [e["address"] for e in page.data["events"]] == ["sioul:event/dupont-visit"]
    assert page.data["recent_mail"] == 1 and page.data["left_out"] == 1  # the task shared with the vault
    assert CANARY not in page.text + str(page.data)
    assert served.call("read_project", {"address": "sioul:case/dupont"}).data["id"] == "dupont"
    kept = served.call("read_project", {"address": "sioul:project/vault"})
    unknown = served.call("read_project", {"address": "sioul:project/nosuch"})
    assert kept.is_error and unknown.is_error and kept.text == unknown.text


def test_the_agenda_is_in_the_persons_zone_with_repeats(plan) -> None:
    _made, _ids, gateway = plan
    answer = gateway().call("agenda", {"start": "tomorrow", "days": 2})
    assert not answer.is_error, answer.text
    plumber = next(e for e in answer.data["events"] if e["address"] == "sioul:event/plumber")
    assert plumber["start"].endswith("09:00") and plumber["location"] == "12 rue des Lilas"
    assert [e["address"] for e in answer.data["events"]].count("sioul:event/yoga") == 2
    assert answer.data["zone"] == "Europe/Paris"
    utc = gateway(timezone="UTC").call("agenda", {"start": "tomorrow", "days": 2})
    assert next(e for e in utc.data["events"] if e["address"] == "sioul:event/plumber")["start"].endswith("08:00")


def test_now_says_the_time_the_hours_and_stays_when_everything_is_closed(plan) -> None:
    _made, _ids, gateway = plan
    closed = [{**p, "ai": False} for p in sample_plan.PROJECTS]
    answer = gateway(projects=closed, outside_projects=False, hours="00:00-24:00").call("now", {})
    assert not answer.is_error and answer.data["within_hours"] is True and answer.data["zone"] == "Europe/Paris"
    assert "next_event" not in answer.data and answer.data["next_step_kept"] is True
    assert CANARY not in answer.text
    wrong = gateway(timezone="Mars/Olympus").call("now", {})
    assert wrong.is_error and "Mars/Olympus" in wrong.text


def test_the_resources_give_the_tools_text(plan) -> None:
    _made, _ids, gateway = plan
    served = gateway()
    for uri, tool, arguments in (("sioul:tasks/now", "list_tasks", {}), ("sioul:tasks/today", "list_tasks",
                                 {"view": "today"}), ("sioul:agenda", "agenda", {}),
                                 ("sioul:projects", "list_projects", {})):
        read = served.read(uri)
        assert read.text.splitlines()[1:] == served.call(tool, arguments).text.splitlines()[1:], uri


def test_a_new_task_or_event_is_a_whole_new_file_and_leaves_nothing_else(plan) -> None:
    made, _ids, gateway = plan
    before = {p for root in (made["tasks"], made["calendars"]) for p in root.rglob("*")}
    served = gateway()
    first = served.call("add_task", {"title": "Same title", "list": "home"})
    second = served.call("add_task", {"title": "Same title", "list": "home"})
    event = served.call("add_event", {"title": "Same title", "start": "2026-12-04"})
    assert not first.is_error and not second.is_error and not event.is_error
    after = {p for root in (made["tasks"], made["calendars"]) for p in root.rglob("*")}
    assert after - before == {made["tasks"] / first.data["file"], made["tasks"] / second.data["file"],
                              made["calendars"] / event.data["file"]}  # no temporary left
    assert first.data["address"] != second.data["address"]
    assert event.data["start"] == "2026-12-04" and event.data["end"] == "2026-12-04"
    link = made["tasks"] / "linked"
    link.symlink_to(made["tasks"] / "home")
    refused = served.call("add_task", {"title": "Through a link", "list": "linked"})
    assert refused.is_error and not [p for p in (made["tasks"] / "home").iterdir() if "Through" in p.read_text()]


def test_a_changed_file_is_read_again_and_a_new_process_reads_the_disk_cache(plan, monkeypatch) -> None:
    made, _ids, gateway = plan
    served = gateway()
    assert served.call("list_tasks", {"view": "all"}).data["tasks"]
    path = made["files"]["bread"]
    path.write_bytes(path.read_bytes().replace(b"Buy bread", b"Buy croissants"))
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 5_000_000_000))
    monkeypatch.setattr(vdir, "FULL_CHECK", 0.0)
    titles = [t["title"] for t in served.call("list_tasks", {"view": "all"}).data["tasks"]]
    assert "Buy croissants" in titles
    vdir.forget()  # as a new process: nothing in memory

    def no_parsing(*args, **kwargs):
        raise AssertionError("a file was parsed although the disk cache knew it")

    monkeypatch.setattr(vdir, "items_of", no_parsing)
    monkeypatch.setattr(vdir, "FULL_CHECK", 3600.0)
    assert "Buy croissants" in [t["title"] for t in served.call("list_tasks", {"view": "all"}).data["tasks"]]


def test_the_disk_cache_holds_masked_words_only(plan) -> None:
    made, _ids, gateway = plan
    sample_plan.put(made["tasks"] / "home", "card", sample_plan.ics(
        "VTODO", "card", [f"SUMMARY:Pay with card {sample.CARD} today", "STATUS:NEEDS-ACTION"]))
    served = gateway()
    answer = served.call("list_tasks", {"view": "all"})
    title = next(t["title"] for t in answer.data["tasks"] if t["address"] == "sioul:task/card")
    digits = sample.CARD.replace(" ", "")[4:10]
    assert digits not in title.replace(" ", "") and "Pay with card" in title
    caches = list(Path(os.environ["XDG_CACHE_HOME"]).rglob("plan-cache-*.sqlite"))
    assert caches  # one per root read
    for cache in caches:
        for file in (cache, cache.with_name(cache.name + "-wal")):
            if file.exists():
                assert sample.CARD.encode() not in file.read_bytes()
                assert digits.encode() not in file.read_bytes().replace(b" ", b"")
        assert oct(cache.stat().st_mode & 0o777) == "0o600"


def test_a_long_first_reading_stops_before_the_deadline_and_goes_on_next_call(gateway_home: Path) -> None:
    vdir.forget()
    root = gateway_home / "vdir"
    sample_plan.generate(root, 60, 0)
    calls = iter(range(10_000))
    first = vdir.read(root / "tasks", gateway_home / "cache", stop=lambda: next(calls) >= 10)
    assert 0 < len(first.items) < 60 and first.pending == 60 - len(first.items)
    second = vdir.read(root / "tasks", gateway_home / "cache")
    assert len(second.items) == 60 and second.pending == 0
    vdir.forget()
    assert len(vdir.read(root / "tasks", gateway_home / "cache").items) == 60  # what was read stayed on disk


def test_a_step_in_a_future_start_waits(plan) -> None:
    made, _ids, gateway = plan
    later = (datetime.now(PARIS) + timedelta(days=10)).strftime("%Y%m%d")
    sample_plan.put(made["tasks"] / "home", "later", sample_plan.ics(
        "VTODO", "later", ["SUMMARY:Later on", "STATUS:NEEDS-ACTION", f"DTSTART;VALUE=DATE:{later}"]))
    served = gateway()
    assert "sioul:task/later" not in [t["address"] for t in served.call("list_tasks", {}).data["tasks"]]
    entry = next(t for t in served.call("list_tasks", {"view": "all"}).data["tasks"]
                 if t["address"] == "sioul:task/later")
    assert "starts" in entry["why"]


def test_a_projects_page_gives_what_is_tied_to_it_and_a_task_from_mail_is_tied_to_its_message(plan) -> None:
    _made, ids, gateway = plan
    served = gateway()
    for to in ("https://example.com/kitchen-plans", "sioul:task/bread"):
        linked = served.call("link", {"address": "sioul:project/dupont", "to": to})
        assert not linked.is_error, linked.text
    added = served.call("add_task", {"title": "Pay the plumber", "from_message": f"mid:{ids['plumber']}"})
    assert not added.is_error, added.text
    page = served.call("read_project", {"address": "sioul:project/dupont"})
    assert {t["address"] for t in page.data["ties"]} == {"https://example.com/kitchen-plans", "sioul:task/bread"}
    assert "sioul:task/bread  Buy bread" in page.text
    # Tied to the project, bread is now the project's: it shows among its tasks.
    assert "sioul:task/bread" in [t["address"] for t in page.data["tasks"]]
    links = served.call("links", {"address": added.data["address"]})
    assert f"mid:{ids['plumber']}" in [t["address"] for t in links.data["ties"]], links.text


def test_a_repeating_task_whose_file_cannot_be_read_is_refused_before_anything_is_written() -> None:
    broken = (b"BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nUID:x\r\nRRULE:FREQ=WEEKLY\r\nDUE;VALUE=DATE:2026120\r\n"
              b"END:VTODO\r\nEND:VCALENDAR\r\n")
    with pytest.raises(tasks.ToolError, match="cannot be read as iCalendar"):
        tasks.next_occurrence(broken, "x", datetime(2026, 12, 1, tzinfo=ZoneInfo("UTC")))
    plain = broken.replace(b"RRULE:FREQ=WEEKLY\r\n", b"")
    assert tasks.next_occurrence(plain, "x", datetime(2026, 12, 1, tzinfo=ZoneInfo("UTC"))) is None
