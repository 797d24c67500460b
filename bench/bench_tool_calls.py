"""Benchmark of sessions_touching and search_tool_calls on a synthetic store whose sessions call tools on files
(run by hand, never as a timed test).

    .venv/bin/python bench/bench_tool_calls.py --sessions 10000 --messages 100000     # about two minutes to make
    .venv/bin/python bench/bench_tool_calls.py                                          # 1,000,000 messages

The store is bench_sessions.py's (Zipf words, 100 projects, one 1,000-message session), with tool calls added: every
other assistant message calls Read, Edit, Write, Grep or Bash on a file of its project (500 modules a project, a
test file for Bash, relative to the session's folder), and the next message carries the call's result. It is made
once and kept in --cache, under a name of its own. Each figure is a median over --repeat runs of the tool through
the gateway (`make_gateway(...)`'s `call_tool`, no JSON-RPC transport), set beside the same SQL run directly on the
same file, taken in turns; a second gateway closes 10 of the 100 projects.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plugins"))
sys.path.insert(0, str(ROOT / "bench"))

from bench_sessions import (  # noqa: E402
    CLOSED_PROJECTS,
    RESULTS,
    Writer,
    _moment,
    _plain,
    closed_manifest,
    fill_kept_back,
    paired,
    row,
)
from gateway_sessions import store  # noqa: E402
from gateway_sessions.model import Message, Session  # noqa: E402
from gateway_sessions.store import call_search as calls  # noqa: E402

TOOLS = ("Read", "Edit", "Write", "Grep", "Bash")


def _call(rng: random.Random, project: int, number: int) -> dict:
    tool = rng.choice(TOOLS)
    module = rng.randint(0, 499)
    if tool == "Bash":
        arguments = {"command": f"pytest -q tests/test_module{module}.py", "description": "run the tests"}
    elif tool == "Grep":
        arguments = {"pattern": f"def handler{module}", "path": f"/home/ada/src/project{project}/src"}
    else:
        arguments = {"file_path": f"/home/ada/src/project{project}/src/module{module}.py"}
        if tool == "Edit":
            arguments |= {"old_string": "return None", "new_string": "return value"}
    return {"type": "tool_use", "id": f"call-{number}", "name": tool, "input": arguments}


def generate(path: Path, sessions: int, messages: int, seed: int) -> None:
    rng = random.Random(seed)
    writer = Writer(rng)
    connection = store.open_for_writing(path)
    per_session, extra = divmod(max(0, messages - 1000), max(1, sessions - 1))
    started = time.perf_counter()
    writes = store.Writes.begin(connection)
    for n in range(sessions):
        count = 1000 if n == 0 else per_session + (1 if n <= extra else 0)
        created = rng.randint(0, 60_000_000)
        project = rng.randint(0, 99)
        blocks_of: list[list[dict]] = []
        pending = None
        for i in range(count):
            blocks = [{"type": "text", "text": writer.text()}]
            if pending is not None:
                blocks.append({"type": "tool_result", "tool_use_id": pending, "content": writer.text(4, 30)})
                pending = None
            if i % 4 == 1:  # every other assistant message calls a tool
                call = _call(rng, project, i)
                blocks.append(call)
                pending = call["id"]
            blocks_of.append(blocks)
        session = Session(
            agent=rng.choice(["claude-code", "codex", "gemini", "opencode"]),
            id=f"s{n:07d}-{rng.getrandbits(32):08x}",
            title=writer.text(3, 8),
            cwd=f"/home/ada/src/project{project}",
            created_at=_moment(created),
            updated_at=_moment(created + rng.randint(60, 86_400)),
            messages=[
                Message(key=f"m{i}", role="user" if i % 2 == 0 else "assistant", blocks=blocks,
                        timestamp=_moment(created + i * 30))
                for i, blocks in enumerate(blocks_of)
            ],
        )
        writes.upsert(session)
        if writes.messages >= store.BATCH_MESSAGES:
            writes.commit()
            writes = store.Writes.begin(connection)
            print(f"  generated {n + 1:,} sessions ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    writes.commit()
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.execute("PRAGMA optimize")
    connection.close()


def cached_store(cache: Path, sessions: int, messages: int, seed: int) -> tuple[Path, float]:
    path = cache / f"tool-calls-{sessions}-{messages}-{seed}.db"
    took = 0.0
    if not path.exists():
        print(f"generating {path} (kept for the next runs)…", file=sys.stderr)
        partial = path.with_suffix(".partial")
        for leftover in cache.glob(partial.name + "*"):
            leftover.unlink()
        started = time.perf_counter()
        generate(partial, sessions, messages, seed)
        took = time.perf_counter() - started
        partial.rename(path)
    return path, took


def direct(path: Path, kind: str, arguments: dict, closed: list[str] | None):
    """The tool's SQL (store/calls.py) on a plain connection: the gate's kept-back table filled once, beforehand."""
    from gateway.gate.routes import path_forms

    connection = _plain(path)
    gated = bool(closed)
    if gated:
        fill_kept_back(connection, closed)
    forms = path_forms(arguments["path"]) if arguments.get("path") else ()

    def run():
        if kind == "rousseau_list_sessions":
            return connection.execute(*store.recent_query(20, gated)).fetchall()
        if kind == "sessions_touching":
            found = calls.touching(connection, forms, "", 20, gated)
            for touch in found:
                connection.execute("SELECT * FROM sessions WHERE rowid = ?", (touch.session,)).fetchone()
            return found
        return calls.search_calls(
            connection, calls.query_words(arguments.get("query", "")), arguments.get("tool", ""), forms, "", 20, gated
        )

    return run


async def measure(gateway, gated, path: Path, repeat: int) -> list[dict]:
    from gateway.engine.core import Caller

    caller = Caller("bench", "1", "bench")
    closed = [f"/home/ada/src/project{n}" for n in range(CLOSED_PROJECTS)]
    # The file of project 42 its sessions' calls touched most (a file no call touched answers from the index at once).
    busiest = sqlite3.connect(path).execute(
        "SELECT path FROM tool_call_paths WHERE path > '/home/ada/src/project42/src/' "
        "AND path < '/home/ada/src/project42/src0' GROUP BY path ORDER BY count(*) DESC LIMIT 1"
    ).fetchone()[0]
    cases = [
        ("sessions_touching", "a file", {"path": busiest}),
        ("sessions_touching", "a project's folder", {"path": "/home/ada/src/project42"}),
        ("sessions_touching", "the folder of all projects", {"path": "/home/ada/src"}),
        ("search_tool_calls", "a tool (Bash)", {"tool": "Bash"}),
        ("search_tool_calls", "a word in a fifth of the calls (pytest)", {"query": "pytest"}),
        ("search_tool_calls", "a rare word (handler7)", {"query": "handler7"}),
        ("search_tool_calls", "two words (return value)", {"query": "return value"}),
        ("search_tool_calls", "a prefix (handl*)", {"query": "handl*"}),
        ("search_tool_calls", "a tool at a file", {"tool": "Edit", "path": busiest}),
        ("search_tool_calls", "a project's folder", {"path": "/home/ada/src/project42"}),
        ("rousseau_list_sessions", "the 20 newest, for comparison", {}),
    ]
    rows = []
    for on, shut, label in ((gateway, None, ""), (gated, closed, f", {CLOSED_PROJECTS}/100 projects closed")):
        for tool, kind, arguments in cases:
            if shut and tool == "search_tool_calls" and "folder" not in kind and "Bash" not in kind:
                continue
            if shut and tool == "rousseau_list_sessions":
                continue

            def call(tool=tool, arguments=arguments, on=on):
                return on.call_tool(tool, arguments, caller)

            answer = await call()
            assert not answer.is_error, answer.text
            found = len(answer.data.get("sessions", answer.data.get("calls", [])))
            size = len(answer.text) + len(json.dumps(answer.data))
            through, plain = await paired(call, direct(path, tool, arguments, shut), repeat)
            rows.append(row(f"{tool}, {kind}{label} ({found} given, {size / 1000:.0f} kB)", through, plain))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--cache", type=Path, default=RESULTS)
    options = parser.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    options.cache.mkdir(parents=True, exist_ok=True)
    path, took = cached_store(options.cache, options.sessions, options.messages, options.seed)
    store.open_for_writing(path, say=lambda sentence: print(sentence, file=sys.stderr)).close()
    plain = sqlite3.connect(path)
    counts = {
        "messages": plain.execute("SELECT count(*) FROM messages").fetchone()[0],
        "tool_calls": plain.execute("SELECT count(*) FROM tool_calls").fetchone()[0],
        "tool_call_paths": plain.execute("SELECT count(*) FROM tool_call_paths").fetchone()[0],
        "tool_call_words": plain.execute("SELECT count(*) FROM tool_call_words").fetchone()[0],
    }
    plain.close()

    import gateway_sessions

    from gateway.testing import make_gateway

    home = Path(tempfile.mkdtemp(prefix="bench-calls-home-"))
    gated_home = Path(tempfile.mkdtemp(prefix="bench-calls-gated-"))
    config = {"plugins": {"sessions": {"store": str(path), "refresh": False}}}
    gateway = make_gateway(plugins=[gateway_sessions], config=config, home=home)
    gated = make_gateway(plugins=[gateway_sessions], config=config, projects=closed_manifest(), home=gated_home)
    rows = anyio.run(measure, gateway, gated, path, options.repeat)
    print(
        f"{counts['messages']:,} messages, {counts['tool_calls']:,} tool calls ({counts['tool_call_paths']:,} path "
        f"rows, {counts['tool_call_words']:,} word rows); medians of {options.repeat} runs"
        + (f"; store made in {took:.0f} s" if took else "")
    )
    width = max(len(r["name"]) for r in rows)
    print(f"{'':{width}} {'gateway ms':>10} {'p95 ms':>8} {'direct ms':>9} {'ratio':>5}")
    for r in rows:
        print(f"{r['name']:{width}} {r['gateway_ms']:10.2f} {r['gateway_p95_ms']:8.2f} {r['direct_ms']:9.2f} "
              f"{r['gateway_ms'] / r['direct_ms']:5.2f}")
    size = path.stat().st_size
    print(f"store size: {size / 1e6:.0f} MB")
    out = RESULTS / f"bench-tool-calls-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps({"counts": counts, "made_s": took, "size": size,
                               "rows": [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()}
                                        for r in rows]}, indent=1))
    print(f"written to {out.relative_to(ROOT)}")
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(gated_home, ignore_errors=True)


if __name__ == "__main__":
    main()
