"""Tool schemas kept between starts: given again while nothing they were read from changed, written again when it did.

A plugin package of two modules (its tools, and the shapes and type aliases they use) is loaded by a registry, as
`gateway serve` loads it; its modules are then forgotten and imported again, as a new process would, and the
kept descriptions are looked at with files changed or not. Files are dated two minutes back: a file changed in
the last two seconds is never trusted (the last test shows it).
"""

from __future__ import annotations

import datetime
import os
import sys
import time
from pathlib import Path

import anyio
import pytest

from gateway.api import kept_schemas, schemas
from gateway.api.context import Folders
from gateway.engine.registry import Registry
from gateway.testing import serve_client, write_config
from tests.gateway.probe_site import forget, site_fixture

PACKAGE = "gateway_keptprobe"

SHAPES = '''
from typing import Annotated

from pydantic import Field
from typing_extensions import TypedDict

Limit = Annotated[int, Field(description="{limit_words}", ge=1, le=50)]


class Found(TypedDict):
    """What a search found."""

    names: list[str]
'''

TOOLS = '''
from __future__ import annotations

import datetime

from gateway import Answer, Context, tool

from gateway_keptprobe.shapes import Found, Limit


@tool(read_only=True)
def find(ctx: Context, words: str, limit: Limit = 10) -> Answer[Found]:
    """Find names."""
    return Answer(text=words, data={{"names": [words] * limit}})


@tool(read_only=True)
def day_after(day: datetime.date) -> str:
    """The day after a day."""
    return (day + datetime.timedelta(days=1)).isoformat()
'''

INIT = '''
from gateway import hookimpl


@hookimpl
def register_tools(gateway):
    from gateway_keptprobe.tools import day_after, find

    return [find, day_after]
'''


def write_package(site: Path, limit_words: str = "How many at most") -> None:
    folder = site / PACKAGE
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text(INIT)
    (folder / "shapes.py").write_text(SHAPES.format(limit_words=limit_words))
    (folder / "tools.py").write_text(TOOLS.format())
    age(folder)


def age(folder: Path, seconds: int = 120) -> None:
    """Date every file of the folder `seconds` back (a file changed just now is never trusted)."""
    then = time.time() - seconds
    for path in folder.iterdir():
        os.utime(path, (then, then))


def load(folders: Folders):  # noqa: ANN201 (a Plugin)
    """The package loaded by a registry of its own (a fresh import, as a new start does)."""
    forget(PACKAGE)
    import importlib

    module = importlib.import_module(PACKAGE)
    plugin = Registry(folders, plugins=[("keptprobe", module)], entrypoints=False).get("keptprobe")
    assert plugin.ok, plugin.error
    return plugin


site = site_fixture(PACKAGE)


