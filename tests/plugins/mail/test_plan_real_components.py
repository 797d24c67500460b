"""The plan's files against the real programs that keep them: todoman and khal read what the agent wrote, the
plugin reads what they wrote (unknown properties kept when a task is marked done), and a sync round trip through
Radicale (a CalDAV server on a loopback port) and vdirsyncer.

All four come from PyPI in the test extra (`pip install -e '.[all,test]'`, what scripts/setup.sh does); each runs
from a config written into the test's temporary home, and Radicale is stopped at the end.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import gateway_mail
import pytest
from gateway_mail.plan import vdir

from gateway.api.context import home_environment
from gateway.testing import make_gateway

BIN = Path(sys.executable).parent
PROJECTS = [{"id": "dupont", "name": "Dupont kitchen", "ai": True}]


def _run(home: Path, *command: str, stdin: str | None = None) -> str:
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(home), "TZ": "Europe/Paris", "LANG": "C.UTF-8"}
    done = subprocess.run([str(BIN / command[0]), *command[1:]], env=env, input=stdin, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, f"{command}: {done.stdout}\n{done.stderr}"
    return done.stdout


def _gateway(home: Path, tasks: Path, calendars: Path):
    vdir.forget()
    config = {"gateway": {"plugins": ["mail"]},
              "plugins": {"mail": {"tasks": str(tasks), "calendars": str(calendars), "timezone": "Europe/Paris"}}}
    return make_gateway([gateway_mail], home=home, config=config, projects=PROJECTS)


def _todoman(home: Path, tasks: Path) -> Path:
    config = home / "todoman.py"
    config.write_text(f'path = "{tasks}/*"\ndate_format = "%Y-%m-%d"\ntime_format = "%H:%M"\n'
                      'default_list = "home"\ndefault_due = 0\n')
    return config


def _khal(home: Path, calendars: Path) -> Path:
    config = home / "khal.conf"
    config.write_text(f"""[calendars]
