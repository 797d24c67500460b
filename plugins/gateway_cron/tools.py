"""``rousseau_cron_list`` and the ``rousseau://cron/{name}`` resources: the jobs, read-only, behind the gate.

A job belongs to the projects whose ``paths`` take its working directory (``gateway cron add --cwd``) and to those
whose ``senders`` take an address its delivery target names (``--deliver ada@example.org``, ``mail:ada@example.org``):
it is shown only when all of them are open; a job in none is outside projects.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NotRequired

from pydantic import Field
from typing_extensions import TypedDict  # pydantic reads a TypedDict from here before Python 3.12

from gateway import Answer, Context, Person, ResourcePage, ToolError, Traits, left_out_sentence, tool
from gateway_cron.defaults import default_path

if TYPE_CHECKING:  # the store (sqlite3) is imported when the tool first runs, not when the gateway starts
    from gateway_cron import store

URI = "rousseau://cron/{name}"


def address(name: str) -> str:
    return f"rousseau://cron/{name}"


def job_line(name: str, enabled: bool, schedule: str, prompt: str, deliver_to: str) -> str:
    state = "on" if enabled else "off"
    quoted = prompt.replace("\\", "\\\\").replace('"', '\\"')
    return f'{name} [{state}] {schedule} → {deliver_to} prompt="{quoted}" deliver={deliver_to}'


# An address anywhere in a delivery target ("ada@example.org", "mailto:ada@example.org", "Ada <ada@example.org>").
_ADDRESS = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*")
_PHONE = re.compile(r"^\+?[\d().\-/]{6,}$")


# What rousseau_cron_list gives as structured content (checked by the core after each call).
class Job(TypedDict):
    name: str
    enabled: bool
    schedule: str
    timezone: NotRequired[str]
    prompt: str
    deliver_to: str
    cwd: NotRequired[str]
    last_run: NotRequired[Annotated[str, Field(description="absent when the job never ran")]]
    next_run: NotRequired[Annotated[str, Field(description="absent when the job is off")]]


class JobList(TypedDict):
    jobs: list[Job]
    left_out: int


def traits(job: store.Job) -> Traits:
    """A job as the gate sees it: its working directory, and the people its answers go to (the person wrote the
    delivery target, so its addresses are theirs to name: proven), e-mail addresses and phone numbers."""
    people = [Person(found, proven=True) for found in _ADDRESS.findall(job.deliver_to)]
    for word in re.split(r"[\s,;]+", job.deliver_to):
        number = word.rpartition(":")[2]  # sms:+33..., signal:+33..., tel:+33...
        if number and "@" not in number and _PHONE.match(number):
            people.append(Person(number, proven=True))
    return Traits(paths=(job.cwd,) if job.cwd else (), people=people)


def _owners(ctx: Context, job: store.Job) -> frozenset[str]:
    """Where the job works and where its answers go: every project either routes to."""
    return ctx.gate.owners(traits(job))


def _store_path(ctx: Context) -> Path:
    return ctx.path_setting("store", default_path(ctx.folders.data))


def _kept(ctx: Context) -> tuple[list[store.Job], int]:
    from gateway_cron import store

    kept = ctx.gate.keep(store.read_jobs(_store_path(ctx)), lambda job: _owners(ctx, job))
    return kept.items, kept.left_out


def describe(ctx: Context, job: store.Job, now: dt.datetime | None = None) -> dict[str, Any]:
    """A job as hosts see it: others' words masked and on one line, and when it runs next.

    A job never run has no ``last_run``, one that is off no ``next_run``: absent keys rather than nulls, which not
    every host's validator takes in a schema.
    """
    from gateway_cron.schedule import next_run

    described: dict[str, Any] = {
        "name": job.name,
        "enabled": job.enabled,
        "schedule": job.schedule,
        "timezone": job.timezone or "local",
        "prompt": ctx.clip(job.prompt),
        "deliver_to": ctx.clip(job.deliver_to),
        "cwd": job.cwd,
    }
    if job.last_run_at:
        described["last_run"] = job.last_run_at
    if job.enabled:
        described["next_run"] = next_run(job.schedule, job.timezone, now)
    return described


@tool(
    read_only=True,
    title="List scheduled jobs",
    description=(
        "The scheduled agent jobs on this computer: name, on or off, cron schedule, prompt and where the "
        "answer is delivered, and (in the structured data) when each runs next. Read-only: jobs are changed "
        "with `gateway cron` on the command line."
    ),
)
def rousseau_cron_list(ctx: Context) -> Answer[JobList]:
    jobs, left_out = _kept(ctx)
    described = [describe(ctx, job) for job in jobs]
    lines = [
        job_line(j["name"], j["enabled"], j["schedule"], j["prompt"], j["deliver_to"]) for j in described
    ] or ["(no jobs)"]
    if left_out:
        lines.append(left_out_sentence(left_out, "job"))
    return Answer(
        text="\n".join(lines),
        data={"jobs": described, "left_out": left_out},
        given=tuple(address(j["name"]) for j in described),
        left_out=left_out,
    )


def read_job(ctx: Context, name: str) -> Answer:
    from gateway_cron import store

    job = next((j for j in store.read_jobs(_store_path(ctx)) if j.name == name), None)
    if job is None:
        raise ToolError(f"no cron job named {name!r} (rousseau_cron_list lists them)")
    ctx.gate.check_read(_owners(ctx, job), what=f"the cron job {name}", address=address(name))
    described = describe(ctx, job)
    text = "\n".join(
        [
            f"name: {job.name}",
            f"enabled: {'on' if job.enabled else 'off'}",
            f"schedule: {job.schedule} ({described['timezone']})",
            f"deliver: {described['deliver_to']}",
            f"last run: {described.get('last_run') or 'never'}",
            f"next run: {described.get('next_run') or 'none'}",
            "prompt:",
            ctx.frame(ctx.mask(job.prompt)),
        ]
    )
    return Answer(text=text, data=described, given=(address(job.name),))


def list_resources(ctx: Context, cursor: str | None, limit: int) -> ResourcePage:
    """The jobs by name; few enough that the cursor is simply the last name given."""
    jobs, _ = _kept(ctx)
    after = [job for job in jobs if cursor is None or job.name > cursor]
    page = after[: max(1, limit)]
    next_cursor = page[-1].name if len(after) > len(page) else None
    return ResourcePage(
        resources=[
            {
                "uri": address(job.name),
                "name": job.name,
                "title": f"cron job {job.name}",
                "description": f"{job.schedule} ({'on' if job.enabled else 'off'})",
                "mime_type": "text/plain",
            }
            for job in page
        ],
        next_cursor=next_cursor,
    )
