"""Benchmark of the sessions plugin on a synthetic store (run by hand, never as a timed test).

    .venv/bin/python bench/bench_sessions.py                      # 100,000 sessions / 1,000,000 messages
    .venv/bin/python bench/bench_sessions.py --sessions 10000 --messages 100000   # a quick look

The store is generated from a seed and cached under bench/results/ (git-ignored), so only the first run pays for
it. Every figure is a median over --repeat runs, and each "through the gateway" figure is set beside the same
SQL run directly on the same file in the same run: the ratio is the gateway's cost (argument checks, gate, masks,
rendering, audit line). "Through the gateway" means a gateway from `gateway.testing.make_gateway(...)` and its
`call_tool`, the coroutine its `.call(...)` wraps, awaited in one event loop (`.call` starts a new event loop per call,
which would add its own half millisecond): the path a host's call takes, minus the JSON-RPC transport.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plugins"))

from gateway_sessions import store  # noqa: E402
from gateway_sessions.model import Message, Session  # noqa: E402

RESULTS = ROOT / "bench" / "results"
LONG_SESSION = "bench-long-session"
SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ren",
    "tus",
    "ba",
    "qui",
    "dor",
    "fel",
    "sa",
    "ni",
    "vox",
    "tri",
    "pe",
    "gul",
    "ar",
]


def vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words, key=lambda w: rng.random())


class Writer:
    """Zipf-distributed words (rank r has weight 1/r), so that some words are common and most are rare."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.words = vocabulary(rng)
        total, self.cumulative = 0.0, []
        for rank in range(1, len(self.words) + 1):
            total += 1 / rank
            self.cumulative.append(total)

    def text(self, low: int = 8, high: int = 60) -> str:
        return " ".join(
            self.rng.choices(self.words, cum_weights=self.cumulative, k=self.rng.randint(low, high))
        )


def _moment(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_700_000_000 + seconds))


def generate(path: Path, sessions: int, messages: int, seed: int) -> None:
    """A store of `sessions` sessions holding `messages` messages in all, one of them 1,000 messages long."""
    rng = random.Random(seed)
    writer = Writer(rng)
    connection = store.open_for_writing(path)
    per_session, extra = divmod(max(0, messages - 1000), max(1, sessions - 1))
    started = time.perf_counter()
    connection.execute("BEGIN")
    for n in range(sessions):
        count = 1000 if n == 0 else per_session + (1 if n <= extra else 0)
        created = rng.randint(0, 60_000_000)
        session = Session(
            agent=rng.choice(["claude-code", "codex", "gemini", "opencode"]),
            id=LONG_SESSION if n == 0 else f"s{n:07d}-{rng.getrandbits(32):08x}",
            title=writer.text(3, 8),
            cwd=f"/home/ada/src/project{rng.randint(0, 99)}",
            created_at=_moment(created),
            updated_at=_moment(created + rng.randint(60, 86_400)),
            messages=[
                Message(
                    key=f"m{i}",
                    role="user" if i % 2 == 0 else "assistant",
                    blocks=[{"type": "text", "text": writer.text()}],
                )
                for i in range(count)
            ],
        )
        store.upsert(connection, session)
        if n % 2000 == 1999:
            connection.execute("COMMIT")
            connection.execute("BEGIN")
            print(f"  generated {n + 1:,} sessions ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    connection.execute("COMMIT")
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.execute("PRAGMA optimize")
    connection.close()


def median_ms(function, repeat: int) -> float:
    function()  # warm: the first call opens files and fills caches
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def direct_search(path: Path, query: str, limit: int = 20):
    """The SQL the search tool runs, on a plain connection: the best messages by rank, their sessions, and a
    highlight per hit (none of the gate, masks, snippets, rendering or audit)."""
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)

    def run():
        window = max(limit * 5, 50)
        while True:
            best = connection.execute(
                "SELECT rowid, rank FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rank LIMIT ?",
                (query, window),
            ).fetchall()
            rows = {
                row[0]: row[1]
                for row in connection.execute(
                    f"SELECT m.rowid, {store._SESSION_COLUMNS} FROM messages AS m "
                    "JOIN sessions AS s ON s.rowid = m.session WHERE m.rowid IN (SELECT value FROM json_each(?))",
                    (json.dumps([rowid for rowid, _rank in best]),),
                )
            }
            seen: dict[int, int] = {}
            for rowid, _rank in best:
                if rowid in rows and rows[rowid] not in seen:
                    seen[rows[rowid]] = rowid
                    if len(seen) == limit:
                        break
            if len(seen) >= limit or len(best) < window:
                break
            window *= 8
        for rowid in seen.values():
            connection.execute(
                "SELECT highlight(messages_fts, 0, char(2), char(3)) FROM messages_fts "
                "WHERE messages_fts MATCH ? AND rowid = ?",
                (query, rowid),
            ).fetchone()
        return seen

    return run


