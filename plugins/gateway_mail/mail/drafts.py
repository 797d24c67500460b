"""draft_reply: a reply written as a new file in the account's drafts folder, never sent.

Every header value comes from someone: the agent (subject, recipients) or the message answered (its subject, its
ids, its senders). Each is decoded first, as often as it decodes (RFC 2047 encoded words, nested or encoded twice,
with the standard `email` package's two decoders: the header registry the generator uses, and `email.header`),
and every form it takes is looked at: a line break or a control character in any of them (CR, LF, NEL, the line
and paragraph separators, any other Unicode Cc or Cf character) is refused with a sentence when the agent gave it,
and made a space (or dropped) when the message did. What is set is the value's last form, which decodes to itself.
The file is then made by the standard generator and read back: its header names, their count and their values
must be what the gateway set, or no draft is written. None of this leans on the generator's own check
(CVE-2024-6923, fixed in CPython 3.11.10 / 3.12.5 / 3.13), which is used too where the Python has it.

It takes a name nothing has: created with O_EXCL in `tmp/`, then linked into `cur/` with the flag D (a link, unlike
a rename, fails rather than replace a file of that name), and the `tmp/` name removed.
"""

from __future__ import annotations

import email.header
import email.headerregistry
import email.parser
import email.policy
import email.utils
import os
import re
import secrets
import socket
import time
import unicodedata
from email.headerregistry import Address
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from gateway import Answer, Context, ToolError
from gateway_mail.mail import maildir, parse
from gateway_mail.mail.answers import FIELD_LIMIT, address_of, file_of, find
from gateway_mail.mail.store import opened

_DECODING_ROUNDS = 4  # a value still decoding to something else after this many rounds is refused (or defused)
_REGISTRY = email.headerregistry.HeaderRegistry()
_POLICY = email.policy.default
if hasattr(email.policy.default, "verify_generated_headers"):
    _POLICY = _POLICY.clone(verify_generated_headers=True)  # the CVE's own fix, as a second lock where it exists


class Unsafe(ValueError):
    """A header value that holds a line break or a control character in one of its forms, or never stops decoding."""


