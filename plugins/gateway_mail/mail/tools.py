"""What hosts see of the mail plugin: its tools and two resource readers, declared without the work.

Registration imports only this module, so `gateway serve` lists the tools without loading the mail parser,
the index or SQLite; each body imports what does the work when it first runs.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from gateway import Answer, Context, tool
from gateway_mail.mail.limits import MAX_QUERY_CHARACTERS, MAX_QUERY_TERMS  # noqa: F401 (published in the schema)

DEFAULT_LIMIT = 20
MAX_LIMIT = 200
MAX_BODY = 100_000
MAX_RECIPIENTS = 20


@tool(read_only=True, title="The Porch")
def porch(
    ctx: Context,
    open: Annotated[bool, Field(description="give the lists even outside the admin windows")] = False,  # noqa: A002
) -> Answer:
    """What came and what waits, per account: new mail, mail from real people waiting for an answer, codes that
    arrived (never the code), and counts of what was left out, blocked and set aside; then now: the reminders of
    the next 24 hours. Outside the person's admin
    windows it gives counts only and says when the next opens, unless open is true."""
    from gateway_mail.mail.answers import porch_answer
    from gateway_mail.plan.answers import porch_now

    return porch_now(ctx, porch_answer(ctx, bool(open)))


@tool(read_only=True, title="Search mail", private_arguments=())
def search_mail(
    ctx: Context,
    query: Annotated[str, Field(max_length=MAX_QUERY_CHARACTERS,
                                description='words to find, as notmuch takes them: "a phrase", prefix*, from:, to:, '
                                            "cc:, subject:, attachment:, list:, date:2026-01..2026-03, is:unread, "
                                            "is:flagged, is:answered, AND/OR/NOT, parentheses (FTS5 syntax works too)")],
    account: Annotated[str | None, Field(description="only this account (its name in the config)")] = None,
    folder: Annotated[str | None, Field(description='only this folder and those under it, written with "/"')] = None,
    days: Annotated[int | None, Field(ge=1, le=36500, description="only mail of the last so many days")] = None,
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="at most so many hits")] = DEFAULT_LIMIT,
) -> Answer:
    """Find mail by its words, in subjects, senders, recipients, texts, attachments' names and text (masked: a code
    or a card is found by no digit), with notmuch's prefixes and dates.
    Newest first. Each hit gives its address (mid:...), date, sender and subject; read it with read_message.
    Mail of closed projects and of blocked senders is left out and counted over the whole scope."""
    from gateway_mail.mail.answers import search_answer

    return search_answer(ctx, query, account, folder, days, limit)


@tool(read_only=True, title="Read a message")
def read_message(
    ctx: Context,
    address: Annotated[str, Field(max_length=4096,
                                  description="mid:<Message-ID> as search_mail gives it, or the message's file path")],
) -> Answer:
    """One message: its envelope one field per line (forged or encrypted said so), attachments numbered, by name,
    type and size (read one with read_attachment), then its text between frame lines, masked. Never changes its
    flags."""
    from gateway_mail.mail.answers import message_answer

    return message_answer(ctx, address)


@tool(read_only=True, title="Read an attachment")
def read_attachment(
    ctx: Context,
    address: Annotated[str, Field(max_length=4096,
                                  description="the message: mid:<Message-ID> as search_mail gives it, or its file")],
    part: Annotated[int, Field(ge=1, le=1000, description="the attachment's number, as read_message lists it")],
) -> Answer:
    """The text of one attachment of a message, masked, between frame lines: PDF, Word (.docx), Excel (.xlsx),
    OpenDocument, an invitation (.ics: the event, its organizer, its times in the person's zone), a text or an
    attached message. Read within bounds (size, pages, time): what was cut or not read is said. Other types: their
    name, type and size only. Nothing is saved or opened by another program."""
    from gateway_mail.mail.answers import attachment_answer

    return attachment_answer(ctx, address, part)


@tool(read_only=True, title="Read a conversation")
def read_thread(
    ctx: Context,
    address: Annotated[str, Field(max_length=4096,
                                  description="mid:<Message-ID> of any message of the conversation, or its file")],
    whole: Annotated[bool, Field(description="also give every message whole, framed as read_message gives it")]
    = False,
    limit: Annotated[int, Field(ge=1, le=50, description="with whole: at most so many messages given whole")] = 20,
) -> Answer:
    """A conversation (every message joined by Message-ID, In-Reply-To and References): one line per message, oldest
    first (date, sender, subject, size, projects), and with whole: true each message framed as read_message gives
    it. Messages of closed projects are left out and counted; blocked senders' only counted."""
    from gateway_mail.mail.threads import thread_answer

    return thread_answer(ctx, address, bool(whole), limit)


@tool(title="Draft a reply", read_only=False, destructive=False, idempotent=False, open_world=False,
      private_arguments=("body",))
def draft_reply(
    ctx: Context,
    address: Annotated[str, Field(max_length=4096, description="the message answered: mid:<Message-ID> or its file")],
    body: Annotated[str, Field(max_length=MAX_BODY, description="the reply's text")],
    to: Annotated[list[str] | None, Field(max_length=MAX_RECIPIENTS,
                                          description="recipients, one address each (default: the sender)")] = None,
    cc: Annotated[list[str] | None, Field(max_length=MAX_RECIPIENTS, description="copies, one address each")] = None,
    subject: Annotated[str | None, Field(max_length=998, description='one line (default: "Re: " and theirs)')] = None,
    reply_all: Annotated[bool, Field(description="copy everyone the message went to")] = False,
) -> Answer:
    """Save a reply as a draft in the account's drafts folder (a new file, flag D), with In-Reply-To, References, a
    fresh Message-ID and the person's own address. Nothing is sent: the person reads it and sends it from their
    mail program. Changes only that: one new file in the drafts folder."""
    from gateway_mail.mail.drafts import save_reply

    return save_reply(ctx, address, body, to, cc, subject, reply_all)


def read_porch(ctx: Context) -> Answer:
    from gateway_mail.mail.answers import porch_answer
    from gateway_mail.plan.answers import porch_now

    return porch_now(ctx, porch_answer(ctx, False))


def read_mid(ctx: Context, message_id: str) -> Answer:
    from gateway_mail.mail.answers import message_answer

    return message_answer(ctx, f"mid:{message_id}")
