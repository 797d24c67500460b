"""The keys of the `[plugins.mail]` table: the accounts (a list of records), the senders only counted, the Porch's
hours, the AI shield, the plan (tasks and agenda) and the notes and contacts folders.

An account's keys are checked at load like the rest: a wrong or missing one turns the plugin off with its place
(``accounts[1].maildir``), and ``gateway doctor`` says it. The shape the code reads stays the table's own
(``ctx.settings["accounts"]`` is a list of dicts, each key filled in); `maildirs.accounts` turns it into values.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

PATH = {"format": "path"}  # a path setting: kept as written ("" for the default), read with path_setting


class Account(BaseModel):
    """One mail account: its name, its Maildir and the addresses that are the person's."""

    name: str = Field(min_length=1, description="the account's name, as the tools show it")
    maildir: str = Field(min_length=1, description="its Maildir++ folder (relative: from the config folder)",
                         json_schema_extra=PATH)
    addresses: list[str] = Field([], description="the person's addresses in this account")
    authserv_id: str = Field("", description="the authserv-id of the Authentication-Results the person's server "
                             "writes (empty: none trusted)")
    drafts: str = Field("Drafts", min_length=1, description="the folder draft_reply writes to")
    from_name: str = Field("", description='the name a draft\'s From carries, e.g. "Pat Example"')


class MailSettings(BaseModel):
    accounts: list[Account] = Field([], description="the mail accounts: a list of { name, maildir, addresses, "
                                    "authserv_id, drafts, from_name }")
    blocked: list[str] = Field([], description='senders whose mail is only counted: "pat@example.net" or '
                               '"@example.net"')
    admin_windows: list[str] = Field([], description='when the Porch gives its lists, e.g. ["09:00-10:00"]; [] = '
                                     "always")
    # The AI shield (mail/shield.py): mail to these addresses is judged hostile or not before any tool reads it.
    shielded: list[str] = Field([], description="public addresses whose mail the AI shield judges before any tool "
                                'reads it, e.g. ["press@example.org"]')
    shield_command: list[str] = Field([], description="the shield's judge: a program and its arguments, given a "
                                      "message on its standard input, printing hostile or ok (unset: a model of the "
                                      "person's labels, gateway mail hostile MID)")
    shield_timeout: float = Field(30.0, ge=1, le=3600, description="seconds the shield_command may take for one "
                                  "message")
    # The plan (tasks, agenda, projects, now): plan/tools.py.
    tasks: str = Field("", description="the tasks vdir: one folder per list, one .ics per task (default "
                       "~/.local/share/vdirsyncer/tasks)")
    default_list: str = Field("", description="the task list add_task writes to when none is named (todoman's "
                              "default_list; unset: the first list by name)")
    calendars: str = Field("", description="the calendars vdir of VEVENT .ics (default "
                           "~/.local/share/vdirsyncer/calendars)")
    timezone: str = Field("", description='the person\'s zone, e.g. "Europe/Paris" (default: the computer\'s)')
    hours: str = Field("08:30-18:30", description="the person's hours, for now")
    remind: str = Field("", description="a remind file, or a folder of .rem files, read by the remind program "
                        "(default ~/.reminders when it exists)")
    contacts: str = Field("", description="a vdir of .vcf, as khard and vdirsyncer keep it (unset: no contacts)",
                          json_schema_extra=PATH)
    notes: str = Field("", description="the notes folder: Markdown files, subfolders allowed (unset: no notes)",
                       json_schema_extra=PATH)

    @field_validator("accounts")
    @classmethod
    def _names_once(cls, accounts: list[Account]) -> list[Account]:
        names = [account.name for account in accounts]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"the account name {twice[0]!r} is used twice")
        return accounts
