"""A job's own process: `python -m gateway_spam.runner JOBFILE` (started by jobs.start, never by hand).

It reads what to do from its file, records its progress there, and ends it with a result or with what failed.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from gateway_spam import jobs


class JobFailed(Exception):
    """What the job could not do, in a sentence for the person and the agent."""


def _slow() -> float:
    # Tests that restart the server in the middle of a job set this (seconds per message); nothing else does.
    try:
        return float(os.environ.get("GATEWAY_SPAM_TEST_SLOW", "0"))
    except ValueError:
        return 0.0


def run_train(path: Path, job: dict[str, Any]) -> dict[str, Any]:
    from gateway_spam import training

    settings = job["settings"]
    dry_run = bool(job["arguments"].get("dry_run"))
    slow = _slow()

    def progress(phase: str, done: int, total: int) -> None:
        jobs.update(path, progress={"phase": phase, "done": done, "total": total})
        if slow:
            time.sleep(slow)

    return training.train(settings, dry_run=dry_run, progress=progress)


def run_fetch(path: Path, job: dict[str, Any]) -> dict[str, Any]:
    from gateway_spam import fetch

    def progress(phase: str, done: int, total: int) -> None:
        jobs.update(path, progress={"phase": phase, "done": done, "total": total})

    try:
        return fetch.fetch(job["settings"], job["arguments"].get("account"), int(job["arguments"].get("days", 30)),
                           progress)
    except fetch.FetchFailed as failure:
        raise JobFailed(str(failure)) from None


def main(argv: list[str]) -> int:
    path = Path(argv[1])
    job = jobs.read(path)
    if job is None:
        return 2
    if job.get("private"):  # what the starter kept out of the file, given on the standard input
        job["settings"] = {**job["settings"], **json.loads(sys.stdin.read() or "{}")}
    jobs.update(path, progress={"phase": "started", "done": 0, "total": 0})
    try:
        result = (run_train if job["kind"] == "train" else run_fetch)(path, job)
    except JobFailed as failure:
        jobs.update(path, state="failed", ended=time.time(), error=str(failure))
        return 1
    except Exception as error:  # a bug: its traceback to the job's log, a sentence in its file
        traceback.print_exc()
        jobs.update(path, state="failed", ended=time.time(),
                    error=f"the job stopped on an unexpected error ({type(error).__name__}); its log is "
                          f"{path.with_suffix('.log')}")
        return 1
    jobs.update(path, state="done", ended=time.time(), result=result,
                progress={**(jobs.read(path) or {}).get("progress", {}), "phase": "done"})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
