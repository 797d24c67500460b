#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh), checks the style, and runs the whole test suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
cd "$root"
.venv/bin/ruff check .
.venv/bin/python -m pytest "$@"
