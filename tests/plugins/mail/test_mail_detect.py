"""`gateway setup --detect` finds the person's own mail, calendars, tasks and contacts from the configs of the tools
they already run, written here in those tools' documented formats; khal, todoman and khard read the same configs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from gateway.commands.cli import main
from gateway.testing import folders_of

MBSYNCRC = """\
# Two accounts, the layout most people have (SubFolders Verbatim).
IMAPAccount work
Host imap.work.example.com
User ada@work.example.com
PassCmd "pass show work"
SSLType IMAPS

IMAPStore work-remote
Account work

MaildirStore work-local
SubFolders Verbatim
Path ~/Mail/work/
Inbox ~/Mail/work/INBOX

Channel work
Far :work-remote:
Near :work-local:
Patterns *
Create Both

IMAPAccount personal
Host imap.example.net
User ada@example.net
SSLType IMAPS

IMAPStore personal-remote
Account personal

MaildirStore personal-local
Path ~/Mail/personal/
Inbox ~/Mail/personal/INBOX
SubFolders Verbatim

Channel personal
Far :personal-remote:
Near :personal-local:
"""

OFFLINEIMAPRC = """\
[general]
accounts = club

[Account club]
localrepository = club-local
remoterepository = club-remote

[Repository club-local]
type = Maildir
localfolders = ~/Maildir/club

[Repository club-remote]
type = IMAP
remotehost = imap.club.example.org
remoteuser = ada@club.example.org
"""

NOTMUCH = """\
[database]
path=Mail

[user]
name=Ada Example
primary_email=ada@example.net
other_email=ada@work.example.com;

[new]
tags=unread;inbox;
"""

VDIRSYNCER = """\
[general]
status_path = "~/.vdirsyncer/status/"

[pair contacts]
a = "contacts_local"
b = "contacts_remote"
collections = ["from a", "from b"]

[storage contacts_local]
type = "filesystem"
path = "~/.local/share/vdirsyncer/contacts/"
fileext = ".vcf"

[storage contacts_remote]
type = "carddav"
url = "https://dav.example.org/"

[storage calendars_local]
type = "filesystem"
path = "~/.local/share/vdirsyncer/calendars/"
fileext = ".ics"
"""

KHAL = """\
[calendars]

[[work]]
path = ~/.local/share/vdirsyncer/calendars/work
color = dark blue

[[home]]
path = ~/.local/share/vdirsyncer/calendars/home

[locale]
timeformat = %H:%M
dateformat = %Y-%m-%d
longdateformat = %Y-%m-%d
datetimeformat = %Y-%m-%d %H:%M
longdatetimeformat = %Y-%m-%d %H:%M
"""

TODOMAN = """\
path = "~/.local/share/vdirsyncer/tasks/*"
date_format = "%Y-%m-%d"
time_format = "%H:%M"
default_list = "errands"
"""

KHARD = """\
[addressbooks]
[[family]]
path = ~/.local/share/vdirsyncer/contacts/family/
[[friends]]
path = ~/.local/share/vdirsyncer/contacts/friends/

[general]
debug = no
default_action = list
editor = vim
merge_editor = vimdiff

