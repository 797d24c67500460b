"""draft_reply: a reply written as a new file in the account's drafts folder, never sent.

The file is built with `email.message.EmailMessage` (never by formatting strings), after every field the agent
gave is checked: each recipient one address whose display name holds no other, no line break in any field. It
takes a name nothing has: created with O_EXCL in `tmp/`, then linked into `cur/` with the flag D (a link, unlike
a rename, fails rather than replace a file of that name), and the `tmp/` name removed.
"""

from __future__ import annotations

import email.utils
import os
import re
import secrets
import socket
import time
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from gateway import Answer, Context, ToolError
from gateway_mail.mail import maildir, parse
from gateway_mail.mail.answers import FIELD_LIMIT, address_of, file_of, find
from gateway_mail.mail.store import opened

_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")


def recipient(value: str) -> str:
    """One recipient as a header value, or a ToolError: one address, its display name holding no other."""
    if _CONTROL.search(value):
        raise ToolError(f"a recipient holds a line break or a control character: {value!r:.80}; give one address")
    found = email.utils.getaddresses([value])
    if len(found) != 1 or value.count("@") != 1:
        raise ToolError(f"each recipient must be one address (a list of strings, one each): {value!r:.80}")
    name, address = found[0]
    if not re.fullmatch(r"[^@\s<>(),;:\"\[\]]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]+", address):
        raise ToolError(f"{address!r:.80} is not a mail address")
    if any(c in name for c in "@<>,;:"):
        raise ToolError(f"a recipient's display name may not hold an address or a separator: {value!r:.80}")
    return email.utils.formataddr((name, address)) if name else address


def _one_line(field: str, value: str, limit: int = 998) -> str:
    if _CONTROL.search(value):
        raise ToolError(f"{field} must be on one line (no line break or control character)")
    if len(value) > limit:
        raise ToolError(f"{field} has {len(value)} characters, over the limit of {limit}")
    return value


def _reply_subject(subject: str) -> str:
    subject = " ".join(subject.split())
    return subject if re.match(r"(?i)re\s*:", subject) else f"Re: {subject}"


def _unique_name() -> str:
    host = socket.gethostname().replace("/", "\\057").replace(":", "\\072")
    return f"{int(time.time())}.M{time.time_ns() % 1_000_000}P{os.getpid()}R{secrets.token_hex(8)}.{host}"


def save_draft(folder: Path, data: bytes) -> Path:
    """Write `data` as a new message of `folder`: exclusive in tmp/, then linked into cur/ with the flag D."""
    for _attempt in range(5):
        name = _unique_name()
        temporary = folder / "tmp" / name
        (folder / "tmp").mkdir(mode=0o700, exist_ok=True)
        try:
            handle = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            continue
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            final = folder / "cur" / f"{name}:2,D"
            try:
                os.link(temporary, final)
            except FileExistsError:
                continue
            return final
        finally:
            temporary.unlink(missing_ok=True)
    raise ToolError("no unused name could be made for the draft; try again")


def save_reply(ctx: Context, address: str, body: str, to: list[str] | None, cc: list[str] | None,
               subject: str | None, reply_all: bool) -> Answer:
    """draft_reply's work (the tool is declared in tools.py)."""
    chosen_to = [recipient(v) for v in to or []]
    chosen_cc = [recipient(v) for v in cc or []]
    if subject is not None:
        _one_line("subject", subject)
    with opened(ctx) as mail:
        row = find(mail, address)
        ctx.gate.check_write(mail.owners(row), f"a reply to {address}")
        account = mail.account(row["account"])
        path = file_of(row, mail)
        drafts = next((f for f in maildir.folders(account.maildir) if f.name == account.drafts), None)
    if not account.addresses:
        raise ToolError(f"the account {account.name} has no addresses in the config ([plugins.mail] accounts, "
                        "addresses = [...]); the person must add theirs before a reply can be drafted")
    if drafts is None:
        raise ToolError(f"the account {account.name} has no drafts folder named {account.drafts!r} in its Maildir; "
                        "the person can create it (or set drafts = \"...\" on the account)")
    real_drafts = Path(os.path.realpath(drafts.path))
    if Path(os.path.realpath(account.maildir)) not in real_drafts.parents:
        raise ToolError("the drafts folder leads out of the account's Maildir (a link); no draft was written")
    original = parse.parse_file(Path(path), account.authserv_id)
    own = next((a for a in (*original.to, *original.cc) if account.owns_address(a)), account.addresses[0])
    if not chosen_to:
        chosen_to = [recipient(original.reply_to or original.sender)]
    if reply_all and not cc:
        taken = {email.utils.parseaddr(v)[1].lower() for v in chosen_to}
        chosen_cc = [a for a in dict.fromkeys((*original.to, *original.cc))
                     if not account.owns_address(a) and a not in taken]
    message = EmailMessage()
    sender = email.utils.formataddr((account.from_name, own)) if account.from_name else own
    message["From"] = sender
    message["To"] = ", ".join(chosen_to)
    if chosen_cc:
        message["Cc"] = ", ".join(chosen_cc)
    message["Subject"] = subject if subject is not None else _reply_subject(original.subject)
    message["Date"] = email.utils.formatdate(localtime=True)
    message["Message-ID"] = email.utils.make_msgid(domain=own.rpartition("@")[2])
    if original.message_id:
        message["In-Reply-To"] = f"<{original.message_id}>"
        message["References"] = " ".join(f"<{r}>" for r in (*original.references, original.message_id))
    message.set_content(body)
    final = save_draft(real_drafts, bytes(message))
    draft_id = maildir.unique_of(final.name)
    shown_subject = ctx.clip(str(message["Subject"]), FIELD_LIMIT)
    answered = address_of(row)
    lines = [f"Draft saved, not sent: sioul:draft/{draft_id}", f"Account: {account.name}",
             f"Folder: {drafts.name}", f"File: {final}", f"From: {sender}", f"To: {', '.join(chosen_to)}"]
    if chosen_cc:
        lines.append(f"Cc: {', '.join(chosen_cc)}")
    lines += [f"Subject: {shown_subject}", f"In reply to: {answered}", f"Body: {len(body)} characters.",
              "Changed: one new file in the drafts folder (flag D). The person reads it and sends it themselves."]
    data: dict[str, Any] = {"draft": f"sioul:draft/{draft_id}", "account": account.name, "folder": drafts.name,
                            "file": str(final), "from": own, "to": chosen_to, "cc": chosen_cc,
                            "subject": shown_subject, "in_reply_to": answered, "body_characters": len(body)}
    return Answer("\n".join(lines), data, given=[f"sioul:draft/{draft_id}", answered])
