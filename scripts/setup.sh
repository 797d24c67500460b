#!/usr/bin/env bash
# Makes .venv (once) and installs the gateway with every built-in plugin, the test tools, the example
# plugin and the test-only fixtures of the MCP conformance suite (off unless a config turns them on), all
# editable. Only Python 3.11+ is needed; run from anywhere.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# The interpreter: 3.11 or newer, and one whose email package refuses to write a header line it was not given
# (the fix of CVE-2024-6923; the gateway checks its drafts itself too, and does not rely on it). $PYTHON when set;
# else the first such of python3, Debian's python3.11/3.12/3.13; as root on Debian, Debian's python3.11 is
# installed when none has the fix.
fixed='import sys, email.policy; sys.exit(sys.version_info < (3, 11) or not hasattr(email.policy.default, "verify_generated_headers"))'
usable='import sys, venv; sys.exit(sys.version_info < (3, 11))'
pick() {
  for candidate in python3 /usr/bin/python3.13 /usr/bin/python3.12 /usr/bin/python3.11 /usr/bin/python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "$fixed" 2>/dev/null && "$candidate" -c "$usable" 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  return 1
}
if [ -n "${PYTHON:-}" ]; then
  python=$PYTHON
elif ! python=$(pick); then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "Installing Debian's python3.11 (its email package has the fix of CVE-2024-6923)..." >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3.11 python3.11-venv >/dev/null
  fi
  python=$(pick) || python=python3
fi
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "Python 3.11 or newer is needed (set PYTHON=/path/to/python3.11)" >&2
  exit 1
fi
if ! "$python" -c "$fixed" 2>/dev/null; then
  echo "Note: $python's email package lacks the fix of CVE-2024-6923; the gateway checks its drafts itself." >&2
fi
if [ -x .venv/bin/python ] && ! .venv/bin/python -c "$fixed" 2>/dev/null && "$python" -c "$fixed" 2>/dev/null; then
  echo "Making .venv again with $python (the one it has lacks the fix of CVE-2024-6923)..." >&2
  rm -rf .venv
fi
if [ ! -x .venv/bin/python ]; then
  echo "Making .venv (the project's own Python environment, once)..." >&2
  "$python" -m venv .venv
fi
stamp=.venv/.installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ contrib/gateway-hello/pyproject.toml -nt "$stamp" ] \
   || [ contrib/gateway-conformance-fixtures/pyproject.toml -nt "$stamp" ]; then
  echo "Installing the gateway, its plugins and the test tools into .venv (about a minute the first time)..." >&2
  # uv (from PyPI, into .venv) installs the same packages several times faster than pip; pip when uv cannot.
  packages=(-e '.[all,test]' -e contrib/gateway-hello -e contrib/gateway-conformance-fixtures)
  if ! { .venv/bin/python -m pip install --quiet --disable-pip-version-check uv \
         && .venv/bin/uv pip install --quiet --python .venv/bin/python "${packages[@]}"; }; then
    echo "uv could not install them: pip instead..." >&2
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "${packages[@]}"
  fi
  touch "$stamp"
  echo "Installed. The command is .venv/bin/gateway (not on your PATH: run it so, or 'source .venv/bin/activate')." >&2
fi
