"""The person's own spam filter (SpamBayes' method), trained on their mail, run, watched and judged by an agent.

Settings: `spam_folders` and `ham_folders` (per account, names with `/`), `ham_cutoff`, `spam_cutoff`, `imap`
(the servers spam_fetch reads) and `agent_labels_per_day`. The accounts are the mail plugin's (`[plugins.mail] accounts`), read through the
shared `maildirs` library. Tools: spam_status, spam_eval, spam_train, spam_job, spam_review, spam_label,
spam_fetch; commands: `gateway spam classify`, `why`, `train`, `labels`. README.md says every choice.
"""

from __future__ import annotations

from spamfilter.score import HAM_CUTOFF, SPAM_CUTOFF

from gateway import PluginHost, Setting, hookimpl


@hookimpl
def register_settings(gateway: PluginHost) -> list[Setting]:
    return [
        Setting("spam_folders", ["Junk", "Spam"], "each account's spam folders, names written with /"),
        Setting("ham_folders", ["INBOX", "Archive"], "each account's ham folders, names written with /"),
        Setting("ham_cutoff", HAM_CUTOFF, "below this score a message is ham", type=float, minimum=0, maximum=1),
        Setting("spam_cutoff", SPAM_CUTOFF, "above this score a message is spam", type=float, minimum=0, maximum=1),
        Setting("imap", [], "servers spam_fetch reads: [{ account, host, port, user, password_command }]; TLS "
                "always (993, or STARTTLS), but tls = false on a loopback host", type=list),
        Setting("agent_labels_per_day", 20, "the most spam_label calls agents may make in 24 hours (all clients "
                "together; the person's own command line is not counted)", type=int, minimum=0, maximum=10_000),
    ]


@hookimpl
def register_tools(gateway: PluginHost) -> list:
    from gateway_spam.surface import (
        spam_eval,
        spam_fetch,
        spam_job,
        spam_label,
        spam_review,
        spam_status,
        spam_train,
    )

    return [spam_status, spam_eval, spam_train, spam_job, spam_review, spam_label, spam_fetch]


@hookimpl
def register_commands(gateway: PluginHost) -> list:
    from gateway_spam.cli import commands

    return commands(gateway)


@hookimpl
def traits_of(gateway: PluginHost, address: str):  # noqa: ANN201 (a Traits or None; the import stays lazy)
    from gateway_spam.described import traits_of as described

    return described(gateway, address)


@hookimpl
def census(gateway: PluginHost):  # noqa: ANN201 (an iterator of (source, Traits))
    from gateway_spam.described import census as described

    return described(gateway)


@hookimpl
def register_demo(gateway: PluginHost) -> list[tuple[str, dict]]:
    # The mail plugin's demo writes the Maildir and its account; the filter says where it stands.
    return [("spam_status", {})]
