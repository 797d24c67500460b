"""The spam plugin's refresh, for `gateway watch`: the corpus's facts (`kept.py`) read as mail arrives.

`run` reads the spam and ham folders' new messages (and what spam_fetch brought) into the facts store, so that
the next training tokenizes only what arrived since the last one and spam_review finds the tokens of what it
reviews. It does nothing while no message directory changed its time since its last run in this process (a stat
per folder). It is `gateway watch`'s alone: `stale` says no to every tool call, for no spam tool needs the store
to answer rightly (training reads what the store lacks, spam_review tokenizes what it does not find), and a call
should not wait for a first reading of a large corpus or share its CPU with one.

A model counted with another version of the tokenizer than today's (or one that does not record it) is stale:
delivery still judges mail with it. `run` then starts a training job (as spam_train does: a process apart, at the
lowest priority, followed with spam_job) once per state of the model file in this process, when no training job
runs and the corpus holds mail (a training of an empty corpus would throw the old counts away for nothing); and
`sources` names the model for `gateway doctor`, with a warning while it is stale.
"""

from __future__ import annotations

from pathlib import Path

from gateway import Context, Refreshed, Source, ToolError

# The message directories' times as the last run in this process left the store, per store folder.
_seen: dict[str, tuple] = {}
# The model files (path -> inode, size, time) for which this process started a training, or found none needed.
_looked: dict[str, tuple[int, int, int]] = {}


def stale(ctx: Context) -> bool:
    """No tool call waits for the facts store (above): only `gateway watch` runs `run`."""
    return False


def run(ctx: Context) -> Refreshed:
    from gateway_spam import tools, training

    settings = tools.job_settings(ctx)
    known = tools.accounts(ctx)
    signature = tools.folders_signature(known, Path(settings["data"]))
    key = str(ctx.folders.cache)
    read = 0
    if _seen.get(key) != signature:
        read = training.keep(settings)
        _seen[key] = signature
    _retrain_if_stale(ctx, settings)
    return Refreshed(added=read)


def _retrain_if_stale(ctx: Context, settings: dict) -> None:
    """Start a training job when the model is stale (a stat when the file is as last looked at)."""
    from gateway_spam import jobs, training
    from gateway_spam.kept import Kept
    from gateway_spam.model import is_stale

    path = training.model_path(Path(settings["data"]))
    try:
        status = path.stat()
    except OSError:
        return
    state = (status.st_ino, status.st_size, status.st_mtime_ns)
    if _looked.get(str(path)) == state:
        return
    _looked[str(path)] = state
    version = training.recorded_version(path)
    if version is False or not is_stale(version):  # today's, or not readable at all (doctor says so)
        return
    if any(job.get("kind") == "train" and job.get("state") == "running" for job in jobs.all_jobs(ctx.folders.state)):
        return  # it writes a model of today's version
    kept = Kept(settings.get("cache"))
    try:
        empty = not kept.signatures()
    finally:
        kept.close()
    if empty:
        return
    try:
        job = jobs.start(ctx.folders.state, "train", {"dry_run": False, "why": "stale model"}, settings)
    except ToolError:  # one started meanwhile
        return
    import structlog  # here: registering the refresh imports this module, and no more than it needs

    structlog.get_logger("gateway_spam").info("the spam model is stale: a training job started", job=job.get("id"),
                                              state=job.get("state"))


def sources(ctx: Context) -> list[Source]:
    from gateway_spam import corpus, tools

    found = [Source(f"spam and ham folders of mail account {account.name}", account.maildir,
                    account.maildir.is_dir()) for account in tools.accounts(ctx)]
    fetched = corpus.corpus_folder(ctx.folders.data)
    found.append(Source("messages spam_fetch brought", fetched, fetched.is_dir()))
    found.append(model_source(Path(ctx.folders.data)))
    return found


def model_source(data: Path) -> Source:
    """The model, for doctor: a warning while it is stale (said where the person looks; delivery says nothing)."""
    from spamfilter import store
    from spamfilter import tokens as tokenizer

    from gateway_spam import training
    from gateway_spam.model import is_stale

    path = data / store.NAME
    version = training.recorded_version(path)
    if version is False:
        return Source("spam filter's model (spam_train makes it)", path, path.exists(),
                      unreadable="it cannot be read: train it again (gateway spam train)" if path.exists() else "")
    said = ""
    if is_stale(version):
        counted = (f"with version {version} of the tokenizer" if version is not None
                   else "before the tokenizer's version was recorded")
        said = (f"stale: counted {counted}, while mail is read by version {tokenizer.VERSION}. Delivery still "
                "judges mail with it, a little less well; `gateway spam train` counts it anew (`gateway watch` "
                "starts a training job when it sees it)")
    return Source("spam filter's model", path, True, unreadable=said)
