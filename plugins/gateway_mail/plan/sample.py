"""Invented tasks and events (RFC 2606 domains) for the plan's tests and benchmark, written as todoman and khal do.

`world()` makes a small home: an open project (dupont), a closed one (vault) whose every thing holds the canary
word, a task in both, things of no project, a repeating event. `generate()` makes the benchmark's big vdirs, seeded.
"""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

# The mail sample's routes too (sample.py): the plumber's mail is the open project's, the vault's the closed one's.
PROJECTS = [
    {"id": "dupont", "name": "Dupont kitchen", "ai": True, "client": "claire.dupont@example.com",
     "senders": ["@plumbing.example.com"]},
    {"id": "vault", "name": "Vault matters", "ai": False, "client": "keeper@vault.example.com",
     "senders": ["@vault.example.com"]},
    {"id": "client", "name": "Client", "ai": False, "senders": ["@client.example.com"]},
]


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y%m%dT%H%M%SZ")


def ics(kind: str, uid: str, lines: list[str], *, newline: str = "\r\n", prodid: str = "-//pimutils.org//NONSGML "
        "todoman//EN") -> str:
    """One VCALENDAR around one component, property lines given as written (unknown X- ones welcome)."""
    body = ["BEGIN:VCALENDAR", "VERSION:2.0", f"PRODID:{prodid}", f"BEGIN:{kind}", f"UID:{uid}", *lines,
            f"END:{kind}", "END:VCALENDAR"]
    return newline.join(body) + newline


