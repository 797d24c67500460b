"""Invented mail (reserved domains, RFC 2606) written into Maildirs: for the tests, the demo and the benchmark."""

from __future__ import annotations

import email.utils
import itertools
from email.message import EmailMessage
from pathlib import Path

_counter = itertools.count(1)


def make_folder(path: Path) -> Path:
    for sub in ("cur", "new", "tmp"):
        (path / sub).mkdir(parents=True, exist_ok=True)
    return path


def message(
    *, sender: str = "Ada Example <ada@example.org>", to: str = "Pat Example <pat@example.org>",
    subject: str = "Hello", body: str = "Hello there.", message_id: str | None = None, date: float | None = None,
    in_reply_to: str | None = None, references: list[str] | None = None, html: str | None = None,
    headers: dict[str, str] | None = None, attachment: tuple[str, bytes] | None = None, cc: str | None = None,
) -> EmailMessage:
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = to
    if cc:
        mail["Cc"] = cc
    mail["Subject"] = subject
    mail["Date"] = email.utils.formatdate(date, localtime=False)
    mail["Message-ID"] = f"<{message_id or f'm{next(_counter)}@example.org'}>"
    if in_reply_to:
        mail["In-Reply-To"] = f"<{in_reply_to}>"
    if references:
        mail["References"] = " ".join(f"<{r}>" for r in references)
    for name, value in (headers or {}).items():
        mail[name] = value
    mail.set_content(body)
    if html is not None:
        mail.add_alternative(html, subtype="html")
        if not body:
            mail.get_body(("plain",)).set_content("")
    if attachment:
        mail.add_attachment(attachment[1], maintype="application", subtype="pdf", filename=attachment[0])
    return mail


def deliver(folder: Path, mail: EmailMessage | bytes, *, flags: str | None = "S", name: str | None = None) -> Path:
    """Put a message in `folder`: into cur/ with `flags`, or into new/ when flags is None."""
    make_folder(folder)
    data = mail if isinstance(mail, bytes) else bytes(mail)
    unique = name or f"1700000000.M{next(_counter)}P1.example"
    path = folder / "new" / unique if flags is None else folder / "cur" / f"{unique}:2,{flags}"
    path.write_bytes(data)
    return path