[[personal]]
path = {calendars / "personal"}
type = calendar
[locale]
timeformat = %H:%M
dateformat = %Y-%m-%d
longdateformat = %Y-%m-%d
datetimeformat = %Y-%m-%d %H:%M
longdatetimeformat = %Y-%m-%d %H:%M
local_timezone = Europe/Paris
default_timezone = Europe/Paris
[sqlite]
path = {home / "khal.db"}
""")
    return config


def test_todoman_and_khal_read_what_the_agent_wrote_and_the_plugin_reads_theirs(gateway_home: Path) -> None:
    tasks, calendars = gateway_home / "tasks", gateway_home / "calendars"
    (tasks / "home").mkdir(parents=True)
    (calendars / "personal").mkdir(parents=True)
    todo, khal = _todoman(gateway_home, tasks), _khal(gateway_home, calendars)

    # Written by the programs themselves, then an unknown property added by some other client.
    _run(gateway_home, "todo", "--config", str(todo), "new", "-l", "home", "--due", "2026-12-03 09:00",
         "--priority", "high", "Buy milk")
    _run(gateway_home, "khal", "-c", str(khal), "new", "-a", "personal", "2026-12-03", "10:00", "11:00",
         "Dentist", ":: bring the card")
    theirs = next((tasks / "home").glob("*.ics"))
    theirs.write_bytes(theirs.read_bytes().replace(b"END:VTODO", b"X-OTHER-CLIENT;X-P=1:kept as it was\r\nEND:VTODO"))

    served = _gateway(gateway_home, tasks, calendars)
    listed = served.call("list_tasks", {"view": "all"})
    milk = next(t for t in listed.data["tasks"] if t["title"] == "Buy milk")
    written = int(theirs.read_text().split("PRIORITY:")[1].split()[0])  # todoman's "high", as it writes it
    assert milk["due"] == "2026-12-03 09:00" and milk["priority"] == written and milk["list"] == "home"
    assert milk["priority_level"] == "high" and f"Priority: high ({written})" in listed.text  # as todoman shows it
    agenda = served.call("agenda", {"start": "2026-12-03", "days": 1})
    dentist = next(e for e in agenda.data["events"] if e["title"] == "Dentist")
    assert (dentist["start"], dentist["end"]) == ("2026-12-03 10:00", "2026-12-03 11:00")

    # What the agent writes, read by todoman and khal.
    added = served.call("add_task", {"title": "Call Claire", "due": "2026-12-04T08:00Z", "tags": ["phone"],
                                     "project": "dupont"})
    assert not added.is_error, added.text
    event = served.call("add_event", {"title": "Plumber", "start": "2026-12-03T08:00:00Z",
                                      "location": "12 rue des Lilas"})
    assert not event.is_error, event.text
    rows = json.loads(_run(gateway_home, "todo", "--config", str(todo), "--porcelain", "list"))
    call = next(r for r in rows if r["summary"] == "Call Claire")
    assert call["due"] == datetime(2026, 12, 4, 8, tzinfo=UTC).timestamp()  # 09:00 in Paris
    assert set(call["categories"]) == {"phone", "project:dupont"} and call["list"] == "home"
    shown = _run(gateway_home, "khal", "-c", str(khal), "list", "--format", "{start} {end} {title} [{location}]",
                 "2026-12-03", "1d")
    assert "2026-12-03 09:00 2026-12-03 10:00 Plumber [12 rue des Lilas]" in shown
    assert "2026-12-03 10:00 2026-12-03 11:00 Dentist" in shown

    # Marking todoman's task done keeps every other line, the unknown property too; todoman sees it done.
    before = theirs.read_bytes()
    done = served.call("complete_task", {"address": milk["address"]})
    assert not done.is_error, done.text
    after = theirs.read_bytes()
    five = (b"STATUS", b"COMPLETED", b"PERCENT-COMPLETE", b"LAST-MODIFIED", b"SEQUENCE")

    def kept(raw: bytes) -> list[bytes]:
        return [line for line in raw.splitlines() if line.split(b":")[0].split(b";")[0] not in five]

    assert kept(after) == kept(before) and b"X-OTHER-CLIENT;X-P=1:kept as it was" in after
    rows = json.loads(_run(gateway_home, "todo", "--config", str(todo), "--porcelain", "list", "--status", "ANY"))
    assert next(r for r in rows if r["summary"] == "Buy milk")["completed"] is True


REPEATING = """BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//example.org//hand written//EN\r
BEGIN:VTODO\r
UID:weekly-review@example.org\r
SUMMARY:Weekly review\r
DTSTAMP:20261101T080000Z\r
DUE;TZID=Europe/Paris:20261203T090000\r
RRULE:FREQ=WEEKLY;UNTIL=20261231T230000Z\r
CATEGORIES:project:dupont\r
PRIORITY:5\r
X-OTHER-CLIENT:kept\r
STATUS:NEEDS-ACTION\r
END:VTODO\r
END:VCALENDAR\r
"""


def test_a_repeating_task_done_leaves_todoman_its_next_occurrence_open(gateway_home: Path) -> None:
    tasks, calendars = gateway_home / "tasks", gateway_home / "calendars"
    (tasks / "home").mkdir(parents=True)
    (calendars / "personal").mkdir(parents=True)
    todo = _todoman(gateway_home, tasks)
    first = tasks / "home" / "weekly-review.ics"
    first.write_text(REPEATING, newline="")
    served = _gateway(gateway_home, tasks, calendars)
    review = next(t for t in served.call("list_tasks", {"view": "all"}).data["tasks"] if t["title"] == "Weekly review")

    done = served.call("complete_task", {"address": review["address"]})
    assert not done.is_error, done.text
    assert done.data["next"]["due"] == "2026-12-10" and "the task repeats" in done.text
    assert b"RRULE" not in first.read_bytes() and b"X-OTHER-CLIENT:kept" in first.read_bytes()
    made = tasks / done.data["next"]["file"]
    assert made.parent == first.parent and b"RRULE:FREQ=WEEKLY;UNTIL=20261231T230000Z" in made.read_bytes()

    # todoman sees the one done and the next one open, a week later at the same hour in Paris, in the project.
    rows = json.loads(_run(gateway_home, "todo", "--config", str(todo), "--porcelain", "list", "--status", "ANY"))
    reviews = sorted((r for r in rows if r["summary"] == "Weekly review"), key=lambda r: r["due"])
    assert [r["completed"] for r in reviews] == [True, False]
    assert reviews[1]["due"] - reviews[0]["due"] == 7 * 24 * 3600
    assert reviews[1]["priority"] == reviews[0]["priority"] and "project:dupont" in reviews[1]["categories"]
    listed = served.call("list_tasks", {"view": "all"}).data["tasks"]
    assert [t["address"] for t in listed if t["title"] == "Weekly review"] == [done.data["next"]["address"]]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _request(port: int, method: str, path: str, body: bytes = b"", kind: str = "application/xml") -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": "Basic " + base64.b64encode(b"pat:secret").decode(), "Content-Type": kind}
    connection.request(method, path, body, headers)
    response = connection.getresponse()
    response.read()
    connection.close()
    return response.status


@pytest.fixture
def radicale(gateway_home: Path):
    port = _free_port()
    config = gateway_home / "radicale.conf"
    storage = gateway_home / "radicale"
    config.write_text(f"[server]\nhosts = 127.0.0.1:{port}\n[auth]\ntype = none\n[storage]\n"
                      f"filesystem_folder = {storage}\n[logging]\nlevel = warning\n")
    server = subprocess.Popen([sys.executable, "-m", "radicale", "--config", str(config)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env={**os.environ, **home_environment(gateway_home)})
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield port, storage
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_sync_round_trip_through_radicale_and_vdirsyncer(gateway_home: Path, radicale) -> None:
    port, storage = radicale
    make = (b'<?xml version="1.0"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set>'
            b"<D:prop><D:displayname>tasks</D:displayname><C:supported-calendar-component-set>"
            b'<C:comp name="VTODO"/></C:supported-calendar-component-set></D:prop></D:set></C:mkcalendar>')
    assert _request(port, "MKCALENDAR", "/pat/tasks/", make) == 201
    tasks = gateway_home / "vdir" / "tasks"
    tasks.mkdir(parents=True)
    config = gateway_home / "vdirsyncer.conf"
    config.write_text(f"""[general]
