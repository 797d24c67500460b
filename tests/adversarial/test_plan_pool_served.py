"""The first reading of a big task folder through a real `gateway serve`: parsed by a pool of processes, a hostile
file among 200 is one unreadable file in the answer, every other task is read, and once the answer is given no
pool process is left running (the fork server that makes them aside)."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import anyio
from gateway_mail.plan import sample as sample_plan

from gateway.testing import serve_client, write_config

CANARY = "wombatpoolcanary"


def _forkservers_and_readers(home: Path) -> int:
    """Processes of this home's server made by multiprocessing's fork server (the server and its forks)."""
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as handle:
                command = handle.read()
            with open(f"/proc/{entry.name}/environ", "rb") as handle:
                environment = handle.read().split(b"\0")
        except OSError:
            continue
        if b"multiprocessing.forkserver" in command and f"HOME={home}".encode() in environment:
            count += 1
    return count


def test_a_hostile_file_among_200_is_one_unreadable_file_and_no_reader_outlives_the_answer(
        gateway_home: Path) -> None:
    sample_plan.world(gateway_home, CANARY, datetime.now(ZoneInfo("Europe/Paris")))
    sample_plan.generate(gateway_home / "vdir", 200, 0)
    (gateway_home / "vdir" / "tasks" / "list5" / "hostile.ics").write_bytes(
        b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VTODO\r\nUID:hostile\r\nSUMMARY:Unclosed\r\nEND:VCALENDAR\r\n")
    write_config(gateway_home, sample_plan.config(gateway_home), projects=sample_plan.PROJECTS)

    async def play(client):
        answers = []
        for _ in range(20):  # a loaded machine may need more than one call (each stops before its deadline)
            result = await client.call_tool("list_tasks", {"view": "all", "limit": 500})
            answers.append(result)
            if not (result.structured_content or {}).get("pending"):
                break
        return answers, _forkservers_and_readers(gateway_home)

    async def run():
        async with serve_client(gateway_home) as client:
            return await play(client)

    answers, left = anyio.run(run)
    last = answers[-1]
    assert not last.is_error and not last.structured_content.get("pending")
    assert last.structured_content["unreadable_files"] == 1
    assert left <= 1  # the fork server at most: every reader was ended before the answer
    shown = {task["address"] for task in last.structured_content["tasks"]}
    left_out = last.structured_content["left_out"]
    open_tasks = {path.stem for path in (gateway_home / "vdir" / "tasks").glob("list*/task-*.ics")
                  if b"STATUS:NEEDS-ACTION" in path.read_bytes()}
    assert len({a.rsplit("/", 1)[-1] for a in shown} & open_tasks) + left_out >= len(open_tasks) > 100
    assert CANARY not in str([a.structured_content for a in answers])
