"""A call never answers from a tools lock older than the one saved before it: the config source stamps the lock with
the config and the manifest, one set of file notifications standing in for the three stats while their folders are
quiet. Played through a real `gateway serve`: after enough calls that the notifications are trusted, a lock that pins
nothing (so the probe's tool is withheld) and no lock (so it is given) take turns, each change followed at once by a
call. The lock saved in place, by rename, removed and written again, and as a hard link to a file elsewhere (whose
edits make no event beside the config: stat'ed every call)."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from gateway.testing import serve_client, write_config
from tests.adversarial.gate_probe import CANARY, install_probe

PINS_NOTHING = '{"version": 1, "plugins": {}}\n'


@pytest.fixture
def env(tmp_path):
    return install_probe(tmp_path / "site")


def lock_of(gateway_home: Path) -> Path:
    write_config(gateway_home, {"gateway": {"plugins": ["probe"]}})
    return gateway_home / ".config" / "gateway" / "tools.lock"


def served(home: Path, env: dict[str, str], pin) -> list[tuple[bool, str, bool]]:
    """Warm calls, then 12 changes of the lock each followed at once by a call: (withheld, answer, error) each."""
    seen: list[tuple[bool, str, bool]] = []

    async def session():
        async with serve_client(home, extra_env=env) as client:
            for _ in range(30):  # the stamps matched again and again: the folders are trusted quiet by now
                first = await client.call_tool("probe_path", {"path": "/srv/notes.md"})
                assert not first.is_error and CANARY in first.content[0].text
            for number in range(12):
                withheld = number % 2 == 0
                pin(withheld)
                answer = await client.call_tool("probe_path", {"path": "/srv/notes.md"})
                seen.append((withheld, answer.content[0].text, bool(answer.is_error)))

    anyio.run(session)
    return seen


def check(seen: list[tuple[bool, str, bool]]) -> None:
    for withheld, text, error in seen:
        if withheld:
            assert error and "withheld" in text and CANARY not in text, text
        else:
            assert not error and CANARY in text, text


def test_a_lock_saved_in_place_just_before_a_call_is_the_one_it_answers_from(gateway_home, env):
    lock = lock_of(gateway_home)

    def pin(withheld: bool) -> None:
        if withheld:
            lock.write_text(PINS_NOTHING)
        else:
            lock.unlink()

    check(served(gateway_home, env, pin))


def test_a_lock_saved_by_rename_just_before_a_call_is_the_one_it_answers_from(gateway_home, env):
    lock = lock_of(gateway_home)

    def pin(withheld: bool) -> None:
        if withheld:
            aside = lock.with_name(".tools.lock.tmp")
            aside.write_text(PINS_NOTHING)
            os.replace(aside, lock)
        else:
            os.replace(lock, lock.with_name("tools.lock.old"))  # renamed away: no lock any more

    check(served(gateway_home, env, pin))


def test_a_lock_hard_linked_to_a_file_elsewhere_is_read_again_when_that_file_changes(gateway_home, env, tmp_path):
    # An edit through the other name makes no event beside the config: such a lock is stat'ed on every call. An
    # empty lock file is one `gateway lock` did not write: it withholds everything too, so "given" is a lock that
    # pins the probe, written by `gateway lock` itself.
    lock = lock_of(gateway_home)
    elsewhere = tmp_path / "dotfiles" / "tools.lock"
    elsewhere.parent.mkdir()
    pinned = pinned_lock(gateway_home, env)
    elsewhere.write_text(pinned)
    os.link(elsewhere, lock)

    def pin(withheld: bool) -> None:
        elsewhere.write_text(PINS_NOTHING if withheld else pinned)

    check(served(gateway_home, env, pin))


def pinned_lock(home: Path, env: dict[str, str]) -> str:
    """The lock `gateway lock` writes for the probe as installed (then taken away again)."""
    import subprocess

    from gateway.api.context import home_environment
    from tests.forkserver import gateway_command

    done = subprocess.run(gateway_command("lock"), capture_output=True, text=True, timeout=120,
                          env={"PATH": os.environ.get("PATH", ""), **home_environment(home), **env})
    assert done.returncode == 0, done.stderr
    lock = home / ".config" / "gateway" / "tools.lock"
    text = lock.read_text()
    lock.unlink()
    return text