[contact table]
display = first_name
"""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def person(gateway_home: Path) -> Path:
    """A home with the configs of mbsync, offlineimap, notmuch, vdirsyncer, khal, todoman and khard, and the
    folders they name (empty collections, as after a first sync)."""
    home = gateway_home
    config = home / ".config"
    _write(home / ".mbsyncrc", MBSYNCRC)
    _write(config / "offlineimap" / "config", OFFLINEIMAPRC)
    _write(home / ".notmuch-config", NOTMUCH)
    _write(config / "vdirsyncer" / "config", VDIRSYNCER)
    _write(config / "khal" / "config", KHAL)
    _write(config / "todoman" / "config.py", TODOMAN)
    _write(config / "khard" / "khard.conf", KHARD)
    for folder in ("Mail/work/INBOX", "Mail/personal/INBOX", "Maildir/club/INBOX"):
        for part in ("cur", "new", "tmp"):
            (home / folder / part).mkdir(parents=True, exist_ok=True)
    share = home / ".local/share/vdirsyncer"
    for folder in ("calendars/work", "calendars/home", "tasks/errands", "tasks/work", "contacts/family",
                   "contacts/friends"):
        (share / folder).mkdir(parents=True, exist_ok=True)
    return home


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _printed_config(output: str) -> dict:
    text = output[output.index("[gateway]"):] if "[gateway]" in output else output
    return tomllib.loads(text)


def test_detect_prints_a_config_that_reads_every_tools_files(person: Path) -> None:
    result = _run("setup", "--detect")
    assert result.exit_code == 0, result.output
    config = _printed_config(result.stdout)
    mail = config["plugins"]["mail"]
    accounts = {a["name"]: a for a in mail["accounts"]}
    assert set(accounts) == {"work", "personal", "club"}  # notmuch's root holds mbsync's: not an account again
    assert accounts["work"] == {"name": "work", "maildir": "~/Mail/work", "addresses": ["ada@work.example.com"]}
    assert accounts["club"]["maildir"] == "~/Maildir/club" and accounts["club"]["addresses"] == ["ada@club.example.org"]
    assert mail["calendars"] == "~/.local/share/vdirsyncer/calendars"  # khal's, before vdirsyncer's
    assert mail["tasks"] == "~/.local/share/vdirsyncer/tasks" and mail["default_list"] == "errands"
    assert mail["contacts"] == "~/.local/share/vdirsyncer/contacts"
    assert "mail" in config["gateway"]["plugins"]
    # Each finding says where it came from.
    assert "mbsync (~/.mbsyncrc): mail account work at ~/Mail/work\n" in result.stderr
    assert "todoman (~/.config/todoman/config.py): default list errands" in result.stderr
    # Printed only: nothing written.
    assert not (folders_of(person).config / "config.toml").exists()


def test_the_detected_config_is_one_the_gateway_loads_and_serves(person: Path) -> None:
    assert _run("setup", "--detect", "--write").exit_code == 0
    path = folders_of(person).config / "config.toml"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert "unknown key" not in _run("doctor").output
    listed = {line.split(" ")[0].rstrip(":") for line in _run("tools").stdout.splitlines()}
    assert {"search_mail", "add_task", "agenda", "search_contacts"} <= listed
    made = _run("call", "add_task", '{"title": "Buy bulbs"}')
    assert made.exit_code == 0, made.output
    assert list((person / ".local/share/vdirsyncer/tasks/errands").glob("*.ics"))  # todoman's default list


def test_write_merges_into_an_existing_config_keeping_comments_and_the_persons_keys(person: Path) -> None:
    path = folders_of(person).config / "config.toml"
    _write(path, '# my own notes about this file\n[gateway]\nplugins = ["sessions"]  # just sessions for now\n\n'
                 '[plugins.mail]\ntasks = "~/todo"   # where I really keep them\n')
    result = _run("setup", "--detect", "--write")
    assert result.exit_code == 0, result.output
    text = path.read_text()
    assert "# my own notes about this file" in text and "# where I really keep them" in text
    config = tomllib.loads(text)
    assert config["gateway"]["plugins"] == ["sessions", "mail"]
    assert config["plugins"]["mail"]["tasks"] == "~/todo"  # the person's key is never changed...
    assert "[plugins.mail] tasks: yours kept" in result.stderr  # ...and the difference is said
    assert config["plugins"]["mail"]["calendars"] == "~/.local/share/vdirsyncer/calendars"


def test_a_broken_config_is_left_as_it_is(person: Path) -> None:
    path = folders_of(person).config / "config.toml"
    _write(path, "[gateway\nplugins = [")
    result = _run("setup", "--detect", "--write")
    assert result.exit_code != 0 and "nothing was changed" in result.output
    assert path.read_text() == "[gateway\nplugins = ["


def test_with_no_tools_configured_it_says_so(gateway_home: Path) -> None:
    result = _run("setup", "--detect")
    assert result.exit_code == 0
    assert "no mbsync, offlineimap, notmuch, mu, vdirsyncer, khal, todoman or khard config found" in result.stderr
    assert "Nothing to add" in result.stderr


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    assert found, f"{name} is installed by the test extra (scripts/setup.sh)"
    return found


def test_the_real_tools_read_the_configs_detection_read(person: Path) -> None:
    """khal, todoman and khard (from the test extra) accept the very configs the detection read, and see the
    collections it found: the formats above are theirs, not ours."""
    env = {**os.environ, "HOME": str(person), "XDG_CONFIG_HOME": str(person / ".config")}
    khal = subprocess.run([_tool("khal"), "printcalendars"], capture_output=True, text=True, env=env, timeout=60)
    assert khal.returncode == 0, khal.stderr
    assert {"work", "home"} <= set(khal.stdout.split())
    todo = subprocess.run([_tool("todo"), "list"], capture_output=True, text=True, env=env, timeout=60)
    assert todo.returncode == 0, todo.stderr
    khard = subprocess.run([_tool("khard"), "addressbooks"], capture_output=True, text=True, env=env, timeout=60)
    assert khard.returncode == 0, khard.stderr
    assert {"family", "friends"} <= set(khard.stdout.split())


def test_mbsync_parses_the_config_detection_read(person: Path) -> None:
    """isync's own parser accepts the config (mbsync is installed where the IMAP tests run: .ci/run installs it).
    Asked for a channel the config does not define, mbsync reads the whole file first: a keyword it does not
    know is said with its line, and the unknown channel is the only complaint."""
    mbsync = shutil.which("mbsync")
    if mbsync is None:
        pytest.skip("mbsync is not installed here; .ci/run installs isync (apt-get install isync)")
    run = subprocess.run([mbsync, "-c", str(person / ".mbsyncrc"), "-l", "no-such-channel"], capture_output=True,
                         text=True, timeout=60, env={**os.environ, "HOME": str(person)}, stdin=subprocess.DEVNULL)
    said = run.stderr + run.stdout
    assert "No channel or group named 'no-such-channel' defined." in said
    assert "not recognized" not in said and ".mbsyncrc:" not in said, said


def test_notmuch_reads_the_config_detection_read(person: Path) -> None:
    """notmuch itself reads the same database path and addresses from the config (.ci/run installs notmuch)."""
    notmuch = shutil.which("notmuch")
    if notmuch is None:
        pytest.skip("notmuch is not installed here; .ci/run installs it (apt-get install notmuch)")
    env = {**os.environ, "HOME": str(person), "NOTMUCH_CONFIG": str(person / ".notmuch-config")}

    def get(key: str) -> str:
        run = subprocess.run([notmuch, "config", "get", key], capture_output=True, text=True, timeout=60, env=env,
                             stdin=subprocess.DEVNULL)
        assert run.returncode == 0, run.stderr
        return run.stdout.strip()

    assert get("database.path") in ("Mail", str(person / "Mail"))
    assert get("user.primary_email") == "ada@example.net"
    result = _run("setup", "--detect")
    assert "notmuch (~/.notmuch-config): its database ~/Mail holds the accounts found above" in result.stderr


def test_a_config_built_to_break_the_reading_fails_alone(person: Path) -> None:
    (person / ".config" / "todoman" / "config.py").write_text("path = " + "[" * 100_000 + "]" * 100_000 + "\n")
    (person / ".config" / "khard" / "khard.conf").write_text("[addressbooks\n" + "x" * 2_000_000)
    result = _run("setup", "--detect")
    assert result.exit_code == 0
    mail = _printed_config(result.stdout)["plugins"]["mail"]
    assert {a["name"] for a in mail["accounts"]} == {"work", "personal", "club"} and "tasks" not in mail
