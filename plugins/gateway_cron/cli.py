"""``gateway cron add|remove|enable|disable|list``: the only way jobs are written (never through MCP)."""

from __future__ import annotations

from pathlib import Path

import click

from gateway import PluginHost
from gateway_cron import store


def store_path(host: PluginHost) -> Path:
    return host.path_setting("store", store.default_path(host.folders.data))


def commands(host: PluginHost) -> list[click.Command]:
    def change(action) -> None:
        connection = store.open_for_writing(store_path(host))
        try:
            action(connection)
        except store.JobError as error:
            raise click.ClickException(str(error)) from None
        finally:
            connection.close()

    @click.group("cron")
    def cron() -> None:
        """Scheduled agent jobs: a cron schedule, a prompt, and where the answer goes."""

    @cron.command("add")
    @click.argument("name")
    @click.argument("schedule")
    @click.argument("prompt")
    @click.option(
        "--deliver", "deliver_to", required=True, help="Where the job's answer goes (a chat, an address)."
    )
    @click.option(
        "--tz", "timezone", default="", help="IANA time zone of the schedule (default: this computer's)."
    )
    @click.option(
        "--cwd", type=click.Path(file_okay=False, path_type=Path), help="The folder the job works in."
    )
    @click.option("--disabled", is_flag=True, help="Add it switched off.")
    def add(
        name: str,
        schedule: str,
        prompt: str,
        deliver_to: str,
        timezone: str,
        cwd: Path | None,
        disabled: bool,
    ):
        """Add a job. SCHEDULE is a cron expression in quotes, e.g. "0 7 * * 1-5" or "@daily"."""
        from gateway_cron.schedule import problem_with, zone

        reason = problem_with(schedule)
        if reason:
            raise click.BadParameter(
                f"{schedule!r} is not a cron expression: {reason}", param_hint="SCHEDULE"
            )
        try:
            zone(timezone)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--tz") from None
        job = store.Job(
            name=name,
            schedule=schedule,
            prompt=prompt,
            deliver_to=deliver_to,
            enabled=not disabled,
            timezone=timezone,
            cwd=str(cwd.expanduser().absolute()) if cwd else "",
            created_at="",
            last_run_at="",
        )
        change(lambda connection: store.add(connection, job))
        click.echo(f"added {name}")

    @cron.command("remove")
    @click.argument("name")
    def remove(name: str) -> None:
        """Remove a job."""
        change(lambda connection: store.remove(connection, name))
        click.echo(f"removed {name}")

    @cron.command("enable")
    @click.argument("name")
    def enable(name: str) -> None:
        """Switch a job on."""
        change(lambda connection: store.set_enabled(connection, name, True))
        click.echo(f"{name} is on")

    @cron.command("disable")
    @click.argument("name")
    def disable(name: str) -> None:
        """Switch a job off (it stays, and can be switched on again)."""
        change(lambda connection: store.set_enabled(connection, name, False))
        click.echo(f"{name} is off")

    @cron.command("list")
    def list_() -> None:
        """Every job, with when it runs next."""
        from gateway_cron.schedule import next_run
        from gateway_cron.tools import job_line

        jobs = store.read_jobs(store_path(host))
        for job in jobs:
            upcoming = next_run(job.schedule, job.timezone) if job.enabled else None
            line = job_line(job.name, job.enabled, job.schedule, " ".join(job.prompt.split()), job.deliver_to)
            click.echo(f"{line} next={upcoming or '-'}")
        if not jobs:
            click.echo("(no jobs)")

    return [cron]