status_path = "{gateway_home / 'vdirsyncer-status'}/"

[pair tasks]
a = "tasks_local"
b = "tasks_remote"
collections = ["from b"]

[storage tasks_local]
type = "filesystem"
path = "{tasks}/"
fileext = ".ics"

[storage tasks_remote]
type = "caldav"
url = "http://127.0.0.1:{port}/"
username = "pat"
password = "secret"
""")
    _run(gateway_home, "vdirsyncer", "-c", str(config), "discover", stdin="y\n" * 4)
    _run(gateway_home, "vdirsyncer", "-c", str(config), "sync")
    assert (tasks / "tasks").is_dir()

    served = _gateway(gateway_home, tasks, gateway_home / "calendars")
    added = served.call("add_task", {"title": "Send the quote", "project": "dupont", "due": "2026-12-05"})
    assert not added.is_error, added.text
    uid = added.data["address"].removeprefix("sioul:task/")
    _run(gateway_home, "vdirsyncer", "-c", str(config), "sync")
    on_server = [p.read_bytes() for p in (storage / "collection-root" / "pat" / "tasks").glob("*.ics")]
    assert any(f"UID:{uid}".encode() in raw and b"SUMMARY:Send the quote" in raw for raw in on_server)

    made_there = (b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//example.org//server//EN\r\nBEGIN:VTODO\r\n"
                  b"UID:from-the-server@example.org\r\nDTSTAMP:20261130T100000Z\r\nSUMMARY:Made on the phone\r\n"
                  b"STATUS:NEEDS-ACTION\r\nEND:VTODO\r\nEND:VCALENDAR\r\n")
    assert _request(port, "PUT", "/pat/tasks/from-the-server.ics", made_there, "text/calendar") == 201
    _run(gateway_home, "vdirsyncer", "-c", str(config), "sync")
    listed = served.call("list_tasks", {"view": "all"})
    titles = {t["address"]: t["title"] for t in listed.data["tasks"]}
    assert titles.get("sioul:task/from-the-server@example.org") == "Made on the phone"
    assert titles.get(added.data["address"]) == "Send the quote"
