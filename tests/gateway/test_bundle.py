"""The MCP Bundle's launcher maps the host's settings to a config: account folders found under a Maildir root in
either layout, empty settings and the host's own placeholders left out, the file rewritten only on a change and
kept to the person."""

from __future__ import annotations

import tomllib
from pathlib import Path

from gateway.commands.bundle import SETTINGS, accounts_under, config_for, prepare, settings_from, write_config


def _maildir(folder: Path) -> Path:
    for part in ("cur", "new", "tmp"):
        (folder / part).mkdir(parents=True, exist_ok=True)
    return folder


def test_a_root_of_accounts_gives_one_account_each_in_either_layout(tmp_path: Path) -> None:
    root = tmp_path / "Mail"
    _maildir(root / "personal" / "INBOX")  # mbsync: an account is a folder of Maildirs
    _maildir(root / "work")  # Maildir++: the account is a Maildir
    (root / "notes").mkdir()  # not mail
    assert accounts_under(root) == [{"name": "personal", "maildir": str(root / "personal")},
                                    {"name": "work", "maildir": str(root / "work")}]
    assert accounts_under(root / "personal") == [{"name": "personal", "maildir": str(root / "personal")}]
    assert accounts_under(tmp_path / "nowhere") == []


def test_empty_settings_and_placeholders_mean_the_plugins_defaults(tmp_path: Path) -> None:
    variables = {key: variable for key, variable, _title, _what in SETTINGS}
    environ = {variables["maildir"]: "${user_config.maildir}", variables["tasks"]: "  ",
               variables["notes"]: str(tmp_path / "Notes"), variables["calendars"]: str(tmp_path / "cal")}
    settings = settings_from(environ)
    assert settings == {"notes": str(tmp_path / "Notes"), "calendars": str(tmp_path / "cal")}
    assert config_for(settings) == {"plugins": {"mail": {"calendars": str(tmp_path / "cal"),
                                                         "notes": str(tmp_path / "Notes")}}}
    assert config_for({}) == {}


def test_the_config_is_written_only_when_it_changes_and_kept_to_the_person(tmp_path: Path) -> None:
    path = tmp_path / "config" / "bundle.toml"
    config = {"plugins": {"mail": {"notes": "/home/pat/Notes"}}}
    assert write_config(path, config)
    assert tomllib.loads(path.read_text()) == config
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert not write_config(path, config)
    assert write_config(path, {})
    assert tomllib.loads(path.read_text()) == {}
    assert [p.name for p in path.parent.iterdir()] == ["bundle.toml"]  # no temporary file left behind


def test_prepare_writes_the_hosts_settings_where_the_gateway_reads_configs(tmp_path: Path) -> None:
    from gateway.api.context import Folders

    folders = Folders(config=tmp_path / "config", data=tmp_path / "data", state=tmp_path / "state",
                      cache=tmp_path / "cache")
    variables = {key: variable for key, variable, _title, _what in SETTINGS}
    path = prepare({variables["notes"]: str(tmp_path / "Notes")}, folders)
    assert path == tmp_path / "config" / "bundle.toml"
    assert tomllib.loads(path.read_text()) == {"plugins": {"mail": {"notes": str(tmp_path / "Notes")}}}
