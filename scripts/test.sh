#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh), checks the style, and runs the whole test suite on parallel workers
# (pytest-xdist; give -n 0 to run it in one process, -n N for N workers; other pytest arguments are passed on).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
cd "$root"
.venv/bin/ruff check .
# Python and pytest keep compiled (and assertion-rewritten) modules so that each worker and each server a test
# starts reads them instead of compiling every module again.
unset PYTHONDONTWRITEBYTECODE
# In a fresh clone nothing is compiled yet, and every worker would compile (and pytest rewrite) each module it
# collects at the same moment as the others: the same work four times over. Two collections side by side (one
# for each core) compile it once first; their output is not needed (the run below reports any collection error).
if ! compgen -G "tests/__pycache__/conftest.*-pytest-*.pyc" >/dev/null; then
  .venv/bin/python -m pytest --collect-only -q -p no:xdist tests/plugins >/dev/null 2>&1 &
  .venv/bin/python -m pytest --collect-only -q -p no:xdist --ignore=tests/plugins >/dev/null 2>&1 || true
  wait || true
fi
# The tests write many small files and SQLite databases, synced as the gateway syncs a person's: on the tmpfs at
# /dev/shm, when there is one with room (a run takes about 1 GB at its peak), the same work costs the kernel about a
# quarter less. Only the last run's folders are kept there (they hold memory). A TMPDIR of your own is kept.
retention=()
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ] \
    && [ "$(df -Pk /dev/shm | awk 'NR == 2 {print $4}')" -gt $((4 * 1024 * 1024)) ]; then
  export TMPDIR=/dev/shm
  retention=(-o tmp_path_retention_count=1)
fi
# More workers than cores: much of the suite waits on the servers and tools it starts. `worksteal` hands an idle
# worker tests queued for a busy one, so one long file does not finish alone at the end.
.venv/bin/python -m pytest -n 4 --dist worksteal "${retention[@]}" "$@"
