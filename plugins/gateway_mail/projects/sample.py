"""Invented things of every kind, each placed in one closed project by a different route kind (for the tests of
the traits the plugin gives the gate). Reserved domains only."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from gateway_mail.mail import sample
from gateway_mail.plan import sample as sample_plan

OWN_SERVER = sample.OWN_SERVER

LAWSUIT = {"id": "lawsuit", "name": "Lawsuit", "ai": False, "client": "ria@client.example.org",
           "senders": ["@law.example.net"], "subjects": ["ACME-2291", "Smith v. Jones"],
           "folders": ["personal/Lawsuit"]}
GARDEN = {"id": "garden", "name": "Garden", "ai": True, "subjects": ["roses"]}


def world(home: Path, canary: str) -> dict:
    """Mail of two accounts, notes, tasks, events and contacts; the config and the manifest (`lawsuit` closed,
    `garden` open); the Message-IDs by role."""
    now = time.time()
    personal, work = home / "Mail" / "personal", home / "Mail" / "work"
    inbox, lawsuit, sent = personal / "INBOX", personal / "Lawsuit", personal / "Sent"
    for folder in (inbox, lawsuit, sent, work / "INBOX", personal / "Drafts"):
        sample.make_folder(folder)
    ids = {}

    def put(role: str, folder: Path, **fields) -> None:
        ids[role] = f"{role}@example.org"
        sample.deliver(folder, sample.message(message_id=ids[role], date=now - 600 + len(ids), **fields))

    law = sample.authenticated("law.example.net")
    put("sender", inbox, sender="Lee Lawyer <lee@law.example.net>", subject="Your file", headers=law,
        body=f"plumtree {canary} sender")
    put("unproven", inbox, sender="Para Legal <para@law.example.net>", subject="Papers",
        body=f"plumtree {canary} unproven")
    put("subject", inbox, sender="Bob <bob@example.org>", subject="Ticket ACME-2291 update",
        body=f"plumtree {canary} subject")
    put("body", inbox, sender="Bob <bob@example.org>", subject="Quick question",
        body=f"plumtree {canary} about acme-2291 today")
    put("attachment", inbox, sender="Bob <bob@example.org>", subject="Scan", body=f"plumtree {canary} scan",
        attachment=("Smith v. Jones brief.pdf", b"%PDF-1.4 invented"))
    put("folder", lawsuit, sender="Bob <bob@example.org>", subject="Filed", body=f"plumtree {canary} filed")
    put("reply", inbox, sender="Bob <bob@example.org>", subject="Re: Your file", in_reply_to="sender@example.org",
        body=f"plumtree {canary} replying")
    put("sent", sent, sender="Pat <pat@example.org>", to="Lee Lawyer <lee@law.example.net>", subject="Hello",
        body=f"plumtree {canary} sent")
    put("account", work / "INBOX", sender="Bob <bob@example.org>", subject="Work", body=f"plumtree {canary} work")
    put("open", inbox, sender="Ada <ada@example.org>", subject="Roses", body="plumtree roses")
    put("outside", inbox, sender="Ada <ada@example.org>", subject="Hi", body="plumtree hello")

    notes = home / "Notes"
    (notes / "Lawsuit").mkdir(parents=True)
    (notes / "Lawsuit" / "plan.md").write_text(f"# Plan\n\nplumtree {canary} in the folder.\n")
    (notes / "Lawsuit" / "linked.md").write_text(f"# Linked\n\nplumtree {canary} hard-linked.\n")
    os.link(notes / "Lawsuit" / "linked.md", notes / "Elsewhere.md")
    (notes / "Welcome.md").write_text("# Welcome\n\nplumtree roses.\n")

    stamp = datetime.now(UTC)
    today = stamp.date()
    tasks, calendars = home / "vdir" / "tasks", home / "vdir" / "calendars"
    due = f"DUE;VALUE=DATE:{today:%Y%m%d}"

    def task(folder: str, uid: str, *lines: str) -> None:
        sample_plan.put(tasks / folder, uid, sample_plan.ics("VTODO", uid, [f"DTSTAMP:{stamp:%Y%m%dT%H%M%SZ}",
                                                                           "STATUS:NEEDS-ACTION", due, *lines]))

    def event(folder: str, uid: str, *lines: str) -> None:
        start = today + timedelta(days=1)
        sample_plan.put(calendars / folder, uid, sample_plan.ics("VEVENT", uid, [
            f"DTSTAMP:{stamp:%Y%m%dT%H%M%SZ}", f"DTSTART;VALUE=DATE:{start:%Y%m%d}", *lines]))

    task("home", "t-refid", f"SUMMARY:{canary} by refid", "REFID:LAWSUIT")
    task("home", "t-category", f"SUMMARY:{canary} by category", "CATEGORIES:project:lawsuit")
    task("legal", "t-list", f"SUMMARY:{canary} by list")
    task("home", "t-open", "SUMMARY:Buy bread")
    event("court", "e-calendar", f"SUMMARY:{canary} hearing")
    event("personal", "e-organizer", f"SUMMARY:{canary} call", "ORGANIZER:mailto:lee@law.example.net")
    event("personal", "e-open", "SUMMARY:Yoga")

    contacts = home / "contacts" / "default"
    contacts.mkdir(parents=True)
    (contacts / "lee.vcf").write_text(
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:lee-1\r\nFN:Lee Counsel\r\nEMAIL:Lee Lawyer <lee@law.example.net>\r\n"
        f"NOTE:plumtree {canary} counsel\r\nEND:VCARD\r\n")
    (contacts / "ria.vcf").write_text(
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:ria-1\r\nFN:Ria Client\r\nEMAIL:ria@client.example.org\r\n"
        f"NOTE:plumtree {canary} client\r\nEND:VCARD\r\n")
    (contacts / "ada.vcf").write_text(
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:ada-1\r\nFN:Ada Example\r\nEMAIL:ada@example.org\r\n"
        "NOTE:plumtree roses\r\nEND:VCARD\r\n")

    project = {**LAWSUIT, "paths": [str(work), str(notes / "Lawsuit"), str(tasks / "legal"),
                                    str(calendars / "court")]}
    config = {"gateway": {"plugins": ["mail"]}, "plugins": {"mail": {
        "accounts": [
            {"name": "personal", "maildir": str(personal), "addresses": ["pat@example.org"],
             "authserv_id": OWN_SERVER},
            {"name": "work", "maildir": str(work), "addresses": ["pat@work.example.org"]},
        ],
        "tasks": str(tasks), "calendars": str(calendars), "notes": str(notes),
        "contacts": str(home / "contacts"), "timezone": "Europe/Paris"}}}
    return {"ids": ids, "config": config, "projects": [project, GARDEN]}
