"""Benchmark of the sessions plugin on a synthetic store (run by hand, never as a timed test).

    .venv/bin/python bench/bench_sessions.py                      # 100,000 sessions / 1,000,000 messages
    .venv/bin/python bench/bench_sessions.py --sessions 10000 --messages 100000   # a quick look
    .venv/bin/python bench/bench_sessions.py --only import        # only the import from Claude Code JSONL

    .venv/bin/python bench/bench_sessions.py --only search --cache ~/.cache/gateway-bench   # the tools only

The store is generated from a seed, written in import-sized batches, and kept in --cache (bench/results/ by default,
git-ignored), so only the first run pays for it (about 15 minutes for the million on a busy 2-core machine;
`--only generate` makes it and stops); a kept store of an earlier version is upgraded first, as `gateway sessions
import` would (said, and timed). Every figure is a median over --repeat runs (with the p95 of the gateway's times),
and each "through the gateway" figure is set beside the same SQL run directly on the same file (same pragmas), the two
taken in turns so that both see the same load: the ratio is the gateway's cost (argument checks, gate, masks,
rendering, audit line). Each search also shows how many messages it matches, what FTS5's own ORDER BY rank walked
until 20 sessions costs, whether the hits are the exact BM25 best 20 sessions found that way (and in its order), and
where the direct time goes; one search runs through a gate that closes 10 of the store's 100 projects. "Through the gateway" means a gateway from `gateway.testing.make_gateway(...)` and its
`call_tool`, the coroutine its `.call(...)` wraps, awaited in one event loop (`.call` starts a new event loop per call,
which would add its own half millisecond): the path a host's call takes, minus the JSON-RPC transport.
"""

from __future__ import annotations

