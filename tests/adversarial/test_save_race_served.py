"""A config or manifest absent for a moment while it is saved never opens a closed session, through `gateway serve`.

`git checkout` of a dotfiles repository unlinks a file, then creates it; Emacs' first save renames the file to a
backup, then writes a new one. The attack: a thread does both, in a loop, to the manifest (the default one, which
the config does not name) and to the config (which names a manifest elsewhere: without it the defaults would
read no projects at all), while a host asks for a closed session's canary. Never given; the gate serves again
once the files hold still.
"""

from __future__ import annotations

import json
import random
import threading
import time
from pathlib import Path

import anyio
import pytest
from gateway_sessions import store
from gateway_sessions.importing import import_agent

from gateway.testing import folders_of, serve_client, write_config

CANARY = "quillwortcanary"
OPEN_WORD = "larchgrove"
MANIFEST = '[[project]]\nid = "vault"\nname = "Vault"\npaths = ["{vault}"]\n\n[[project]]\nid = "orchard"\nai = true\npaths = ["{orchard}"]\n'


def _transcript(home: Path, session_id: str, text: str, cwd: Path) -> None:
    line = {"type": "user", "uuid": f"{session_id}-1", "sessionId": session_id, "cwd": str(cwd),
            "timestamp": "2026-03-02T09:01:00.000Z", "message": {"role": "user", "content": text}}
    path = home / ".claude" / "projects" / "-home-ada-src" / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(line) + "\n")


@pytest.fixture
def home(gateway_home):
    for name in ("vault", "orchard"):
        (gateway_home / "src" / name).mkdir(parents=True)
    _transcript(gateway_home, "closed-vault", f"the {CANARY} ledger", gateway_home / "src" / "vault")
    _transcript(gateway_home, "open-orchard", f"prune the {OPEN_WORD} rows", gateway_home / "src" / "orchard")
    connection = store.open_for_writing(store.default_path(folders_of(gateway_home).for_plugin("sessions").data))
    try:
        assert not import_agent(connection, "claude-code").failed
    finally:
        connection.close()
    return gateway_home


def _manifest_text(home: Path) -> str:
    return MANIFEST.format(vault=home / "src" / "vault", orchard=home / "src" / "orchard")


def _saver(path: Path, text: str, stop: threading.Event, saves: list[int]) -> None:
    """Save `path` again and again, as a checkout (unlink, create, write) and as Emacs (rename, write) do."""
    rng = random.Random(19)
    while not stop.is_set() and saves[0] < 400:
        if rng.random() < 0.5:
            path.unlink()
            time.sleep(rng.uniform(0.0005, 0.01))
            with open(path, "w") as file:
                file.write(text)
        else:
            path.rename(path.with_name(path.name + "~"))
            time.sleep(rng.uniform(0.0005, 0.01))
            path.write_text(text)
        saves[0] += 1
        time.sleep(rng.uniform(0.005, 0.05))


def _text(result) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content) + json.dumps(
        result.structured_content or {})


def _race(home: Path, saved: Path, text: str) -> tuple[int, int, dict[str, int]]:
    stop, saves = threading.Event(), [0]
    outcomes = {"refused": 0, "gate in error": 0, "not found": 0}
    leaked: list[str] = []

    async def session():
        async with serve_client(home) as client:
            opened = await client.call_tool("rousseau_search_sessions", {"query": OPEN_WORD})
            assert "open-orchard" in _text(opened)
            thread = threading.Thread(target=_saver, args=(saved, text, stop, saves))
            thread.start()
            try:
                deadline = time.monotonic() + 8
                for n in range(600):
                    if time.monotonic() > deadline:
                        break
                    if n % 2:
                        answer = _text(await client.call_tool("rousseau_read_session", {"id": "closed-vault"}))
                    else:
                        answer = _text(await client.call_tool("rousseau_search_sessions", {"query": CANARY}))
                    if CANARY in answer:
                        leaked.append(answer)
                    elif "configuration is unusable" in answer:
                        outcomes["gate in error"] += 1
                    elif "closed to AI agents" in answer or "left out" in answer:
                        outcomes["refused"] += 1
                    else:
                        outcomes["not found"] += 1
            finally:
                stop.set()
                thread.join()
            saved.write_text(text)
            await anyio.sleep(0.1)
            # Once the saves are done the gate serves again: the open session is given, the closed one not.
            assert "open-orchard" in _text(await client.call_tool("rousseau_search_sessions", {"query": OPEN_WORD}))
            assert CANARY not in _text(await client.call_tool("rousseau_read_session", {"id": "closed-vault"}))

    anyio.run(session)
    assert leaked == [], f"{len(leaked)} answers gave the closed session"
    return saves[0], sum(outcomes.values()), outcomes


def test_the_manifest_saved_by_checkout_or_rename_never_opens_the_closed_session(home):
    manifest = home / ".config" / "gateway" / "projects.toml"
    write_config(home, {"gateway": {"plugins": ["sessions"]}})  # the default manifest, not named
    manifest.write_text(_manifest_text(home))
    saves, calls, outcomes = _race(home, manifest, _manifest_text(home))
    print(f"manifest save race: {calls} calls during {saves} saves: {outcomes}")
    assert saves > 10 and calls > 30


def test_the_config_saved_by_checkout_or_rename_never_opens_the_closed_session(home, tmp_path):
    elsewhere = tmp_path / "dotfiles" / "projects.toml"
    elsewhere.parent.mkdir()
    elsewhere.write_text(_manifest_text(home))
    config = write_config(home, {"gateway": {"plugins": ["sessions"]}, "access": {"projects": str(elsewhere)}})
    saves, calls, outcomes = _race(home, config, config.read_text())
    print(f"config save race: {calls} calls during {saves} saves: {outcomes}")
    assert saves > 10 and calls > 30