def direct_list(path: Path, limit: int = 20):
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    sql, params = store.recent_query(limit)
    return lambda: connection.execute(sql, params).fetchall()


def direct_read(path: Path, session_id: str):
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)

    def run():
        rowid = connection.execute("SELECT rowid FROM sessions WHERE id = ?", (session_id,)).fetchone()[0]
        return connection.execute(
            "SELECT role, created_at, text, blocks FROM messages WHERE session = ? ORDER BY seq, rowid",
            (rowid,),
        ).fetchall()

    return run


async def median_ms_async(call, repeat: int) -> float:
    await call()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        await call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


async def measure(gateway, path: Path, repeat: int) -> list[tuple[str, float, float]]:
    """Each tool through the gateway, and the same SQL directly, one after the other."""
    from gateway.core import Caller

    caller = Caller("bench", "1", "bench")

    def call(tool: str, arguments: dict):
        return lambda: gateway.call_tool(tool, arguments, caller)

    rows = []
    for kind, query in pick_queries(path).items():
        answer = await call("rousseau_search_sessions", {"query": query})()
        assert not answer.is_error, answer.text
        through = await median_ms_async(call("rousseau_search_sessions", {"query": query}), repeat)
        direct = median_ms(direct_search(path, query), repeat)
        rows.append((f"search, {kind} ({query}, {len(answer.data['hits'])} hits)", through, direct))
    through = await median_ms_async(call("rousseau_list_sessions", {}), repeat)
    rows.append(("list (20 newest)", through, median_ms(direct_list(path), repeat)))
    through = await median_ms_async(call("rousseau_read_session", {"id": LONG_SESSION}), repeat)
    rows.append(("read (1,000 messages)", through, median_ms(direct_read(path, LONG_SESSION), repeat)))
    return rows


def pick_queries(path: Path) -> dict[str, str]:
    """Words of middling frequency, and a phrase and a prefix that certainly occur."""
    connection = sqlite3.connect(path)
    connection.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, messages_fts, row)"
    )
    words = [
        row[0]
        for row in connection.execute("SELECT term FROM temp.vocab ORDER BY doc DESC LIMIT 200").fetchall()
        if len(row[0]) > 3
    ]
    text = connection.execute(
        "SELECT text FROM messages WHERE rowid = 12345 % (SELECT max(rowid) FROM messages)"
    )
    sample = (text.fetchone() or ["ka lo mi"])[0].split()
    connection.close()
    return {
        "two words": f"{words[60]} {words[90]}",
        "phrase": f'"{sample[2]} {sample[3]}"',
        "prefix": f"{words[120][:4]}*",
    }


