"""The person's own spam filter (SpamBayes' method), trained on their mail, run, watched and judged by an agent.

Settings: `spam_folders` and `ham_folders` (per account, names with `/`), `ham_cutoff`, `spam_cutoff`, `imap`
(the servers spam_fetch reads) and `agent_labels_per_day`. The accounts are the mail plugin's (`[plugins.mail] accounts`), read through the
shared `maildirs` library. Tools: spam_status, spam_eval, spam_train, spam_job, spam_review, spam_label,
spam_fetch; commands: `gateway spam classify`, `client`, `why`, `train`, `labels`. README.md says every choice.
"""

from __future__ import annotations

from gateway import PluginHost, hookimpl


@hookimpl
def register_settings(gateway: PluginHost) -> type:
    from gateway_spam.settings import SpamSettings

    return SpamSettings


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
def register_refresh(gateway: PluginHost) -> list:
    from gateway import Refresh
    from gateway_spam import freshness

    return [Refresh(run=freshness.run, stale=freshness.stale, sources=freshness.sources)]


@hookimpl
def register_demo(gateway: PluginHost) -> list[tuple[str, dict]]:
    # The mail plugin's demo writes the Maildir and its account; the filter says where it stands.
    return [("spam_status", {})]
