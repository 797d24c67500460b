"""`gateway mail index` with nothing new is answered from what the last run kept, the same line as the full
command; any change to what the refresh looks at (a folder's mail, a folder, the index, the config, the shield)
runs the full command again. Each run is a real `gateway` process, as a timer runs it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gateway_mail.mail import sample

from gateway.testing import write_config

_SECONDS = re.compile(r"\(\d+\.\d s\)")


def _index(home: Path) -> tuple[str, bool]:
    """The command's output (its time left out), and whether it was answered without loading the command line's
    modules (python -X importtime names each module imported)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "gateway", "mail", "index"],
                          capture_output=True, text=True, env=dict(os.environ), timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return _SECONDS.sub("(_ s)", done.stdout), "gateway.commands.cli" not in done.stderr


def _age(home: Path) -> None:
    """What changed in the last two seconds (the mail, the index, the config) given a time ten seconds ago, as if
    time had passed: a time that recent is not trusted (it may change again unseen). What is older keeps its time."""
    now = time.time()
    for here, folders, files in os.walk(home):
        for path in [Path(here) / name for name in [*folders, *files]]:
            if path.stat().st_mtime > now - 2:
                os.utime(path, (now - 10, now - 10))


def _aged_run(home: Path) -> tuple[str, bool]:
    _age(home)
    return _index(home)


@pytest.fixture
def home(gateway_home: Path) -> Path:
    mail = gateway_home / "Mail"
    for number in range(3):
        sample.deliver(mail / "personal" / "INBOX", sample.message(subject=f"Budget note {number}"))
    sample.deliver(mail / "personal" / ".Archive", sample.message(subject="Old budget"))
    write_config(gateway_home, {"gateway": {"plugins": ["mail"]}, "plugins": {"mail": {
        "accounts": [{"name": "personal", "maildir": "~/Mail/personal"}]}}}, projects=[])
    return gateway_home


def test_nothing_new_is_said_again_exactly_and_each_change_runs_the_full_command(home: Path) -> None:
    first, lean = _aged_run(home)
    assert first.startswith("4 read, 0 moved or reflagged, 0 removed, 0 unreadable") and not lean
    full, lean = _aged_run(home)  # nothing new: the full command, which keeps its answer
    assert full == ("0 read, 0 moved or reflagged, 0 removed, 0 unreadable (read by their envelope or not opened; "
                    "gateway doctor names them); 4 messages indexed (_ s).\n") and not lean
    again, lean = _index(home)
    assert again == full and lean

    # A message delivered: the folder's new/ changed, the full command reads it.
    sample.deliver(home / "Mail" / "personal" / "INBOX", sample.message(subject="Budget note 3"))
    read, lean = _aged_run(home)
    assert read.startswith("1 read, ") and "5 messages indexed" in read and not lean
    _aged_run(home)  # nothing new again, kept again
    assert _index(home)[1]

    # A folder made: the root's directory changed.
    sample.deliver(home / "Mail" / "personal" / ".Trips", sample.message(subject="Trip budget"))
    read, lean = _aged_run(home)
    assert read.startswith("1 read, ") and "6 messages indexed" in read and not lean
    _aged_run(home)
    assert _index(home)[1]

    # A message's flags changed (a rename in cur/).
    cur = home / "Mail" / "personal" / "INBOX" / "cur"
    name = next(p for p in cur.iterdir())
    name.rename(cur / (name.name.split(":2,")[0] + ":2,FS"))
    moved, lean = _aged_run(home)
    assert moved.startswith("0 read, 1 moved or reflagged") and not lean
    _aged_run(home)
    assert _index(home)[1]

    # The config changed: another account.
    sample.deliver(home / "Mail" / "work" / "INBOX", sample.message(subject="Work budget"))
    write_config(home, {"gateway": {"plugins": ["mail"]}, "plugins": {"mail": {
        "accounts": [{"name": "personal", "maildir": "~/Mail/personal"},
                     {"name": "work", "maildir": "~/Mail/work"}]}}}, projects=[])
    read, lean = _aged_run(home)
    assert read.startswith("1 read, ") and "7 messages indexed" in read and not lean
    full, lean = _aged_run(home)
    assert not lean
    assert _index(home) == (full, True)

    # The index changed under it (another process's refresh, or the file removed): the full command.
    (home / ".cache" / "gateway" / "plugins" / "mail" / "mail-index.sqlite").unlink()
    read, lean = _index(home)
    assert read.startswith("7 read, ") and not lean


def test_a_folder_changed_within_its_time_granularity_is_not_kept(home: Path) -> None:
    _aged_run(home)
    _age(home)
    os.utime(home / "Mail" / "personal" / "INBOX" / "new")  # now: a delivery may follow unseen in the same tick
    output, lean = _index(home)
    assert output.startswith("0 read, ") and not lean
    assert not _index(home)[1]  # not kept: the full command again


def test_with_the_shield_on_nothing_is_kept(home: Path) -> None:
    write_config(home, {"gateway": {"plugins": ["mail"]}, "plugins": {"mail": {
        "accounts": [{"name": "personal", "maildir": "~/Mail/personal", "addresses": ["pat@example.org"]}],
        "shielded": ["pat@example.org"]}}}, projects=[])
    _aged_run(home)
    first, lean = _aged_run(home)
    assert "AI shield:" in first and not lean
    second, lean = _index(home)
    assert second == first and not lean
