"""The config and the manifest fail closed: named but missing, broken, empty or mid-save is an error, never "nothing"."""

from __future__ import annotations

import os
import threading
import time

import pytest

from gateway import Prompt, Tool
from gateway.engine.config import ConfigSource
from gateway.testing import inline_plugin, make_gateway, write_config

MANIFEST = '[[project]]\nid = "vault"\npaths = ["/srv/vault"]\n'


def peek(ctx, path: str) -> str:
    """The words kept at a path."""
    ctx.gate.check_read(ctx.gate.owners_of(path=path), "the file")
    return "VAULT-CANARY"


def plugin():
    return inline_plugin(
        "probe",
        tools=[Tool.from_function(peek, read_only=True)],
        prompts=[Prompt("recall", lambda ctx: peek(ctx, "/srv/vault/a"))],
    )


@pytest.fixture
def gw(gateway_home):
    gateway = make_gateway([plugin()], home=gateway_home, config={"gateway": {"plugins": ["probe"]}})
    (gateway.source.path.parent / "projects.toml").write_text(MANIFEST)
    os.utime(gateway.source.path.parent / "projects.toml", (time.time() - 10, time.time() - 10))
    assert gateway.call("peek", {"path": "/srv/vault/a"}).is_error
    assert gateway.call("peek", {"path": "/srv/open/a"}).text == "VAULT-CANARY"
    return gateway


def _changed(path):
    stamp = time.time() + 2  # a stat that differs even on coarse clocks, and no longer "just written"
    os.utime(path, (stamp, stamp))


def _all_refused(gateway, reason):
    for path in ("/srv/vault/a", "/srv/open/a"):
        answer = gateway.call("peek", {"path": path})
        assert answer.is_error and reason in answer.text and "VAULT-CANARY" not in answer.text
    with pytest.raises(Exception, match=reason):
        gateway.prompt("recall")
    return True


def test_an_explicit_config_that_does_not_exist_is_an_error(tmp_path):
    missing = ConfigSource(tmp_path / "typo.toml", explicit=True).current()
    assert missing.error and "does not exist" in missing.error and "typo.toml" in missing.error
    assert not missing.gate.allows(()) and not missing.gate.allows({"anything"})
    assert ConfigSource(tmp_path / "config.toml").current().error is None  # the default, absent: a fresh install


def test_an_explicit_config_that_is_a_broken_link_or_a_folder_is_an_error(tmp_path):
    (tmp_path / "link.toml").symlink_to(tmp_path / "gone.toml")
    assert "a link to nothing" in ConfigSource(tmp_path / "link.toml", explicit=True).current().error
    (tmp_path / "folder.toml").mkdir()
    assert "cannot be read" in ConfigSource(tmp_path / "folder.toml").current().error


def test_the_gateway_config_variable_is_explicit(gateway_home, monkeypatch, tmp_path):
    from gateway.engine.core import make_gateway_from_environment

    monkeypatch.setenv("GATEWAY_CONFIG", str(tmp_path / "mistyped.toml"))
    gateway = make_gateway_from_environment(entrypoints=False)
    assert gateway.source.explicit and "does not exist" in gateway.snapshot().error


def test_a_deleted_manifest_named_in_the_config_is_an_error(gw):
    write_config(gw.source.path.parent.parent.parent, {"gateway": {"plugins": ["probe"]},
                                                      "access": {"projects": "projects.toml"}})
    _changed(gw.source.path)
    (gw.source.path.parent / "projects.toml").unlink()
    assert _all_refused(gw, "does not exist")


def test_a_misspelt_manifest_path_is_an_error(gw):
    gw.source.path.write_text('[gateway]\nplugins = ["probe"]\n[access]\nprojects = "projetcs.toml"\n')
    _changed(gw.source.path)
    assert _all_refused(gw, "projetcs.toml")


def test_the_default_manifest_absent_from_the_start_means_no_projects(gateway_home):
    gateway = make_gateway([plugin()], home=gateway_home, config={"gateway": {"plugins": ["probe"]}})
    assert gateway.call("peek", {"path": "/srv/vault/a"}).text == "VAULT-CANARY"  # a fresh install