@pytest.fixture
def described(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the tools described from their type hints (not given again from what was kept)."""
    names: list[str] = []
    original = schemas._describe

    def counting(function, tool, with_schema):  # noqa: ANN001, ANN202
        names.append(tool)
        return original(function, tool, with_schema)

    monkeypatch.setattr(schemas, "_describe", counting)
    return names


def kept_file(home: Path) -> Path:
    return home / ".cache" / "gateway" / "schemas" / "keptprobe.marshal"


def test_a_second_start_gives_the_kept_schemas_again_equal_to_the_first(gateway_home, site, described) -> None:
    write_package(site)
    folders = Folders.from_environment()
    first = load(folders)
    assert sorted(described) == ["day_after", "find"] and kept_file(gateway_home).is_file()
    described.clear()
    second = load(folders)
    assert described == []
    assert [(t.name, dict(t.input_schema), t.output_schema) for t in second.tools] == [
        (t.name, dict(t.input_schema), t.output_schema) for t in first.tools]
    limit = second.tools[0].input_schema["properties"]["limit"]
    assert limit == {"default": 10, "description": "How many at most", "maximum": 50, "minimum": 1, "type": "integer"}


def test_a_schema_given_again_still_converts_its_arguments(gateway_home, site, described) -> None:
    # The pydantic conversion of a `date` parameter is made when a call first needs it.
    write_package(site)
    folders = Folders.from_environment()
    load(folders)
    described.clear()
    day_after = load(folders).tools[1]
    assert described == [] and day_after.name == "day_after"
    assert day_after.function(day="2026-02-28") == "2026-03-01"
    assert day_after.function(day=datetime.date(2026, 12, 31)) == "2027-01-01"


def test_a_type_alias_changed_in_another_module_of_the_package_is_described_again(gateway_home, site, described):
    write_package(site)
    folders = Folders.from_environment()
    load(folders)
    write_package(site, limit_words="The most names to give")
    described.clear()
    again = load(folders)
    assert sorted(described) == ["day_after", "find"]
    assert again.tools[0].input_schema["properties"]["limit"]["description"] == "The most names to give"
    described.clear()
    assert load(folders).tools[0].input_schema["properties"]["limit"]["description"] == "The most names to give"
    assert described == []  # and the new description was kept


def test_another_python_or_installed_packages_describe_again(gateway_home, site, described, monkeypatch) -> None:
    write_package(site)
    folders = Folders.from_environment()
    load(folders)
    described.clear()
    other = site.parent / "other-site"
    other.mkdir()
    monkeypatch.syspath_prepend(str(other))  # another folder modules may come from: another environment
    load(folders)
    assert sorted(described) == ["day_after", "find"]
    described.clear()
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    load(folders)
    assert sorted(described) == ["day_after", "find"]


def test_the_working_folder_first_on_sys_path_throws_away_what_was_kept_only_for_what_it_can_import(
        gateway_home, site, described, tmp_path, monkeypatch) -> None:
    # As under `python -m gateway`: the working folder first on sys.path.
    work = tmp_path / "work"
    (work / "logs").mkdir(parents=True)
    monkeypatch.chdir(work)
    monkeypatch.syspath_prepend(str(work))
    write_package(site)
    folders = Folders.from_environment()
    load(folders)
    assert sorted(described) == ["day_after", "find"]
    for name in ("notes.txt", "report.json", "Makefile", ".hidden", "build.log", "logs/today.log"):
        (work / name).write_text("nothing to import")  # the folder changed, but nothing in it can be imported
    (work / ".cache").mkdir()  # a folder no import statement can name
    described.clear()
    load(folders)
    assert described == []
    (work / "helper.py").write_text("LIMIT = 3\n")  # a module there could shadow any other: described again
    described.clear()
    load(folders)
    assert sorted(described) == ["day_after", "find"]
    age(work)  # nothing changed in the last two seconds: the new description is kept
    load(folders)
    described.clear()
    load(folders)
    assert described == []
    (work / "helper.py").write_text("LIMIT = 4\n")  # changed in place
    age(work, 60)
    described.clear()
    load(folders)
    assert sorted(described) == ["day_after", "find"]
    (work / "shapes").mkdir()  # a folder: a package, or a namespace package, of that name
    age(work)
    described.clear()
    load(folders)
    assert sorted(described) == ["day_after", "find"]
    (work / "helper.py").unlink()
    described.clear()
    load(folders)
    assert sorted(described) == ["day_after", "find"]


def test_a_working_folder_that_is_not_first_on_sys_path_is_watched_as_any_other(gateway_home, site, described,
                                                                               tmp_path, monkeypatch) -> None:
    # The `gateway` console script puts its own folder first: a folder behind it is an installed one.
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.syspath_prepend(str(work))
    monkeypatch.syspath_prepend(str(tmp_path / "bin"))
    write_package(site)
    folders = Folders.from_environment()
    load(folders)
    (work / "notes.txt").write_text("the folder changed")
    described.clear()
    load(folders)
    assert sorted(described) == ["day_after", "find"]


def test_a_damaged_or_foreign_file_is_not_read(gateway_home, site, described) -> None:
    write_package(site)
    folders = Folders.from_environment()
    first = load(folders)
    path = kept_file(gateway_home)
    path.write_bytes(b"\x00not marshal data")
    described.clear()
    assert [dict(t.input_schema) for t in load(folders).tools] == [dict(t.input_schema) for t in first.tools]
    assert sorted(described) == ["day_after", "find"]  # described again, and kept again
    path.chmod(0o666)  # a file others may write is not trusted
    described.clear()
    load(folders)
    assert sorted(described) == ["day_after", "find"]


def test_a_closure_is_never_kept(gateway_home, site) -> None:
    def made_here(words: str) -> str:
        return words

    assert kept_schemas.key_of(made_here, "made_here", True, True) is None
    write_package(site)
    load(Folders.from_environment())
    from gateway_keptprobe.tools import find

    assert kept_schemas.key_of(find, "find", True, True) is not None


def test_files_changed_just_now_are_not_trusted(gateway_home, site, described) -> None:
    write_package(site)
    (site / PACKAGE / "shapes.py").touch()  # changed now: its modification time may not move on a second change
    folders = Folders.from_environment()
    load(folders)
    described.clear()
    load(folders)
    assert sorted(described) == ["day_after", "find"]


def test_tools_list_with_every_built_in_is_the_same_from_kept_schemas(gateway_home: Path) -> None:
    # Two real starts of `gateway serve`: the first describes every tool and keeps it, the second gives the kept
    # descriptions again (the files are not written again); hosts see the very same tools.
    from importlib.metadata import entry_points

    plugins = sorted({entry.name for entry in entry_points(group="gateway.plugins")})
    write_config(gateway_home, {"gateway": {"plugins": plugins}})
    listings = []

    async def listing() -> None:
        async with serve_client(gateway_home) as client:
            listings.append([t.model_dump(mode="json", by_alias=True) for t in (await client.list_tools()).tools])

    anyio.run(listing)
    folder = gateway_home / ".cache" / "gateway" / "schemas"
    written = {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}
    assert {"sessions.marshal", "mail.marshal", "spam.marshal", "time.marshal"} <= set(written)
    anyio.run(listing)
    assert listings[0] == listings[1] and len(listings[0]) > 40
    assert {path.name: path.stat().st_mtime_ns for path in folder.iterdir()} == written


