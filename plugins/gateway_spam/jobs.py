"""Jobs: training and fetching run apart from the server, at the lowest priority, followed through a file.

A job is a process of its own (`python -m gateway_spam.runner FILE`), in a session of its own so that it outlives
the server that started it, niced to 19 and in the idle I/O class where the system has one (`ionice -c 3`).
Its file, `<state>/jobs/<id>.json` (0600, written whole then renamed), exists from the moment it is started to
a week after it ended: kind, arguments, state (running, done, failed), progress, result or what failed. One job
of each kind at a time: a second is refused, naming the one that runs. A job whose process is gone while its
file still says running failed, and says so.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gateway import ToolError

KINDS = ("train", "fetch")
KEPT_FOR = 7 * 24 * 3600


def jobs_folder(state: Path) -> Path:
    folder = state / "jobs"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def write(path: Path, job: dict[str, Any]) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        json.dump(job, out, indent=1, sort_keys=True)
    os.replace(temporary, path)


def read(path: Path) -> dict[str, Any] | None:
    try:
        job = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return job if isinstance(job, dict) else None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (ended, not yet reaped by the server that started it) is not running.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def settled(path: Path, job: dict[str, Any]) -> dict[str, Any]:
    """The job as it stands: one whose process is gone while its file says running is failed, said so."""
    if job.get("state") == "running" and not alive(int(job.get("pid") or 0) or -1):
        time.sleep(0.05)  # its last write may be landing now
        job = read(path) or job
        if job.get("state") == "running":
            job.update(state="failed", ended=time.time(),
                       error="its process ended without finishing (stopped, or the computer restarted)")
            write(path, job)
    return job


def all_jobs(state: Path) -> list[dict[str, Any]]:
    """Every job kept, newest first; those ended more than a week ago are removed."""
    found = []
    now = time.time()
    for path in jobs_folder(state).glob("*.json"):
        job = read(path)
        if job is None:
            continue
        job = settled(path, job)
        if job.get("state") != "running" and now - float(job.get("ended") or now) > KEPT_FOR:
            path.unlink(missing_ok=True)
            continue
        found.append(job)
    found.sort(key=lambda j: float(j.get("started") or 0), reverse=True)
    return found


def find(state: Path, job_id: str) -> dict[str, Any] | None:
    if not job_id.isalnum() or len(job_id) > 40:
        return None
    path = jobs_folder(state) / f"{job_id}.json"
    job = read(path)
    return settled(path, job) if job else None


@contextlib.contextmanager
def _locked(state: Path) -> Iterator[None]:
    with open(jobs_folder(state) / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def lowest_priority_command(command: list[str]) -> list[str]:
    """The command at the idle I/O class where `ionice` exists (its niceness is set in the child, below)."""
    ionice = shutil.which("ionice")
    return [ionice, "-c", "3", *command] if ionice else command


def _nice_child() -> None:
    os.nice(19 - os.nice(0))


def start(state: Path, kind: str, arguments: dict[str, Any], settings: dict[str, Any],
          private: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write the job's file, then start its process; refused when a job of this kind runs.

    `private` (settings that may hold a secret, such as a password_command) goes to the process on its standard
    input, never into the job's file: the file names its keys only.
    """
    with _locked(state):
        running = [j for j in all_jobs(state) if j.get("kind") == kind and j.get("state") == "running"]
        if running:
            raise ToolError(f"a {kind} job is already running: {running[0]['id']} (started "
                            f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(running[0]['started']))}); follow "
                            f"it with spam_job, and start another when it has ended")
        job_id = time.strftime("%Y%m%d%H%M%S") + secrets.token_hex(3)
        path = jobs_folder(state) / f"{job_id}.json"
        job = {"id": job_id, "kind": kind, "arguments": arguments, "settings": settings, "state": "running",
               "started": time.time(), "progress": {"phase": "starting", "done": 0, "total": 0}, "pid": 0,
               "private": sorted(private or {})}
        write(path, job)
        log = open(jobs_folder(state) / f"{job_id}.log", "ab")  # noqa: SIM115 (handed to the child)
        os.chmod(log.name, 0o600)
        try:
            process = subprocess.Popen(
                lowest_priority_command([sys.executable, "-m", "gateway_spam.runner", str(path)]),
                stdin=subprocess.PIPE if private else subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True, preexec_fn=_nice_child, close_fds=True,
            )
            if private and process.stdin is not None:
                with contextlib.suppress(BrokenPipeError):  # a child gone already fails by itself, said in its file
                    process.stdin.write(json.dumps(private).encode())
                process.stdin.close()
        except OSError as error:
            job.update(state="failed", ended=time.time(), error=f"the job could not start: {error.strerror}")
            write(path, job)
            return job
        finally:
            log.close()
        # The child may already have written progress: keep its writes, add only the pid.
        current = read(path) or job
        current["pid"] = process.pid
        write(path, current)
        return current


def update(path: Path, **changes: Any) -> dict[str, Any]:
    """The job's own process records its progress or its end (under the lock the starter holds while it starts)."""
    with _locked(path.parent.parent):
        job = read(path) or {}
        job.update(changes, pid=os.getpid())
        write(path, job)
        return job
