"""The spam plugin's refresh, for `gateway watch`: the corpus's facts (`kept.py`) read as mail arrives.

`run` reads the spam and ham folders' new messages (and what spam_fetch brought) into the facts store, so that
the next training tokenizes only what arrived since the last one and spam_review finds the tokens of what it
reviews. It does nothing while no message directory changed its time since its last run in this process (a stat
per folder). It is `gateway watch`'s alone: `stale` says no to every tool call, for no spam tool needs the store
to answer rightly (training reads what the store lacks, spam_review tokenizes what it does not find), and a call
should not wait for a first reading of a large corpus or share its CPU with one.
"""

from __future__ import annotations

from pathlib import Path

from gateway import Context, Refreshed, Source

# The message directories' times as the last run in this process left the store, per store folder.
_seen: dict[str, tuple] = {}


def stale(ctx: Context) -> bool:
    """No tool call waits for the facts store (above): only `gateway watch` runs `run`."""
    return False


def run(ctx: Context) -> Refreshed:
    from gateway_spam import tools, training

    settings = tools.job_settings(ctx)
    known = tools.accounts(ctx)
    signature = tools.folders_signature(known, Path(settings["data"]))
    key = str(ctx.folders.cache)
    if _seen.get(key) == signature:
        return Refreshed()
    read = training.keep(settings)
    _seen[key] = signature
    return Refreshed(added=read)


def sources(ctx: Context) -> list[Source]:
    from gateway_spam import corpus, tools

    found = [Source(f"spam and ham folders of mail account {account.name}", account.maildir,
                    account.maildir.is_dir()) for account in tools.accounts(ctx)]
    fetched = corpus.corpus_folder(ctx.folders.data)
    found.append(Source("messages spam_fetch brought", fetched, fetched.is_dir()))
    return found
