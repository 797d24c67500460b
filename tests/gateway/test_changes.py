"""gateway.api.changes: a settled set of folders is quiet until something happens in them, and every doubt (an overflow,
no inotify, no room for a watch, a folder gone) makes it not quiet, so the plugin stats as without notifications."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import inotify_simple
import pytest

from gateway.api import changes as changes_module
from gateway.api.changes import Changes, files_folders, merged, toward


@pytest.fixture
def hub(monkeypatch):
    """A hub of this test's own (a fresh inotify instance), so that no other test's watches count here."""
    fresh = changes_module._Hub()
    monkeypatch.setattr(changes_module, "_hub", fresh)
    monkeypatch.delenv(changes_module.DISABLE, raising=False)
    yield fresh
    for user in list(fresh.users):
        user.close()


def settled(changes: Changes, folders) -> bool:
    """A stat pass as a plugin does it: begin, (stats), settle; twice when a folder was newly watched."""
    return any(changes.settle(changes.begin(), folders) for _ in range(2))


def test_a_settled_folder_is_quiet_until_a_file_in_it_is_appended_to(hub, tmp_path):
    transcript = tmp_path / "a.jsonl"
    transcript.write_text("one\n")
    changes = Changes()
    assert not changes.quiet()  # never settled: stat
    assert changes.settle(changes.begin(), [str(tmp_path)]) is False  # watched just now: trusted from the next pass
    assert changes.quiet() is False
    assert changes.settle(changes.begin(), [str(tmp_path)]) is True
    assert changes.quiet() and changes.quiet()  # asking does not use it up
    with transcript.open("a") as handle:
        handle.write("two\n")
    assert not changes.quiet()
    assert not changes.quiet()  # and stays so until a stat pass settles it
    assert settled(changes, [str(tmp_path)]) and changes.quiet()


@pytest.mark.parametrize("kind", ["new file", "new folder", "atomic replace", "deletion", "rename away", "touch",
                                  "truncate"])
def test_each_kind_of_change_in_a_watched_folder_makes_it_not_quiet(hub, tmp_path, kind):
    folder = tmp_path / "project"
    folder.mkdir()
    transcript = folder / "a.jsonl"
    transcript.write_text("one\n")
    changes = Changes()
    assert settled(changes, [str(folder)]) and changes.quiet()
    if kind == "new file":
        (folder / "b.jsonl").write_text("x\n")
    elif kind == "new folder":
        (folder / "subagents").mkdir()
    elif kind == "atomic replace":  # written aside (outside the folder), renamed over
        aside = tmp_path / "aside.tmp"
        aside.write_text("one\ntwo\n")
        os.replace(aside, transcript)
    elif kind == "deletion":
        transcript.unlink()
    elif kind == "rename away":
        transcript.rename(tmp_path / "moved.jsonl")
    elif kind == "touch":
        os.utime(transcript, ns=(1_000_000_000, 1_000_000_000))
    else:
        os.truncate(transcript, 0)
    assert not changes.quiet()


def test_a_name_filter_hears_only_its_names_and_the_folder_itself(hub, tmp_path):
    database = tmp_path / "sqlite.db"
    database.write_text("")
    changes = Changes()
    folders = {str(tmp_path): {"sqlite.db", "sqlite.db-wal"}}
    assert settled(changes, folders)
    (tmp_path / "server.log").write_text("noise")  # another file beside it: no stat pass for that
    assert changes.quiet()
    (tmp_path / "sqlite.db-wal").write_text("a commit")
    assert not changes.quiet()


def test_a_folder_deleted_and_made_again_is_watched_again_after_a_stat_pass(hub, tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    changes = Changes()
    assert settled(changes, [str(folder)])
    shutil.rmtree(folder)
    assert not changes.quiet()
    assert changes.watching == 0  # the kernel dropped its watch
    assert not changes.settle(changes.begin(), [str(folder)])  # not there: not trusted
    folder.mkdir()
    assert not changes.quiet()
    assert settled(changes, [str(folder)]) and changes.watching == 1
    (folder / "late.jsonl").write_text("x\n")  # heard through the new watch
    assert not changes.quiet()


def test_an_event_between_begin_and_settle_is_not_lost(hub, tmp_path):
    changes = Changes()
    assert settled(changes, [str(tmp_path)])
    (tmp_path / "a").write_text("1")
    token = changes.begin()  # the stat pass starts: it sees a
    (tmp_path / "b").write_text("2")  # written during the stat pass, perhaps after it looked
    assert changes.settle(token, [str(tmp_path)]) is False
    assert not changes.quiet()


def test_a_queue_overflow_makes_every_watcher_stat(hub, tmp_path):
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    busy, other = tmp_path / "busy", tmp_path / "other"
    busy.mkdir()
    other.mkdir()
    first, second = Changes(), Changes()
    assert settled(first, [str(busy)]) and settled(second, [str(other)])
    assert first.quiet() and second.quiet()
    for n in range(limit + 10):  # more events than the kernel queues: the last ones are lost, an overflow said
        os.close(os.open(busy / f"f{n}", os.O_CREAT | os.O_WRONLY, 0o600))
    assert not second.quiet()  # its own events may be among the lost ones: it stats
    assert not first.quiet()
    assert settled(second, [str(other)]) and second.quiet()  # and a stat pass trusts it again


def test_without_inotify_it_is_never_quiet(hub, tmp_path, monkeypatch):
    def no_instances(*args, **kwargs):
        raise OSError(errno.EMFILE, "Too many open files")  # the per-user number of instances reached

    monkeypatch.setattr(inotify_simple, "INotify", no_instances)
    changes = Changes()
    for _ in range(3):
        assert changes.settle(changes.begin(), [str(tmp_path)]) is False
        assert not changes.quiet()
    assert "no inotify" in changes.unavailable


def test_the_environment_can_turn_notifications_off(hub, tmp_path, monkeypatch):
    monkeypatch.setenv(changes_module.DISABLE, "0")
    changes = Changes()
    assert not settled(changes, [str(tmp_path)]) and not changes.quiet()
    assert changes.unavailable == f"{changes_module.DISABLE}=0"


def test_no_room_for_a_watch_means_stat_for_good(hub, tmp_path, monkeypatch):
    changes = Changes()
    assert settled(changes, [str(tmp_path)])
    inotify = hub.instance()
    real_add = inotify.add_watch

    def full(path, mask):
        if path == str(tmp_path / "new"):
            raise OSError(errno.ENOSPC, "No space left on device")  # fs.inotify.max_user_watches reached
        return real_add(path, mask)

    monkeypatch.setattr(inotify, "add_watch", full)
    (tmp_path / "new").mkdir()
    assert not changes.quiet()
    assert not settled(changes, [str(tmp_path), str(tmp_path / "new")])
    assert not changes.quiet() and changes.watching == 0
    assert "max_user_watches" in changes.unavailable


def test_a_forked_child_does_not_read_its_parents_events(hub, tmp_path):
    changes = Changes()
    assert settled(changes, [str(tmp_path)])
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its copy is dropped, so it stats (and would watch anew on its own descriptor)
        try:
            said = b"%d%d" % (changes.quiet(), changes_module._hub.inotify is None)
        except BaseException:
            said = b"!!"
        os.write(write, said)
        os._exit(0)
    os.close(write)
    assert os.waitpid(pid, 0)[1] == 0
    assert os.read(read, 2) == b"01"
    os.close(read)
    assert changes.quiet()  # the parent's watches are untouched
    (tmp_path / "a").write_text("1")
    assert not changes.quiet()


def test_the_descriptor_is_closed_with_the_last_watcher(hub, tmp_path):
    first, second = Changes(), Changes()
    assert settled(first, [str(tmp_path)]) and settled(second, [str(tmp_path)])
    descriptor = hub.inotify.fileno()
    assert os.readlink(f"/proc/self/fd/{descriptor}") == "anon_inode:inotify"
    first.close()
    assert hub.inotify is not None and second.quiet()
    second.close()
    assert hub.inotify is None
    assert not os.path.exists(f"/proc/self/fd/{descriptor}") or (
        os.readlink(f"/proc/self/fd/{descriptor}") != "anon_inode:inotify")


def test_toward_a_missing_place_is_its_nearest_folder_filtered_by_name(tmp_path):
    assert toward(tmp_path / "codex" / "sessions") == (str(tmp_path), frozenset({"codex"}))
    (tmp_path / "codex").mkdir()
    assert toward(tmp_path / "codex" / "sessions") == (str(tmp_path / "codex"), frozenset({"sessions"}))
    assert merged([("/a", frozenset({"x"})), ("/a", frozenset({"y"})), ("/b", None), ("/b", frozenset({"z"}))]) == {
        "/a": frozenset({"x", "y"}), "/b": None}


def test_what_was_heard_names_the_changed_files_or_says_it_is_not_known(hub, tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "a.jsonl").write_text("one\n")
    changes = Changes()
    assert changes.heard() is None  # never settled
    changes.settle(changes.begin(), [str(folder)])
    assert changes.heard() is None  # watched anew: what came before the watch was not heard
    assert settled(changes, [str(folder)])
    assert changes.heard() == frozenset()
    (folder / "a.jsonl").write_text("two\n")
    (folder / "b.jsonl").write_text("new\n")
    changes.begin()
    assert changes.heard() == {str(folder / "a.jsonl"), str(folder / "b.jsonl")}
    changes.begin()  # a stat pass that did not settle (a failed import): still known, for the next one
    assert changes.heard() == {str(folder / "a.jsonl"), str(folder / "b.jsonl")}
    assert settled(changes, [str(folder)]) and changes.heard() == frozenset()
    os.utime(folder, ns=(1_000_000_000, 1_000_000_000))  # the folder itself: not known which entries
    changes.begin()
    assert changes.heard() is None


def test_files_are_watched_through_their_folders_only_when_every_edit_makes_an_event_there(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    plain, absent = home / "config.toml", home / "projects.toml"
    plain.write_text("x")
    assert files_folders([plain, absent]) == {str(home): frozenset({"config.toml", "projects.toml"})}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # A hard link: the file edited under its other name makes no event in `home`.
    os.link(plain, elsewhere / "config.toml")
    assert files_folders([plain]) is None
    (elsewhere / "config.toml").unlink()
    assert files_folders([plain]) is not None
    # A symbolic link in the file's place, or a folder reached through one: the target's edits are elsewhere.
    (elsewhere / "target.toml").write_text("y")
    absent.symlink_to(elsewhere / "target.toml")
    assert files_folders([absent]) is None
    (tmp_path / "linked").symlink_to(home)
    assert files_folders([tmp_path / "linked" / "config.toml"]) is None
    # Not a plain file.
    (home / "folder").mkdir()
    assert files_folders([home / "folder"]) is None
