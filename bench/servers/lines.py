"""A stdio MCP server spoken to as a host's pipe carries it: one JSON-RPC line written, its answer's line read (the
benches' client, without the SDK's client on this side)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path


class LineClient:
    """`command` started on pipes (buffered both ways, each line flushed; its stderr dropped) and initialized."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], cwd: Path) -> None:
        self.name = name
        # Buffered both ways, as a host's client reads (an unbuffered pipe's readline reads a byte a call: for a page
        # of 20 hits, some 15,000 reads in this process, which the wall time of each call held).
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self.pid = self.process.pid
        self.number = 0
        self._ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": name, "version": "1"}})
        self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _write(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self.process.stdin.flush()

    def _ask(self, method: str, params: dict) -> dict:
        self.number += 1
        self._write({"jsonrpc": "2.0", "id": self.number, "method": method, "params": params})
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.name} stopped")
            answer = json.loads(line)
            if answer.get("id") == self.number:
                return answer

    def close(self, timeout: float = 60) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=timeout)
