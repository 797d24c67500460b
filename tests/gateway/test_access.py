"""The consent gate: closed until opened, both owners open, outside projects, routes, refusals."""

from __future__ import annotations

import pytest

from gateway import ToolError
from gateway.access import Gate, Manifest, ManifestError


def manifest(*projects):
    return Manifest.from_dict({"project": list(projects)})


OPEN = {"id": "garden", "name": "Garden", "ai": True, "paths": ["/home/ada/garden", "/srv/shared/20*"], "apps": ["Planner"],
        "urls": ["garden.example.org/board"], "senders": ["@garden.example.org"], "subjects": ["[garden]"]}
CLOSED = {"id": "lawsuit", "name": "Dispute", "paths": ["/home/ada/lawsuit"], "senders": ["lee@law.example.net"]}


def test_a_project_is_closed_until_opened():
    gate = Gate(manifest(CLOSED))
    assert not gate.allows({"lawsuit"})


def test_an_item_in_two_projects_needs_both_open():
    gate = Gate(manifest(OPEN, CLOSED))
    assert gate.allows({"garden"})
    assert not gate.allows({"garden", "lawsuit"})


def test_things_in_no_project_follow_outside_projects():
    assert Gate(manifest(OPEN), outside_projects=True).allows(set())
    assert not Gate(manifest(OPEN), outside_projects=False).allows(set())


def test_an_owner_taken_out_of_the_manifest_leaves_its_things_in_no_project():
    assert Gate(manifest(OPEN), outside_projects=True).allows({"gone"})
    assert not Gate(manifest(OPEN), outside_projects=False).allows({"gone"})


@pytest.mark.parametrize(
    ("traits", "owners"),
    [
        ({"path": "/home/ada/garden/src/main.py"}, {"garden"}),
        ({"path": "/home/ada/gardening"}, set()),
        ({"path": "/home/ada/lawsuit"}, {"lawsuit"}),
        ({"app": "planner"}, {"garden"}),
        ({"url": "https://garden.example.org/board/42"}, {"garden"}),
        ({"url": "https://garden.example.org/other"}, set()),
        ({"url": "https://evil-garden.example.org.example.com/board"}, set()),
        ({"sender": "bo@garden.example.org"}, {"garden"}),
        ({"sender": "lee@law.example.net"}, {"lawsuit"}),
        ({"sender": "kim@law.example.net"}, set()),
        ({"subject": "Re: [Garden] tools"}, {"garden"}),
        ({"path": "/home/ada/garden/../lawsuit/x"}, {"lawsuit"}),
        ({"path": "/srv/shared/2026/plans"}, {"garden"}),
        ({"path": "/srv/shared/plans"}, set()),
    ],
    ids=lambda v: str(v),
)
def test_routes_place_items_in_projects(traits, owners):
    assert Gate(manifest(OPEN, CLOSED)).owners_of(**traits) == owners


def test_a_list_leaves_out_and_counts():
    gate = Gate(manifest(OPEN, CLOSED))
    items = [{"p": {"garden"}}, {"p": {"lawsuit"}}, {"p": set()}, {"p": {"lawsuit"}}]
    kept = gate.keep(items, lambda item: item["p"])
    assert len(kept.items) == 2 and kept.left_out == 2


def test_a_refusal_says_how_to_open_the_project():
    gate = Gate(manifest(OPEN, CLOSED))
    with pytest.raises(ToolError) as caught:
        gate.check_read({"lawsuit"}, "session 7")
    assert "session 7" in str(caught.value) and "ai = true" in str(caught.value) and "lawsuit" in str(caught.value)
    with pytest.raises(ToolError, match="outside_projects = true"):
        Gate(manifest(), outside_projects=False).check_write(set(), "a new note")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"project": [{"name": "no id"}]}, "needs an id"),
        ({"project": [{"id": "a", "colour": "red"}]}, "unknown key(s) colour"),
        ({"project": [{"id": "a"}, {"id": "a"}]}, "used twice"),
        ({"project": [{"id": "a", "ai": "yes"}]}, "ai must be true or false"),
        ({"project": [{"id": "a", "paths": [1]}]}, "paths must be a list of strings"),
        ({"projects": []}, "unknown key(s) projects"),
    ],
)
def test_a_bad_manifest_is_refused_saying_what_is_wrong(data, message):
    with pytest.raises(ManifestError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Manifest.from_dict(data)


def test_a_broken_manifest_file_closes_everything_and_is_said(gateway_home):
    from gateway import Tool
    from gateway.testing import inline_plugin, make_gateway

    def hello() -> str:
        return "hi"

    gw = make_gateway([inline_plugin("a", tools=[Tool.from_function(hello)])], home=gateway_home)
    (gw.source.path.parent / "projects.toml").write_text("[[project]\nid=")
    answer = gw.call("hello")
    assert answer.is_error and "projects manifest" in answer.text