def test_the_default_manifest_gone_once_seen_is_an_error_until_it_is_back(gw):
    manifest = gw.source.path.parent / "projects.toml"
    manifest.unlink()  # `git checkout` unlinks, then creates; an editor renames, then writes
    assert _all_refused(gw, "was there and is gone")
    manifest.write_text(MANIFEST)
    assert gw.call("peek", {"path": "/srv/vault/a"}).is_error
    assert gw.call("peek", {"path": "/srv/open/a"}).text == "VAULT-CANARY"


def test_a_manifest_back_within_a_moment_is_read_as_if_never_gone(gw):
    manifest = gw.source.path.parent / "projects.toml"
    manifest.rename(manifest.with_name("projects.toml~"))  # Emacs keeps the old one as a backup...
    timer = threading.Timer(0.1, lambda: manifest.write_text(MANIFEST))  # ...and writes the new one
    timer.start()
    try:
        answer = gw.call("peek", {"path": "/srv/vault/a"})
    finally:
        timer.join()
    assert answer.is_error and "VAULT-CANARY" not in answer.text
    assert gw.call("peek", {"path": "/srv/open/a"}).text == "VAULT-CANARY"


def test_the_default_config_gone_once_seen_is_an_error_never_the_defaults(gateway_home, tmp_path):
    elsewhere = tmp_path / "dotfiles" / "projects.toml"
    elsewhere.parent.mkdir()
    elsewhere.write_text(MANIFEST)
    gateway = make_gateway([plugin()], home=gateway_home,
                           config={"gateway": {"plugins": ["probe"]}, "access": {"projects": str(elsewhere)}})
    assert gateway.call("peek", {"path": "/srv/vault/a"}).is_error
    gateway.source.path.unlink()  # the defaults would read no manifest at all: everything open
    assert _all_refused(gateway, "was there and is gone")


@pytest.mark.parametrize("content", ["", "  \n\t\n"])
def test_an_empty_manifest_is_an_error(gw, content):
    manifest = gw.source.path.parent / "projects.toml"
    manifest.write_text(content)
    assert _all_refused(gw, "empty")
    _changed(manifest)  # still empty long after the change: an error all the same
    assert _all_refused(gw, "is empty")


def test_a_manifest_replaced_by_a_broken_link_or_a_folder_is_an_error(gw):
    manifest = gw.source.path.parent / "projects.toml"
    manifest.unlink()
    manifest.symlink_to(manifest.parent / "gone.toml")
    assert _all_refused(gw, "a link to a file that does not exist")
    manifest.unlink()
    manifest.mkdir()
    assert _all_refused(gw, "cannot be read")


def test_a_manifest_emptied_then_written_while_read_is_read_once_written(gw):
    manifest = gw.source.path.parent / "projects.toml"
    manifest.write_text("")  # an editor's save: truncate, then write a moment later

    def write_soon():
        time.sleep(0.03)
        manifest.write_text(MANIFEST.replace("/srv/vault", "/srv/vault2"))

    writer = threading.Thread(target=write_soon)
    writer.start()
    first = gw.call("peek", {"path": "/srv/vault2/a"})
    writer.join()
    assert first.is_error and "VAULT-CANARY" not in first.text
    assert gw.call("peek", {"path": "/srv/vault2/a"}).is_error
    assert gw.call("peek", {"path": "/srv/vault/a"}).text == "VAULT-CANARY"


def test_a_manifest_that_settles_after_an_error_is_read_again(gw):
    manifest = gw.source.path.parent / "projects.toml"
    manifest.write_text("")
    assert gw.call("peek", {"path": "/srv/open/a"}).is_error
    manifest.write_text(MANIFEST)
    assert gw.call("peek", {"path": "/srv/open/a"}).text == "VAULT-CANARY"
    assert gw.call("peek", {"path": "/srv/vault/a"}).is_error


def test_tools_list_keeps_the_last_good_list_while_the_gate_is_in_error(gw):
    (gw.source.path.parent / "projects.toml").write_text("")
    assert gw.list_tools() == ["peek"]
    with pytest.raises(Exception, match="empty"):
        gw.all_resources()


def test_each_reading_makes_a_gate_of_its_own_so_memos_per_gate_start_afresh(gw):
    first = gw.snapshot().gate
    assert gw.snapshot().gate is first  # unchanged files: not read again
    _changed(gw.source.path.parent / "projects.toml")  # touched: links are resolved again
    second = gw.snapshot().gate
    assert second.manifest == first.manifest and second != first and hash(second) != hash(first)