def put(folder: Path, uid: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{uid}.ics"
    path.write_text(text, encoding="utf-8", newline="")
    return path


def world(home: Path, canary: str, now: datetime) -> dict[str, Any]:
    """A tasks vdir (lists home, work) and a calendars vdir (personal) under `home`; what was made, by name."""
    tasks, calendars = home / "vdir" / "tasks", home / "vdir" / "calendars"
    (tasks / "work").mkdir(parents=True, exist_ok=True)
    today = now.date()
    yesterday, tomorrow = today - timedelta(days=1), today + timedelta(days=1)
    stamp = f"DTSTAMP:{_stamp(now)}"
    made = {}

    def task(folder: str, uid: str, *lines: str) -> None:
        made[uid] = put(tasks / folder, uid, ics("VTODO", uid, [stamp, *lines]))

    def event(uid: str, *lines: str) -> None:
        made[uid] = put(calendars / "personal", uid,
                        ics("VEVENT", uid, [stamp, *lines], prodid="-//PIMUTILS.ORG//NONSGML khal / icalendar //EN"))

    soon = (now + timedelta(hours=2)).astimezone(UTC)
    # The closed project: its next step comes first of all (overdue, priority 1), a step of it, an event; each
    # with a reminder ringing soon.
    task("work", "vault-1", f"SUMMARY:{canary} open the strongbox", "STATUS:NEEDS-ACTION", "PRIORITY:1",
         f"DUE;VALUE=DATE:{(today - timedelta(days=5)):%Y%m%d}", "REFID:vault", f"DESCRIPTION:{canary} inside",
         "BEGIN:VALARM", "ACTION:DISPLAY", f"TRIGGER;VALUE=DATE-TIME:{_stamp(soon)}", f"DESCRIPTION:{canary}",
         "END:VALARM")
    task("work", "vault-2", f"SUMMARY:{canary} count the keys", "STATUS:NEEDS-ACTION",
         "RELATED-TO;RELTYPE=PARENT:vault-1", f"DUE;VALUE=DATE:{(today - timedelta(days=3)):%Y%m%d}")
    event("vault-event", f"SUMMARY:{canary} meeting at the vault", "CATEGORIES:project:vault",
          f"DTSTART;TZID=Europe/Paris:{tomorrow:%Y%m%d}T100000", f"DTEND;TZID=Europe/Paris:{tomorrow:%Y%m%d}T110000",
          f"LOCATION:{canary} street", "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:-PT15M",
          f"DESCRIPTION:{canary} soon", "END:VALARM")
    # In two projects, one closed: never given.
    task("work", "both-1", f"SUMMARY:{canary} shared with the vault", "STATUS:NEEDS-ACTION",
         "CATEGORIES:project:dupont,project:vault", f"DUE;VALUE=DATE:{today:%Y%m%d}")
    # The open project: an overdue task with a step, and one that waits on the closed project's task.
    task("work", "dupont-1", "SUMMARY:Send the quote to Claire", "STATUS:NEEDS-ACTION", "REFID:dupont",
         f"DUE;VALUE=DATE:{yesterday:%Y%m%d}", "X-TODOMAN-SPECIAL:keep me", "PRIORITY:5")
    task("work", "dupont-2", "SUMMARY:Measure the worktop", "STATUS:NEEDS-ACTION",
         "RELATED-TO;RELTYPE=PARENT:dupont-1", "CATEGORIES:project:dupont")
    task("work", "dupont-3", "SUMMARY:Order the tiles", "STATUS:NEEDS-ACTION", "CATEGORIES:project:dupont",
         "RELATED-TO;RELTYPE=DEPENDS-ON:vault-1", f"DUE;VALUE=DATE:{(today + timedelta(days=3)):%Y%m%d}")
    # Of no project.
    task("home", "bread", "SUMMARY:Buy bread", "STATUS:NEEDS-ACTION", f"DUE;VALUE=DATE:{today:%Y%m%d}",
         "CATEGORIES:errands", "BEGIN:VALARM", "ACTION:DISPLAY", f"TRIGGER;VALUE=DATE-TIME:{_stamp(soon)}",
         "END:VALARM")
    task("home", "done-1", "SUMMARY:Water the plants", "STATUS:COMPLETED", f"COMPLETED:{_stamp(now)}",
         "PERCENT-COMPLETE:100")
    event("plumber", "SUMMARY:Plumber", f"DTSTART;TZID=Europe/Paris:{tomorrow:%Y%m%d}T090000",
          f"DTEND;TZID=Europe/Paris:{tomorrow:%Y%m%d}T100000", "LOCATION:12 rue des Lilas",
          "X-KHAL-SPECIAL:keep me")
    event("yoga", "SUMMARY:Yoga", f"DTSTART;TZID=Europe/Paris:{today:%Y%m%d}T183000",
          f"DTEND;TZID=Europe/Paris:{today:%Y%m%d}T193000", "RRULE:FREQ=DAILY;COUNT=30")
    event("dupont-visit", "SUMMARY:Visit the Dupont kitchen", "REFID:dupont",
          f"DTSTART;VALUE=DATE:{(today + timedelta(days=2)):%Y%m%d}",
          f"DTEND;VALUE=DATE:{(today + timedelta(days=3)):%Y%m%d}")
    return {"tasks": tasks, "calendars": calendars, "files": made}


def config(home: Path, mail_root: Path | None = None, **extra: Any) -> dict[str, Any]:
    """The mail plugin's table for `world()` (and for the mail sample's account when `mail_root` is given)."""
    table = {"tasks": str(home / "vdir" / "tasks"), "calendars": str(home / "vdir" / "calendars"),
             "timezone": "Europe/Paris", **extra}
    if mail_root is not None:
        from gateway_mail.mail import sample

        table = {**sample.config(mail_root)["plugins"]["mail"], **table}
    return {"gateway": {"plugins": ["mail"]}, "plugins": {"mail": table}}


WORDS = ("call", "send", "quote", "kitchen", "tiles", "invoice", "plumber", "review", "draft", "letter", "garden",
         "report", "bank", "school", "doctor", "car", "meeting", "train", "paint", "order")


def generate(root: Path, tasks: int, events: int, seed: int = 11, lists: int = 8, start: date | None = None) -> None:
    """The benchmark's vdirs: `tasks` VTODO under root/tasks and `events` VEVENT under root/calendars, seeded."""
    rng = random.Random(seed)
    start = start or date.today()
    stamp = "DTSTAMP:20261101T080000Z"
    for number in range(tasks):
        uid = f"task-{number:06d}"
        lines = [stamp, f"SUMMARY:{' '.join(rng.choices(WORDS, k=4))} {number}",
                 f"STATUS:{'COMPLETED' if rng.random() < 0.3 else 'NEEDS-ACTION'}"]
        if rng.random() < 0.6:
            lines.append(f"DUE;VALUE=DATE:{start + timedelta(days=rng.randint(-30, 120)):%Y%m%d}")
        if rng.random() < 0.3:
            lines.append(f"PRIORITY:{rng.randint(1, 9)}")
        if rng.random() < 0.2:
            lines.append(f"CATEGORIES:project:p{rng.randint(1, 20)}")
        if number and rng.random() < 0.1:
            lines.append(f"RELATED-TO;RELTYPE=PARENT:task-{rng.randrange(number):06d}")
        if rng.random() < 0.2:
            lines += ["BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:-PT15M", "END:VALARM"]
        put(root / "tasks" / f"list{number % lists}", uid, ics("VTODO", uid, lines))
    for number in range(events):
        uid = f"event-{number:06d}"
        day = start + timedelta(days=rng.randint(-365, 365))
        hour = rng.randint(7, 19)
        lines = [stamp, f"SUMMARY:{' '.join(rng.choices(WORDS, k=3))} {number}",
                 f"DTSTART;TZID=Europe/Paris:{day:%Y%m%d}T{hour:02d}0000",
                 f"DTEND;TZID=Europe/Paris:{day:%Y%m%d}T{hour + 1:02d}0000"]
        if rng.random() < 0.01:
            lines.append("RRULE:FREQ=WEEKLY;COUNT=20")
        if rng.random() < 0.2:
            lines.append(f"CATEGORIES:project:p{rng.randint(1, 20)}")
        if rng.random() < 0.3:
            lines += ["BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:-PT10M", "END:VALARM"]
        put(root / "calendars" / f"cal{number % 4}", uid,
            ics("VEVENT", uid, lines, prodid="-//PIMUTILS.ORG//NONSGML khal / icalendar //EN"))