import argparse
import json
import os
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
    # Written as an import writes (store.Writes): a batch of sessions per transaction, indexed in one statement, so
    # that the index has the segments an import would leave and a million messages take minutes, not an hour.
    writes = store.Writes.begin(connection)
    for n in range(sessions):
        count = 1000 if n == 0 else per_session + (1 if n <= extra else 0)
        created = rng.randint(0, 60_000_000)
        project = rng.randint(0, 99)
        session = Session(
            agent=rng.choice(["claude-code", "codex", "gemini", "opencode"]),
            id=LONG_SESSION if n == 0 else f"s{n:07d}-{rng.getrandbits(32):08x}",
            title=writer.text(3, 8),
            cwd=f"/home/ada/src/project{project}",
            # Places beyond the first working directory (files its tool calls named, a `cd`): 50,000 distinct paths
            # in all, for the gate to judge one by one; one session in a hundred also went into another project.
            cwds={f"/home/ada/src/project{project}/src/module{rng.randint(0, 499)}.py" for _ in range(2)}
            | ({f"/home/ada/src/project{rng.randint(0, 99)}"} if rng.random() < 0.01 else set()),
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
        writes.upsert(session)
        if writes.messages >= store.BATCH_MESSAGES:
            writes.commit()
            writes = store.Writes.begin(connection)
            print(f"  generated {n + 1:,} sessions ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    writes.commit()
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.execute("PRAGMA optimize")
    connection.close()


def cached_store(cache: Path, sessions: int, messages: int, seed: int) -> Path:
    """The generated store for these parameters, made once (under a temporary name, renamed when whole) and kept."""
    path = cache / f"sessions-{sessions}-{messages}-{seed}.db"
    if not path.exists():
        print(f"generating {path} (kept for the next runs)…", file=sys.stderr)
        partial = path.with_suffix(".partial")
        for leftover in cache.glob(partial.name + "*"):
            leftover.unlink()
        generate(partial, sessions, messages, seed)
        partial.rename(path)
    return path


def median_ms(function, repeat: int) -> float:
    function()  # warm: the first call opens files and fills caches
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _plain(path: Path) -> sqlite3.Connection:
    """A plain read-only connection with the same pragmas as the plugin's (so the ratio is the gateway's own cost)."""
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    for pragma in store.READ_PRAGMAS:
        connection.execute(pragma)
    return connection


def _scratch() -> sqlite3.Connection:
    scratch = sqlite3.connect(":memory:", isolation_level=None)
    scratch.execute("CREATE TABLE scratch_text(rowid INTEGER PRIMARY KEY, text TEXT NOT NULL)")
    scratch.execute(
        "CREATE VIRTUAL TABLE scratch USING fts5("
        f"text, content='scratch_text', content_rowid='rowid', tokenize='{store.TOKENIZE}')"
    )
    return scratch


def fill_kept_back(connection: sqlite3.Connection, closed: list[str]) -> None:
    """The sessions with a place in a closed folder, in the connection's temporary table (once, outside the timing,
    as the tool keeps it until the store changes)."""
    connection.execute("CREATE TEMP TABLE IF NOT EXISTS kept_back(rowid INTEGER PRIMARY KEY)")
    connection.execute("DELETE FROM temp.kept_back")
    connection.execute(
        "INSERT INTO temp.kept_back SELECT DISTINCT session FROM session_paths WHERE "
        + " OR ".join("path = ? OR path LIKE ?" for _ in closed),
        [value for folder in closed for value in (folder, folder + "/%")],
    )
    connection.commit()


def direct_search(path: Path, query: str, limit: int = 20, closed: list[str] | None = None, parts=None):
    """The SQL the search tool runs, on a plain connection: the best messages by bm25() (over-fetched), their
    sessions (the gate's kept-back ones passed over), the pass over every session's best message when those hold
    too few sessions, the sessions' rows, and a highlight of each hit's message (in an in-memory FTS5 table); none of
    the gate's bookkeeping, masks, snippets, rendering or audit. With `parts` (a dict), the time of each step is
    added to it."""
    from gateway_sessions.store import reads

    connection = _plain(path)
    scratch = _scratch()
    fetch = max(limit * reads.OVERFETCH, reads.OVERFETCH_AT_LEAST)
    if closed:
        fill_kept_back(connection, closed)
    gate = " AND session NOT IN (SELECT rowid FROM temp.kept_back)" if closed else ""

    def run():
        clock = time.perf_counter()

        def lap(name):
            nonlocal clock
            now = time.perf_counter()
            if parts is not None:
                parts.setdefault(name, []).append((now - clock) * 1000)
            clock = now

        rows = connection.execute(reads._BEST_MESSAGES, (query, fetch)).fetchall()
        lap(f"best {fetch} messages (bm25, every match)")
        session_of = dict(
            connection.execute(
                "SELECT rowid, session FROM messages WHERE rowid IN (SELECT value FROM json_each(?))" + gate,
                (json.dumps([rowid for rowid, _ in rows]),),
            )
        )
        best: dict[int, tuple[float, int]] = {}
        for rowid, rank in rows:
            if rowid in session_of and session_of[rowid] not in best:
                best[session_of[rowid]] = (rank, rowid)
                if len(best) == limit:
                    break
        lap("their sessions")
        if len(best) < limit and len(rows) == fetch:
            sql = reads._BEST_PER_SESSION_GATED if closed else reads._BEST_PER_SESSION
            best = {session: (rank, rowid) for session, rank, rowid in connection.execute(sql, (query, limit))}
            lap("best message of every session")
        connection.execute(
            f"SELECT {store._SESSION_COLUMNS} FROM sessions AS s WHERE s.rowid IN (SELECT value FROM json_each(?))",
            (json.dumps(list(best)),),
        ).fetchall()
        lap("the sessions' rows")
        texts = connection.execute(
            "SELECT rowid, text FROM messages WHERE rowid IN (SELECT value FROM json_each(?))",
            (json.dumps([rowid for _rank, rowid in best.values()]),),
        ).fetchall()
        scratch.execute("BEGIN")
        scratch.executemany("INSERT INTO scratch_text(rowid, text) VALUES (?, ?)", texts)
        scratch.execute("INSERT INTO scratch(rowid, text) SELECT rowid, text FROM scratch_text")
        scratch.execute(
            "SELECT rowid, highlight(scratch, 0, char(2), char(3)) FROM scratch WHERE scratch MATCH ?",
            (query,),
        ).fetchall()
        scratch.execute("ROLLBACK")
        lap("highlights of the hits")
        return best

    return run


def exact_search(path: Path, query: str, limit: int = 20, closed: list[str] | None = None):
    """The exact best sessions by BM25 found another way, to check the tool's hits against (FTS5's own ORDER BY rank
    over every match, ties to the newer message, walked until `limit` sessions let through are seen), and what that
    way costs."""
    connection = _plain(path)
    kept: set[int] = set()
    if closed:
        fill_kept_back(connection, closed)
        kept = {rowid for (rowid,) in connection.execute("SELECT rowid FROM temp.kept_back")}

    def run():
        seen: dict[int, int] = {}
        cursor = connection.execute(
            "SELECT f.rowid, m.session FROM messages_fts AS f JOIN messages AS m ON m.rowid = f.rowid "
            "WHERE messages_fts MATCH ? ORDER BY rank, f.rowid DESC",
            (query,),
        )
        for rowid, session in cursor:
            if session not in seen and session not in kept:
                seen[session] = rowid
                if len(seen) == limit:
                    break
        cursor.close()
        return seen

    return run


def matches(path: Path, query: str) -> int:
    return _plain(path).execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (query,)).fetchone()[0]


def direct_list(path: Path, limit: int = 20):
    connection = _plain(path)
    sql, params = store.recent_query(limit)
    return lambda: connection.execute(sql, params).fetchall()


def direct_read(path: Path, session_id: str):
    connection = _plain(path)

    def run():
        rowid = connection.execute("SELECT rowid FROM sessions WHERE id = ?", (session_id,)).fetchone()[0]
        return connection.execute(
            "SELECT role, created_at, text, blocks FROM messages WHERE session = ? ORDER BY seq, rowid",
            (rowid,),
        ).fetchall()

    return run


def p95(times: list[float]) -> float:
    return statistics.quantiles(times, n=20, method="inclusive")[-1] if len(times) > 1 else times[0]


async def paired(call, direct, repeat: int) -> tuple[list[float], list[float]]:
    """The gateway's call and the direct SQL taken in turns, so that both see the same load on a shared machine: the
    times of each (ms)."""
    await call()
    direct()
    through, plain = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        await call()
        through.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        direct()
        plain.append((time.perf_counter() - started) * 1000)
    return through, plain


def row(name: str, through: list[float], plain: list[float], **more) -> dict:
    return {
        "name": name,
        "gateway_ms": statistics.median(through),
        "gateway_p95_ms": p95(through),
        "direct_ms": statistics.median(plain),
        **more,
    }


CLOSED_PROJECTS = 10  # of the store's 100 working directories, for the search through the gate


def closed_manifest() -> list[dict]:
    return [
        {"id": f"p{n}", "name": f"Project {n}", "ai": False, "paths": [f"/home/ada/src/project{n}"]}
        for n in range(CLOSED_PROJECTS)
    ]


async def measure(gateway, gated, path: Path, repeat: int) -> tuple[list[tuple], dict[str, dict[str, float]]]:
    """Each tool through the gateway, and the same SQL directly, in turns; for each search also what ranking every
    match costs, how many hits are those of the exact ranking, and where the direct time goes."""
    from gateway.engine.core import Caller

    caller = Caller("bench", "1", "bench")

    def call(on, tool: str, arguments: dict):
        return lambda: on.call_tool(tool, arguments, caller)

    rows, breakdown = [], {}
    searches = [(kind, query, gateway, None) for kind, query in pick_queries(path).items()]
    closed = [f"/home/ada/src/project{n}" for n in range(CLOSED_PROJECTS)]
    searches.append((f"two words, {CLOSED_PROJECTS}/100 projects closed", searches[0][1], gated, closed))
    searches.append((f"prefix, {CLOSED_PROJECTS}/100 projects closed", searches[2][1], gated, closed))
    ids_of = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    for kind, query, on, shut in searches:
        arguments = {"query": query}
        answer = await call(on, "rousseau_search_sessions", arguments)()
        assert not answer.is_error, answer.text
        parts: dict[str, list[float]] = {}
        through, plain = await paired(
            call(on, "rousseau_search_sessions", arguments),
            direct_search(path, query, closed=shut, parts=parts),
            repeat,
        )
        name = f"search, {kind} ({query}, {len(answer.data['hits'])} hits)"
        exact = exact_search(path, query, closed=shut)
        rank_all = median_ms(exact, max(3, repeat // 10))
        exact_rowids = list(exact())
        by_rowid = dict(
            ids_of.execute(
                "SELECT rowid, id FROM sessions WHERE rowid IN (SELECT value FROM json_each(?))",
                (json.dumps(exact_rowids),),
            )
        )
        exact_ids = [by_rowid[rowid] for rowid in exact_rowids]
        ids = [hit["id"] for hit in answer.data["hits"]]
        shared = f"{len(set(ids) & set(exact_ids))}/{len(exact_ids)}" + ("" if ids == exact_ids else " (order differs)")
        rows.append(row(name, through, plain, rank_all_ms=rank_all, matches=matches(path, query), exact_hits=shared))
        breakdown[name] = {part: statistics.median(times) for part, times in parts.items()}
    # The gate's first call on a store: each distinct place judged, the sessions kept back worked out whole.
    colds = []
    for _ in range(max(3, repeat // 10)):
        for _key, (_inode, reader) in list(store._readers.items()):
            reader._gates.clear()  # as if this were the first call since the server started
        started = time.perf_counter()
        await call(gated, "rousseau_search_sessions", {"query": searches[0][1]})()
        colds.append((time.perf_counter() - started) * 1000)
    places = sqlite3.connect(path).execute("SELECT count(DISTINCT path) FROM session_paths").fetchone()[0]
    rows.append(
        row(f"search, {CLOSED_PROJECTS}/100 closed, first call ({places:,} places judged)", colds, colds)
    )
    # The next call after an import that added a session (a new place, in a closed project, and a subagent of it):
    # the kept-back sessions followed from the store's place log, not worked out again (store/kept.py).
    followed = []
    added = []
    writer = store.open_for_writing(path)
    try:
        for number in range(max(3, repeat // 2)):
            parent = Session(agent="claude-code", id=f"bench-follow-{number}", cwd=f"{closed[0]}/new-{number}",
                             created_at=_moment(number),
                             messages=[Message(key="m", role="user", blocks=[{"type": "text", "text": "zzq"}])])
            child = Session(agent="claude-code", id=f"bench-follow-{number}:sub", parent_id=parent.id,
                            created_at=_moment(number))
            store.upsert(writer, parent)
            store.upsert(writer, child)
            added += [parent.id, child.id]
            started = time.perf_counter()
            answer = await call(gated, "rousseau_search_sessions", {"query": searches[0][1]})()
            followed.append((time.perf_counter() - started) * 1000)
            assert not answer.is_error
    finally:
        # The cached store is left as it was (the log's entries and the change count too, so the next run follows).
        changes = writer.execute("SELECT value FROM meta WHERE key = 'gate_changes'").fetchone()
        writer.execute("BEGIN")
        writer.execute("DELETE FROM sessions WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(added),))
        writer.execute("DELETE FROM place_log WHERE path LIKE ?", (f"{closed[0]}/new-%",))
        if changes is None:
            writer.execute("DELETE FROM meta WHERE key = 'gate_changes'")
        else:
            writer.execute("UPDATE meta SET value = ? WHERE key = 'gate_changes'", changes)
        store.Writes(writer).commit()  # COMMIT, the removals counted out of the search's lists first
        writer.close()
    rows.append(row("search, 10/100 closed, next call after an import added a session (followed)", followed, followed))
    through, plain = await paired(call(gateway, "rousseau_list_sessions", {}), direct_list(path), repeat)
    rows.append(row("list (20 newest)", through, plain))
    through, plain = await paired(
        call(gateway, "rousseau_read_session", {"id": LONG_SESSION}), direct_read(path, LONG_SESSION), repeat
    )
    rows.append(row("read (1,000 messages)", through, plain))
    return rows, breakdown


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
        # Single words common enough to have a list of their own (store/impact.py), and a shorter prefix.
        "common word": words[0],
        "common word, 30th": words[30],
        "2-letter prefix": f"{words[5][:2]}*",
    }


def cost_per_match(path: Path, repeat: int) -> list[tuple[str, int, float]]:
    """What ranking every match costs as matches grow: single words and prefixes of growing frequency, through the
    search's own first statement (bm25() over every match, the best 200 kept), direct. Exact ranking is linear in
    the matches; this says where a query stops fitting a time budget."""
    connection = _plain(path)
    connection.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, messages_fts, row)")
    by_doc = [term for (term,) in connection.execute("SELECT term FROM temp.vocab ORDER BY doc DESC LIMIT 400")]
    long = [term for term in by_doc if len(term) > 5]
    queries = [long[300], long[120], long[30], f"{long[120][:5]}*", f"{long[120][:4]}*", long[1]]
    found = []
    for query in queries:
        count = connection.execute(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (query,)
        ).fetchone()[0]
        ms = median_ms(lambda query=query: connection.execute(store.reads._BEST_MESSAGES, (query, 200)).fetchall(), repeat)
        found.append((query, count, ms))
    return found


def write_claude_code_files(projects: Path, messages: int, seed: int) -> None:
    """Claude Code JSONL files of 200 messages each (user and streamed assistant lines, as Claude Code writes them)."""
    rng = random.Random(seed + 1)
    writer = Writer(rng)
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


def bench_import(messages: int, seed: int, repeat: int = 1) -> dict[str, float]:
    """Claude Code JSONL files written to a temporary folder once, then imported `repeat` times, each into a fresh
    store (medians of the time taken and of the process's CPU time, which other work on the machine disturbs less);
    after the last, the same files imported again (all unchanged: only their signatures read) and,
    after touching them all, read again (every message an upsert of an existing row)."""
    from gateway_sessions.importing import import_agent

    folder = Path(tempfile.mkdtemp(prefix="bench-sessions-import-"))
    try:
        projects = folder / "projects"
        write_claude_code_files(projects, messages, seed)
        firsts, cpus = [], []
        for run in range(repeat):
            path = folder / f"import-{run}.db"
            connection = store.open_for_writing(path)
            started, cpu = time.perf_counter(), time.process_time()
            report = import_agent(connection, "claude-code", projects)
            firsts.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
            if run < repeat - 1:
                connection.close()
                for leftover in folder.glob(f"import-{run}.db*"):
                    leftover.unlink()
        started = time.perf_counter()
        again = import_agent(connection, "claude-code", projects)
        unchanged = time.perf_counter() - started
        for source in projects.rglob("*.jsonl"):
            os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 1_000_000))
        started = time.perf_counter()
        touched = import_agent(connection, "claude-code", projects)
        reread = time.perf_counter() - started
        connection.close()
        elapsed = statistics.median(firsts)
        return {
            "mask_us_per_message": mask_cost(projects),
            "mask_us_per_2kb_text": mask_cost_2kb(seed),
            "messages": report.messages,
            "runs": repeat,
            "seconds": round(elapsed, 2),
            "seconds_each": [round(seconds, 2) for seconds in firsts],
            "messages_per_second": round(report.messages / elapsed),
            "cpu_seconds": round(statistics.median(cpus), 2),
            "messages_per_cpu_second": round(report.messages / statistics.median(cpus)),
            "unchanged_files": again.files_unchanged,
            "reimport_unchanged_seconds": round(unchanged, 3),
            "reimport_touched_files": touched.files_read,
            "reimport_touched_seconds": round(reread, 2),
            "reimport_touched_messages_per_second": round(touched.messages / reread),
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def mask_cost(projects: Path) -> float:
    """What masking one imported message costs (the words of the benchmark's messages, microseconds)."""
    from gateway.privacy import mask

    texts = []
    for source in sorted(projects.rglob("*.jsonl"))[:50]:
        for line in source.read_text().splitlines():
            content = json.loads(line)["message"]["content"]
            texts.append(content if isinstance(content, str) else content[0]["text"])
    started = time.process_time()
    for text in texts:
        mask(text)
    return round((time.process_time() - started) / len(texts) * 1e6, 1)


def mask_cost_2kb(seed: int) -> float:
    """mask() on a 2 KB message of ordinary words holding a few numbers, a date and a link (microseconds)."""
    from gateway.privacy import mask

    writer = Writer(random.Random(seed + 2))
    texts = []
    for n in range(200):
        words = writer.text(300, 300)[:1900]
        texts.append(
            f"{words} on 2026-03-0{n % 9 + 1} at 10:30, ticket 48{n:03d}, see https://example.org/t/{n}"
        )
    started = time.process_time()
    for text in texts:
        mask(text)
    return round((time.process_time() - started) / len(texts) * 1e6, 1)


def impact_size(path: Path) -> dict[str, float]:
    """What the search's lists of very common words take in the store (rows, and MB by dbstat)."""
    connection = _plain(path)
    count = {
        table: connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        for table in ("impact_phrases", "impact_entries", "impact_classes")
    }
    pages = connection.execute("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE 'impact%'").fetchone()[0]
    return {
        "phrases": count["impact_phrases"],
        "entries": count["impact_entries"],
        "classes": count["impact_classes"],
        "mb": round(pages / 1e6, 1),
    }


def without_impact_lists() -> None:
    """Imports as before the lists (for --without-impact): nothing kept up, nothing worked out at commit."""
    from gateway_sessions.store import impact

    impact.Maintainer.changed = lambda self, new_after: None
    impact.Maintainer.finish = lambda self: None


def print_import(imported: dict[str, float]) -> None:
    print(
        f"import from Claude Code JSONL: {imported['messages']:,} messages in {imported['seconds']} s, "
        f"{imported['messages_per_second']:,} messages/s (median of {imported['runs']}: "
        f"{', '.join(str(s) for s in imported['seconds_each'])} s; CPU {imported['cpu_seconds']} s, "
        f"{imported['messages_per_cpu_second']:,} messages per CPU second); again, unchanged: "
        f"{imported['reimport_unchanged_seconds']} s; again, all touched (read again, upserted): "
        f"{imported['reimport_touched_seconds']} s, {imported['reimport_touched_messages_per_second']:,} messages/s"
    )
    print(
        f"mask(): {imported['mask_us_per_message']} µs a benchmark message, {imported['mask_us_per_2kb_text']} µs "
        "a 2 KB message (CPU time)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--import-messages", type=int, default=100_000, help="size of the import benchmark")
    parser.add_argument(
        "--import-repeat", type=int, default=3, help="imports into a fresh store (median reported)"
    )
    parser.add_argument(
        "--only",
        choices=["all", "import", "generate", "search"],
        default="all",
        help="`import`: only the import benchmark, no store; `generate`: only make the store (cached); `search`: "
        "the tools on the store, not the import",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=RESULTS,
        help="folder of the generated stores, kept for the next runs (default bench/results, git-ignored)",
    )
    parser.add_argument(
        "--without-impact",
        action="store_true",
        help="import without keeping the search's lists of common words (the import speed before them)",
    )
    options = parser.parse_args()
    if options.without_impact:
        without_impact_lists()

    RESULTS.mkdir(parents=True, exist_ok=True)
    options.cache.mkdir(parents=True, exist_ok=True)
    if options.only == "import":
        imported = bench_import(options.import_messages, options.seed, options.import_repeat)
        print_import(imported)
        out = RESULTS / f"bench-sessions-import-{time.strftime('%Y%m%d-%H%M%S')}.json"
        out.write_text(json.dumps({"import": imported}, indent=1))
        print(f"written to {out.relative_to(ROOT)}")
        return
    path = cached_store(options.cache, options.sessions, options.messages, options.seed)
    if options.only == "generate":
        return
    # What `gateway sessions import` does to a store of an earlier version: its search index rebuilt (said, and timed).
    store.open_for_writing(path, say=lambda sentence: print(sentence, file=sys.stderr)).close()
    stored_messages = sqlite3.connect(path).execute("SELECT count(*) FROM messages").fetchone()[0]

    import gateway_sessions

    from gateway.testing import make_gateway

    home = Path(tempfile.mkdtemp(prefix="bench-sessions-home-"))
    gated_home = Path(tempfile.mkdtemp(prefix="bench-sessions-gated-"))
    config = {"plugins": {"sessions": {"store": str(path)}}}
    gateway = make_gateway(plugins=[gateway_sessions], config=config, home=home)
    gated = make_gateway(
        plugins=[gateway_sessions], config=config, projects=closed_manifest(), home=gated_home
    )
    results: dict[str, object] = {
        "store": path.name,
        "sessions": options.sessions,
        "messages": stored_messages,
        "repeat": options.repeat,
        "overfetch": [store.OVERFETCH, store.OVERFETCH_AT_LEAST],
        "through": "gateway.testing.make_gateway(...).call(...)",
    }
    rows, breakdown = anyio.run(measure, gateway, gated, path, options.repeat)
    print(f"{stored_messages:,} messages in {options.sessions:,} sessions; medians of {options.repeat} runs")
    width = max(len(r["name"]) for r in rows)
    print(
        f"{'':{width}} {'gateway ms':>10} {'p95 ms':>8} {'direct ms':>9} {'ratio':>5} {'rank-all ms':>11} "
        f"{'matches':>9} {'exact hits':>10}"
    )
    for r in rows:
        every = f"{r['rank_all_ms']:11.2f}" if "rank_all_ms" in r else f"{'':11}"
        count = f"{r['matches']:9,}" if "matches" in r else f"{'':9}"
        print(
            f"{r['name']:{width}} {r['gateway_ms']:10.2f} {r['gateway_p95_ms']:8.2f} {r['direct_ms']:9.2f} "
            f"{r['gateway_ms'] / r['direct_ms']:5.2f} {every} {count} {r.get('exact_hits', ''):>10}"
        )
        results[r["name"]] = {
            "ratio": round(r["gateway_ms"] / r["direct_ms"], 2),
            **{key: round(value, 3) if isinstance(value, float) else value for key, value in r.items() if key != "name"},
        }
    print(
        "p95: of the gateway's times; rank-all: FTS5's own ORDER BY rank over every match, walked until 20 sessions "
        "(direct); matches: the messages the query matches; exact hits: hits among the exact BM25 best 20 sessions"
    )
    print("where the direct search's time goes (medians, ms):")
    for name, parts in breakdown.items():
        print(f"  {name}: " + ", ".join(f"{part} {ms:.2f}" for part, ms in parts.items()))
        results[name]["parts_ms"] = {part: round(ms, 3) for part, ms in parts.items()}
    scaling = cost_per_match(path, max(3, options.repeat // 3))
    print("ranking every match, as matches grow (direct, the best 200 by bm25(), medians):")
    for query, count, ms in scaling:
        print(f"  {query:<16} {count:>9,} matches {ms:9.2f} ms  {ms * 1000 / max(count, 1):5.2f} µs a match")
    results["cost_per_match"] = [{"query": q, "matches": n, "ms": round(ms, 2)} for q, n, ms in scaling]
    size = path.stat().st_size
    results["bytes_per_message"] = round(size / stored_messages)
    print(f"store size: {size / 1e6:.0f} MB, {size / stored_messages:.0f} bytes per message")
    results["impact"] = impact_size(path)
    print(
        "lists of very common words and prefixes (store/impact.py): {phrases:,} phrases, {entries:,} messages listed, "
        "{classes:,} classes, {mb} MB".format(**results["impact"])
    )
    if options.only == "all":
        imported = bench_import(options.import_messages, options.seed, options.import_repeat)
        results["import"] = imported
        print_import(imported)
    out = RESULTS / f"bench-sessions-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(results, indent=1))
    print(f"written to {out.relative_to(ROOT)}")
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(gated_home, ignore_errors=True)


if __name__ == "__main__":
    main()
