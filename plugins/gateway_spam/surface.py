"""What hosts see of the spam plugin: seven tools, declared without the work (imported when a tool first runs)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from gateway import Answer, Context, tool

MAX_REVIEW = 200


@tool(read_only=True, title="Spam filter status")
def spam_status(ctx: Context) -> Answer:
    """How the person's spam filter stands: the model's age, the messages it was trained on, its thresholds, the
    last evaluation's figures, and the jobs running."""
    from gateway_spam.tools import status_answer

    return status_answer(ctx)


@tool(read_only=True, title="Spam filter evaluation")
def spam_eval(ctx: Context) -> Answer:
    """The last evaluation's figures (online in time order, and k-fold: false positives, false negatives, unsure,
    (1-ROCA)%) and its worst errors, by their envelopes only (sender and masked subject)."""
    from gateway_spam.tools import eval_answer

    return eval_answer(ctx)


@tool(title="Train the spam filter", read_only=False, destructive=False, idempotent=False, open_world=False)
def spam_train(
    ctx: Context,
    dry_run: Annotated[bool, Field(description="evaluate only: write no model and no evaluation")] = False,
) -> Answer:
    """Start a training job (apart, at the lowest priority): it evaluates the filter on the corpus, then trains
    and saves the model. Answers at once with the job's id: follow it with spam_job. One at a time."""
    from gateway_spam.tools import start_train

    return start_train(ctx, bool(dry_run))


@tool(read_only=True, title="A spam filter job")
def spam_job(
    ctx: Context,
    id: Annotated[str | None, Field(max_length=40, description="the job's id (default: the latest job)")] = None,  # noqa: A002
) -> Answer:
    """A training or fetching job: its progress while it runs, its result when done, or what failed."""
    from gateway_spam.tools import job_answer

    return job_answer(ctx, id)


@tool(read_only=True, title="Review the spam filter")
def spam_review(
    ctx: Context,
    limit: Annotated[int, Field(ge=1, le=MAX_REVIEW, description="at most so many of each list")] = 20,
) -> Answer:
    """What the filter is unsure about and the recent spam, newest first, by their envelopes only. Label a
    message with spam_label."""
    from gateway_spam.tools import review_answer

    return review_answer(ctx, limit)


@tool(title="Label a message spam or ham", read_only=False, destructive=False, idempotent=True, open_world=False)
def spam_label(
    ctx: Context,
    address: Annotated[str, Field(max_length=4096, description="mid:<Message-ID> or the file's path, as the mail "
                                  "tools give them, or spam:corpus/<id> for a message only the corpus holds")],
    label: Literal["spam", "ham"],
) -> Answer:
    """Label one message spam or ham for the filter: one line in the labels, which the next label of the same
    message replaces; the model learns it. Never moves, flags or deletes the message."""
    from gateway_spam.tools import label_answer

    return label_answer(ctx, address, label)


@tool(title="Fetch spam and ham from the mail server", read_only=False, destructive=False, idempotent=True,
      open_world=True)
def spam_fetch(
    ctx: Context,
    account: Annotated[str | None, Field(max_length=200, description="the account (default: the first "
                                         "configured server)")] = None,
    days: Annotated[int, Field(ge=1, le=3650, description="mail of the last so many days")] = 30,
) -> Answer:
    """Start a job that reads the account's IMAP server read-only (EXAMINE; no flag or message changes) and adds
    the recent mail of its spam and ham folders to the filter's corpus. Follow it with spam_job."""
    from gateway_spam.tools import start_fetch

    return start_fetch(ctx, account, days)