def _controls(value: str) -> str:
    """The line breaks and control characters of `value`, named (\\r, U+2028...): "" when it has none."""
    found = {c for c in value if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")}
    return ", ".join(sorted(repr(c).strip("'") if c.isascii() else f"U+{ord(c):04X}" for c in found))


def _decoded_once(value: str) -> list[str]:
    """What `value` decodes to, by each of the standard library's two decoders (the same text when nothing decodes)."""
    forms = []
    for decode in (lambda: str(_REGISTRY("subject", value)),
                   lambda: str(email.header.make_header(email.header.decode_header(value)))):
        try:
            forms.append(decode())
        except Exception as error:  # noqa: BLE001 - a value the standard decoders fail on is not set
            raise Unsafe(f"it cannot be decoded ({type(error).__name__})") from None
    return forms


def settled(value: str) -> str:
    """`value` decoded until it decodes to itself; Unsafe when a form holds a control or it never settles."""
    current = value
    for _round in range(_DECODING_ROUNDS + 1):
        bad = _controls(current)
        if bad:
            raise Unsafe(bad)
        forms = _decoded_once(current)
        for form in forms:
            bad = _controls(form)
            if bad:
                raise Unsafe(bad)
        if all(" ".join(form.split()) == " ".join(current.split()) for form in forms):
            return current
        current = forms[0]
    raise Unsafe(f"encoded words nested more than {_DECODING_ROUNDS} deep")


def cleaned(value: str) -> str:
    """A value from the message answered, made safe to set: each form's controls made spaces (format characters
    dropped), until it decodes to itself; encoded words still nested past the bound are written apart (`= ?`)."""
    current = value
    for _round in range(_DECODING_ROUNDS + 1):
        current = _without_controls(current)
        try:
            forms = [_without_controls(f) for f in _decoded_once(current)]
        except Unsafe:
            break
        if all(" ".join(form.split()) == " ".join(current.split()) for form in forms):
            return " ".join(current.split())
        current = forms[0]
    return " ".join(_without_controls(current).replace("=?", "= ?").split())


def _without_controls(value: str) -> str:
    return "".join("" if unicodedata.category(c) == "Cf" else " " if unicodedata.category(c) in ("Cc", "Zl", "Zp")
                   else c for c in value)


def _refusal(field: str, value: str, why: str) -> ToolError:
    return ToolError(f"{field} holds a line break or a control character, or cannot be decoded ({why}): "
                     f"{value!r:.80}; give it on one line, in plain text")


def recipient(value: str, field: str = "a recipient") -> Address:
    """One recipient as an address, or a ToolError: one address, its display name (decoded) holding no other."""
    try:
        settled(value)
    except Unsafe as unsafe:
        raise _refusal(field, value, str(unsafe)) from None
    found = email.utils.getaddresses([value])
    if len(found) != 1 or value.count("@") != 1:
        raise ToolError(f"each recipient must be one address (a list of strings, one each): {value!r:.80}")
    name, address = found[0]
    if not re.fullmatch(r"[^@\s<>(),;:\"\[\]]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]+", address) or "=?" in address:
        raise ToolError(f"{address!r:.80} is not a mail address")
    try:
        name = settled(name)
    except Unsafe as unsafe:
        raise _refusal(field, value, str(unsafe)) from None
    if any(c in name for c in "@<>,;:"):
        raise ToolError(f"a recipient's display name may not hold an address or a separator: {value!r:.80}")
    local, _at, domain = address.rpartition("@")
    return Address(display_name=" ".join(name.split()), username=local, domain=domain)


def _one_line(field: str, value: str, limit: int = 998) -> str:
    try:
        value = settled(value)
    except Unsafe as unsafe:
        raise _refusal(field, value, str(unsafe)) from None
    if len(value) > limit:
        raise ToolError(f"{field} has {len(value)} characters, over the limit of {limit}")
    return value


def _reply_subject(subject: str) -> str:
    subject = cleaned(subject)[:900]
    return subject if re.match(r"(?i)re\s*:", subject) else f"Re: {subject}"


_MESSAGE_ID = re.compile(r"[\x21-\x7e]+")


def _message_ids(ids: tuple[str, ...]) -> list[str]:
    """The original's ids that are plain ids (printable ASCII, no angle bracket, nothing that decodes): the others
    are left out of In-Reply-To and References rather than written."""
    return [i for i in ids if _MESSAGE_ID.fullmatch(i) and "<" not in i and ">" not in i and "=?" not in i]


def _shown(value: Any) -> str:
    return " ".join(str(value).split())


def draft_bytes(headers: list[tuple[str, Any]], body: str) -> bytes:
    """The draft file: the headers given, in order, and the body, by the standard generator; read back before it
    is returned, so that a value that would write another header (or hide one) is caught whatever the generator
    does. ToolError when what is read back is not what was set."""
    message = EmailMessage(policy=_POLICY)
    for name, value in headers:
        message[name] = value
    message.set_content(body)
    set_names = [name.lower() for name in message]
    expected = {name.lower(): _shown(message[name]) for name in message}
    try:
        data = message.as_bytes(policy=_POLICY)
    except Exception as error:  # noqa: BLE001 - the generator's own check (where it has one) refusing a header
        raise ToolError(f"the draft could not be written safely ({type(error).__name__}); no draft was written. "
                        "Give the subject and the recipients in plain text, on one line") from None
    back = email.parser.BytesHeaderParser(policy=email.policy.default).parsebytes(data)
    back_names = [name.lower() for name in back]
    if back_names != set_names or any(_shown(back[name]) != expected[name] for name in expected):
        raise ToolError("the draft's headers would not be the ones the gateway set (a value would add or change a "
                        "header); no draft was written. Give the subject and the recipients in plain text")
    return data


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
        subject = _one_line("subject", subject)
    with opened(ctx) as mail:
        row = find(mail, address, "draft_reply")
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
    real_root = Path(os.path.realpath(account.maildir))
    if real_root not in real_drafts.parents:
        raise ToolError("the drafts folder leads out of the account's Maildir (a link); no draft was written")
    original = parse.parse_file(Path(path), account.authserv_id)
    own = next((a for a in (*original.to, *original.cc) if account.owns_address(a)), account.addresses[0])
    sender = recipient(own, "the account's address")
    if account.from_name:  # the person's own name for the account (config), checked as any value set
        try:
            sender = Address(display_name=" ".join(settled(account.from_name).split()), addr_spec=sender.addr_spec)
        except Unsafe as unsafe:
            raise _refusal("the account's from_name", account.from_name, str(unsafe)) from None
    if not chosen_to:
        try:
            chosen_to = [recipient(original.reply_to or original.sender)]
        except ToolError:
            raise ToolError("the message's sender (or Reply-To) is not one plain address; give the recipient "
                            "yourself: to = [\"name@example.org\"]") from None
    left_out = 0
    if reply_all and not cc:
        taken = {a.addr_spec.lower() for a in chosen_to}
        for candidate in dict.fromkeys((*original.to, *original.cc)):
            if account.owns_address(candidate) or candidate in taken:
                continue
            try:
                chosen_cc.append(recipient(candidate))
            except ToolError:
                left_out += 1  # not one plain address once decoded: not copied
    ids = _message_ids((*original.references, original.message_id))
    answered_id = _message_ids((original.message_id,))
    headers: list[tuple[str, Any]] = [("From", sender), ("To", chosen_to)]
    if chosen_cc:
        headers.append(("Cc", chosen_cc))
    headers += [("Subject", subject if subject is not None else _reply_subject(original.subject)),
                ("Date", email.utils.formatdate(localtime=True)),
                ("Message-ID", email.utils.make_msgid(domain=sender.domain))]
    if answered_id:
        headers += [("In-Reply-To", f"<{answered_id[0]}>"), ("References", " ".join(f"<{r}>" for r in ids))]
    data = draft_bytes(headers, body)
    final = save_draft(real_drafts, data)
    draft_id = maildir.unique_of(final.name)
    shown_subject = ctx.clip(str(dict(headers)["Subject"]), FIELD_LIMIT)
    answered = address_of(row)
    # Relative to the account's root: an answer never spells out the person's home or user name.
    shown_file = str(final.relative_to(real_root)) if real_root in final.parents else f"{drafts.name}/cur/{final.name}"
    shown_to, shown_cc = [str(a) for a in chosen_to], [str(a) for a in chosen_cc]
    lines = [f"Draft saved, not sent: sioul:draft/{draft_id}", f"Account: {account.name}",
             f"Folder: {drafts.name}", f"File: {shown_file} (in the account's mail folder)", f"From: {sender}", f"To: {', '.join(shown_to)}"]
    if chosen_cc:
        lines.append(f"Cc: {', '.join(shown_cc)}")
    if left_out:
        lines.append(f"Not copied: {left_out} of the message's recipients, not plain addresses once decoded.")
    lines += [f"Subject: {shown_subject}", f"In reply to: {answered}", f"Body: {len(body)} characters.",
              "Changed: one new file in the drafts folder (flag D). The person reads it and sends it themselves."]
    data_out: dict[str, Any] = {"draft": f"sioul:draft/{draft_id}", "account": account.name, "folder": drafts.name,
                                "file": shown_file, "from": str(sender), "to": shown_to, "cc": shown_cc,
                                "subject": shown_subject, "in_reply_to": answered, "body_characters": len(body)}
    return Answer("\n".join(lines), data_out, given=[f"sioul:draft/{draft_id}", answered])
