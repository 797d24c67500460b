"""The shared maildirs library: a dot in a folder's name means nesting only where the layout present says so."""

from __future__ import annotations

from pathlib import Path

from maildirs import folders
from maildirs.accounts import configured_accounts, mail_table


def _make(root: Path, *names: str) -> None:
    for name in names:
        for sub in ("cur", "new", "tmp"):
            (root / name / sub).mkdir(parents=True, exist_ok=True)


def _names(root: Path) -> list[str]:
    return [f.name for f in folders(root)]


def test_a_top_level_name_with_a_dot_stays_one_folder(tmp_path: Path) -> None:
    _make(tmp_path, "INBOX", "v1.2", "Archive/2026")  # mbsync, SubFolders Verbatim
    assert _names(tmp_path) == ["INBOX", "Archive/2026", "v1.2"]


def test_a_dotted_name_alone_at_the_top_stays_one_folder(tmp_path: Path) -> None:
    _make(tmp_path, "INBOX", "v1.2")  # no real subfolder, and no folder "v1" beside it
    assert _names(tmp_path) == ["INBOX", "v1.2"]


def test_offlineimap_flat_names_nest_under_the_folder_beside_them(tmp_path: Path) -> None:
    _make(tmp_path, "INBOX", "INBOX.Sent", "INBOX.Lists.python", "release.notes")
    assert _names(tmp_path) == ["INBOX", "INBOX/Lists/python", "INBOX/Sent", "release.notes"]


def test_maildir_plus_plus_dots_are_nesting(tmp_path: Path) -> None:
    for sub in ("cur", "new", "tmp"):
        (tmp_path / sub).mkdir()
    _make(tmp_path, ".Archive.2026", ".v1")
    assert _names(tmp_path) == ["INBOX", "Archive/2026", "v1"]


def test_the_mail_table_is_read_from_the_gateways_config(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("GATEWAY_CONFIG", raising=False)
    (tmp_path / "config.toml").write_text('[plugins.mail]\naccounts = [{ name = "p", maildir = "Mail" }]\n')
    assert mail_table(tmp_path)["accounts"][0]["name"] == "p"
    [account] = configured_accounts(tmp_path)
    assert account.maildir == tmp_path / "Mail"
    assert configured_accounts(tmp_path / "nowhere") == []