def bench_import(messages: int, seed: int) -> dict[str, float]:
    """Claude Code JSONL files written to a temporary folder, then imported into a fresh store."""
    rng = random.Random(seed + 1)
    writer = Writer(rng)
    folder = Path(tempfile.mkdtemp(prefix="bench-sessions-import-"))
    try:
        projects = folder / "projects"
        per_file = 200
        for f in range(max(1, messages // per_file)):
            project = projects / f"-home-ada-src-project{f % 20}"
            project.mkdir(parents=True, exist_ok=True)
            session_id = f"{f:08d}-0000-4000-8000-{rng.getrandbits(48):012x}"
            lines, parent = [], None
            for i in range(per_file):
                uuid = f"{f:08d}-{i:04d}-4000-8000-000000000000"
                role = "user" if i % 2 == 0 else "assistant"
                message = {"role": role, "content": writer.text()}
                if role == "assistant":
                    message = {
                        "id": f"msg_{f}_{i}",
                        "type": "message",
                        "role": role,
                        "model": "claude-sonnet-4-5",
                        "content": [{"type": "text", "text": message["content"]}],
                        "usage": {"input_tokens": 10, "output_tokens": 20},
                    }
                lines.append(
                    json.dumps(
                        {
                            "parentUuid": parent,
                            "isSidechain": False,
                            "userType": "external",
                            "cwd": f"/home/ada/src/project{f % 20}",
                            "sessionId": session_id,
                            "version": "2.1.3",
                            "gitBranch": "main",
                            "type": role,
                            "message": message,
                            "uuid": uuid,
                            "timestamp": _moment(f * 1000 + i),
                        }
                    )
                )
                parent = uuid
            (project / f"{session_id}.jsonl").write_text("\n".join(lines) + "\n")
        from gateway_sessions.importing import import_agent

        connection = store.open_for_writing(folder / "import.db")
        started = time.perf_counter()
        report = import_agent(connection, "claude-code", projects)
        elapsed = time.perf_counter() - started
        started = time.perf_counter()
        again = import_agent(connection, "claude-code", projects)
        unchanged = time.perf_counter() - started
        connection.close()
        return {
            "messages": report.messages,
            "seconds": round(elapsed, 2),
            "messages_per_second": round(report.messages / elapsed),
            "unchanged_files": again.files_unchanged,
            "reimport_unchanged_seconds": round(unchanged, 3),
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--import-messages", type=int, default=100_000, help="size of the import benchmark")
    options = parser.parse_args()

    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"sessions-{options.sessions}-{options.messages}-{options.seed}.db"
    if not path.exists():
        print(f"generating {path.name} (cached for the next runs)…", file=sys.stderr)
        partial = path.with_suffix(".partial")
        for leftover in RESULTS.glob(partial.name + "*"):
            leftover.unlink()
        generate(partial, options.sessions, options.messages, options.seed)
        partial.rename(path)
    stored_messages = sqlite3.connect(path).execute("SELECT count(*) FROM messages").fetchone()[0]

    import gateway_sessions

    from gateway.testing import make_gateway

    home = Path(tempfile.mkdtemp(prefix="bench-sessions-home-"))
    gateway = make_gateway(
        plugins=[gateway_sessions], config={"plugins": {"sessions": {"store": str(path)}}}, home=home
    )
    results: dict[str, object] = {
        "store": path.name,
        "sessions": options.sessions,
        "messages": stored_messages,
        "repeat": options.repeat,
        "through": "gateway.testing.make_gateway(...).call(...)",
    }
    rows = anyio.run(measure, gateway, path, options.repeat)
    print(f"{stored_messages:,} messages in {options.sessions:,} sessions; medians of {options.repeat} runs")
    print(f"{'':48} {'gateway ms':>11} {'direct ms':>10} {'ratio':>6}")
    for name, through, direct in rows:
        print(f"{name:48} {through:11.2f} {direct:10.2f} {through / direct:6.2f}")
        results[name] = {
            "gateway_ms": round(through, 3),
            "direct_ms": round(direct, 3),
            "ratio": round(through / direct, 2),
        }
    size = path.stat().st_size
    results["bytes_per_message"] = round(size / stored_messages)
    print(f"store size: {size / 1e6:.0f} MB, {size / stored_messages:.0f} bytes per message")
    imported = bench_import(options.import_messages, options.seed)
    results["import"] = imported
    print(
        f"import from Claude Code JSONL: {imported['messages']:,} messages in {imported['seconds']} s, "
        f"{imported['messages_per_second']:,} messages/s; again, unchanged: {imported['reimport_unchanged_seconds']} s"
    )
    out = RESULTS / f"bench-sessions-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(results, indent=1))
    print(f"written to {out.relative_to(ROOT)}")
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
