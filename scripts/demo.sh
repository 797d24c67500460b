#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh), then makes a home of invented data and tours it through a real MCP
# client session. Pass a folder to keep the demo home there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
exec "$root/.venv/bin/gateway" demo "$@"
