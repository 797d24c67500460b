"""Every benchmark answers --help with its usage, and runs nothing.

All the benchmarks are asked in one child process, one after another, each run as `python bench/NAME.py --help`
would run it (as `__main__`, with its own argv, its folder on the child's PYTHONPATH): one start of Python and one
import of the gateway and the SDK for the lot, instead of one each; each benchmark still has its own test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = sorted(p.name for p in BENCH.glob("bench_*.py"))

ASK_EACH = r'''
import contextlib, io, json, runpy, sys, traceback
said = {}
for path in sys.argv[1:]:
    out, err, code = io.StringIO(), io.StringIO(), 0
    sys.argv = [path, "--help"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
    said[path.rsplit("/", 1)[1]] = {"returncode": code, "stdout": out.getvalue(), "stderr": err.getvalue()}
print(json.dumps(said))
'''


@pytest.fixture(scope="module")
def answers() -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(BENCH), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", ASK_EACH, *(str(BENCH / script) for script in SCRIPTS)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("script", SCRIPTS)
def test_each_benchmark_takes_help(script: str, answers: dict[str, Any]) -> None:
    result = answers[script]
    assert result["returncode"] == 0, result["stderr"]
    assert result["stdout"].startswith(f"usage: {script}") and "--help" in result["stdout"]
