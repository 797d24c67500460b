#!/usr/bin/env bash
# Makes .venv (once) and installs the gateway with every built-in plugin, the test tools and the example
# plugin, all editable. Only Python 3.11+ is needed; run from anywhere.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "Python 3.11 or newer is needed (set PYTHON=/path/to/python3.11)" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo "Making .venv (the project's own Python environment, once)..." >&2
  "$python" -m venv .venv
fi
stamp=.venv/.installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ contrib/gateway-hello/pyproject.toml -nt "$stamp" ]; then
  echo "Installing the gateway, its plugins and the test tools into .venv (about a minute the first time)..." >&2
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[all,test]' -e contrib/gateway-hello
  touch "$stamp"
  echo "Installed. The command is .venv/bin/gateway (not on your PATH: run it so, or 'source .venv/bin/activate')." >&2
fi
