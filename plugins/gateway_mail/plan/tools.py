"""What hosts see of the plan: tasks, agenda, projects and now, declared without the work (as mail/tools.py does).

Each body imports answers.py (icalendar, the vdir cache, the mail index) only when it first runs.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from gateway import Answer, Context, tool

TITLE_LIMIT = 500
MAX_TAGS = 20
DESCRIPTION_LIMIT = 10_000
REPEAT_HELP = ("an iCalendar RRULE: FREQ=DAILY, WEEKLY, MONTHLY or YEARLY (at most once a day; the time is the "
               "start's), with INTERVAL, BYDAY, BYMONTHDAY, BYMONTH, BYSETPOS, COUNT (at most 1000) or UNTIL; "
               "e.g. FREQ=WEEKLY;BYDAY=MO,TH")

_WRITES = {"read_only": False, "destructive": False, "idempotent": False, "open_world": False}


@tool(read_only=True, title="List tasks")
def list_tasks(
    ctx: Context,
    view: Annotated[Literal["now", "today", "all"],
                    Field(description="now: the next steps; today: due or starting today, or overdue; all: every "
                                      "open task")] = "now",
    project: Annotated[str | None, Field(max_length=300, description="only this project's (its id or "
                                                                     "sioul:project/<id>)")] = None,
    list: Annotated[str | None, Field(max_length=300, description="only this task list (its folder's name)")] = None,  # noqa: A002
    limit: Annotated[int, Field(ge=1, le=500, description="at most so many tasks")] = 50,
) -> Answer:
    """The person's open tasks, the next step first, each with why it comes now (overdue, due soon, priority,
    a step of a bigger task). Times in the person's zone. Tasks of closed projects are left out and counted; when
    the very next step is kept, the answer says so and gives nothing of it."""
    from gateway_mail.plan.answers import tasks_answer

    return tasks_answer(ctx, view, project, list, limit)


@tool(read_only=True, title="Agenda")
def agenda(
    ctx: Context,
    start: Annotated[str, Field(max_length=64, description='the first day: "today", "tomorrow" or 2026-12-03')]
    = "today",
    days: Annotated[int, Field(ge=1, le=366, description="how many days from start")] = 7,
) -> Answer:
    """The person's events day by day, in their zone (repeating events expanded). Events of closed projects are
    left out and counted."""
    from gateway_mail.plan.answers import agenda_answer

    return agenda_answer(ctx, start, days)


@tool(read_only=True, title="List projects")
def list_projects(ctx: Context) -> Answer:
    """The projects open to agents, with their addresses (sioul:project/<id>) and how many open tasks and coming
    events each has. Closed projects are left out and counted."""
    from gateway_mail.plan.answers import projects_answer

    return projects_answer(ctx)


@tool(read_only=True, title="Read a project")
def read_project(
    ctx: Context,
    address: Annotated[str, Field(max_length=300, description="sioul:project/<id> (sioul:case/<id> also opens it)")],
) -> Answer:
    """A project's page: its name and client, its open tasks (next first), its next events, how much mail came
    for it lately, what is tied to it, and its line of time (dated things, newest first). A closed project is
    refused."""
    from gateway_mail.plan.answers import project_answer

    return project_answer(ctx, address)


@tool(read_only=True, title="Now")
def now(ctx: Context) -> Answer:
    """The person's local time and zone, whether it is within their hours (and when those next begin or end), and
    what comes next: the next event, the next step and the reminders of the next 24 hours. Belongs to no project:
    always answered (what it lists of closed projects' things is left out and counted)."""
    from gateway_mail.plan.answers import now_answer

    return now_answer(ctx)


@tool(read_only=True, title="Reminders")
def reminders(
    ctx: Context,
    days: Annotated[int, Field(ge=1, le=90, description="how many days ahead, from now")] = 7,
    limit: Annotated[int, Field(ge=1, le=500, description="at most so many reminders")] = 100,
) -> Answer:
    """The reminders that will ring in the coming days, soonest first, in the person's zone: the alarms of their
    tasks and events (each with what it is for and its address) and their remind files' reminders. Reminders of
    closed projects' things are left out and counted."""
    from gateway_mail.plan.answers import reminders_answer

    return reminders_answer(ctx, days, limit)


@tool(title="Add a task", private_arguments=("description",), **_WRITES)
def add_task(
    ctx: Context,
    title: Annotated[str, Field(max_length=TITLE_LIMIT, description="one line")],
    project: Annotated[str | None, Field(max_length=300, description="the project's id or sioul:project/<id> "
                                                                     "(it must be open)")] = None,
    list: Annotated[str | None, Field(max_length=300, description="the task list (its folder's name); "  # noqa: A002
                                                                  "default: the person's default list, "
                                                                  "else the first one")] = None,
    due: Annotated[str | None, Field(max_length=64, description='a date (2026-12-03), a local time '
                                     '("2026-12-03 09:00") or an ISO time with its offset, or "today"')] = None,
    priority: Annotated[int | None, Field(ge=1, le=9, description="1 (highest) to 9, as todoman reads them: "
                                          "1-4 high, 5 medium, 6-9 low")] = None,
    tags: Annotated[list[str] | None, Field(max_length=MAX_TAGS, description="categories, one line each")] = None,
    from_message: Annotated[str | None, Field(max_length=1000, description="mid:<Message-ID> of the mail the task "
                                              "comes from (said in the task's description)")] = None,
    parent: Annotated[str | None, Field(max_length=1000, description="sioul:task/<UID> of the bigger task this is "
                                        "a step of")] = None,
    description: Annotated[str | None, Field(max_length=DESCRIPTION_LIMIT, description="the task's notes (line "
                                             "breaks allowed, no other control character)")] = None,
    start: Annotated[str | None, Field(max_length=64, description="when it can begin: the same forms as due")] = None,
    repeat: Annotated[str | None, Field(max_length=500, description=REPEAT_HELP + "; needs start or due")] = None,
) -> Answer:
    """Add a task: one new .ics file in the task list, which the person's next sync sends like any task they made.
    Changes only that. Refused into a closed project (or outside projects while those are closed)."""
    from gateway_mail.plan.answers import add_task_answer

    return add_task_answer(ctx, title, project, list, due, priority, tags, from_message, parent, description, start,
                           repeat)


@tool(title="Mark a task done", **_WRITES)
def complete_task(
    ctx: Context,
    address: Annotated[str, Field(max_length=1000, description="sioul:task/<UID>")],
) -> Answer:
    """Mark a task done: in its file only STATUS, COMPLETED, PERCENT-COMPLETE, LAST-MODIFIED and SEQUENCE change,
    every other line stays as it was. A repeating task also loses its RRULE and its next occurrence becomes a new
    task (as todoman does). A task done is reopened only by the person."""
    from gateway_mail.plan.answers import complete_task_answer

    return complete_task_answer(ctx, address)


@tool(title="Add an event", private_arguments=("description",), **_WRITES)
def add_event(
    ctx: Context,
    title: Annotated[str, Field(max_length=TITLE_LIMIT, description="one line")],
    start: Annotated[str, Field(max_length=64, description='a local time ("2026-12-03 09:00"), an ISO time with '
                                "its offset (moved into the person's zone), or a date for a whole day")],
    end: Annotated[str | None, Field(max_length=64, description="the same forms; default one hour later (a "
                                     "day for a whole-day event)")] = None,
    location: Annotated[str | None, Field(max_length=TITLE_LIMIT, description="one line")] = None,
    calendar: Annotated[str | None, Field(max_length=300, description="the calendar (its folder's name); "
                                          "default: the only or first one")] = None,
    description: Annotated[str | None, Field(max_length=DESCRIPTION_LIMIT, description="the event's notes (line "
                                             "breaks allowed, no other control character)")] = None,
    repeat: Annotated[str | None, Field(max_length=500, description=REPEAT_HELP)] = None,
) -> Answer:
    """Add an event: one new .ics file in the calendar, which the person's next sync sends like any event they
    made. Changes only that. Events take no project: refused while things outside projects are closed."""
    from gateway_mail.plan.answers import add_event_answer

    return add_event_answer(ctx, title, start, end, location, calendar, description, repeat)


def read_tasks_now(ctx: Context) -> Answer:
    from gateway_mail.plan.answers import tasks_answer

    return tasks_answer(ctx, "now", None, None, 50)


def read_tasks_today(ctx: Context) -> Answer:
    from gateway_mail.plan.answers import tasks_answer

    return tasks_answer(ctx, "today", None, None, 50)


def read_agenda(ctx: Context) -> Answer:
    from gateway_mail.plan.answers import agenda_answer

    return agenda_answer(ctx, "today", 7)


def read_remind(ctx: Context, ident: str) -> Answer:
    from gateway_mail.plan.answers import remind_answer

    return remind_answer(ctx, ident)


def read_projects(ctx: Context) -> Answer:
    from gateway_mail.plan.answers import projects_answer

    return projects_answer(ctx)


TOOLS = [list_tasks, agenda, list_projects, read_project, now, reminders, add_task, complete_task, add_event]
