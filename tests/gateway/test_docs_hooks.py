"""The plugin guide cannot rot: every hook documented with its exact signature and an example, and its complete
plugin imported from the guide itself and run through a gateway."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import re
import sys
from pathlib import Path

import pytest

from gateway.api import hookspecs
from gateway.testing import make_gateway

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "writing-plugins.md"


def _text() -> str:
    return GUIDE.read_text(encoding="utf-8")


def _specs() -> dict[str, str]:
    """Each hook's name and its signature as inspect gives it (string annotations shown bare)."""
    return {
        name: name + str(inspect.signature(function)).replace("'", "")
        for name, function in vars(hookspecs).items()
        if inspect.isfunction(function) and hasattr(function, "gateway_spec")
    }


def _sections() -> dict[str, str]:
    """The guide's hook sections: the signature in the heading, and the text up to the next heading."""
    parts = re.split(r"^### `([^`]+)`\s*$", _text(), flags=re.MULTILINE)
    return {parts[i]: re.split(r"^#{1,3} ", parts[i + 1], flags=re.MULTILINE)[0] for i in range(1, len(parts), 2)}


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


@pytest.mark.parametrize("hook", sorted(_specs()))
def test_every_hook_is_documented_with_its_exact_signature_and_an_example(hook):
    signature = _specs()[hook]
    sections = _sections()
    assert signature in sections, f"docs/writing-plugins.md needs a heading: ### `{signature}`"
    blocks = _python_blocks(sections[signature])
    assert blocks, f"the section of {hook} needs a ```python example"
    for block in blocks:
        ast.parse(block)
        assert f"def {hook}(" in block or hook == "register_tools" and "register_tools" in block


def test_no_documented_hook_is_missing_from_the_hookspecs():
    documented = {signature.partition("(")[0] for signature in _sections()}
    assert documented == set(_specs())


def _complete_plugin(tmp_path: Path):
    text = _text()
    marker = text.index("<!-- complete-plugin -->")
    (source,) = _python_blocks(text[marker:])[:1]
    path = tmp_path / "gateway_birthdays.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("gateway_birthdays", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gateway_birthdays"] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop("gateway_birthdays", None)
    return source, module


PEOPLE = """\
[[person]]
name = "Ada Example"
born = "1990-12-10"
email = "ada@example.org"

[[person]]
name = "Bea Example"
born = "1985-12-03"
email = "bea@family.example.net"

[[person]]
name = "Cy Example"
born = "1970-06-01"
email = "cy@example.com"
"""


def test_the_complete_plugin_of_the_guide_runs_through_a_gateway(gateway_home, tmp_path):
    source, module = _complete_plugin(tmp_path)
    assert 25 <= len([line for line in source.splitlines() if line.strip()]) <= 45  # "about thirty lines"
    gateway = make_gateway(
        [("birthdays", module)], home=gateway_home,
        config={"plugins": {"birthdays": {"file": "people.toml"}}},
        projects=[{"id": "family", "name": "Family", "ai": False, "senders": ["@family.example.net"]}],
    )
    (gateway.folders.config / "people.toml").write_text(PEOPLE)  # relative: taken from the config folder
    answer = gateway.call("birthdays", {"since": "2026-12-01", "days": 30})
    assert not answer.is_error, answer.text
    assert answer.text.splitlines() == [
        "2026-12-10  Ada Example",
        "1 person left out: their projects are closed to AI agents.",
    ]
    assert answer.data == {"birthdays": [{"name": "Ada Example", "day": "2026-12-10"}]} and answer.left_out == 1
    assert "Bea" not in answer.text
    refused = gateway.call("birthdays", {"since": "in a week"})
    assert refused.is_error and "must be a date" in refused.text


def test_the_schema_the_guide_shows_is_the_one_hosts_get(gateway_home, tmp_path):
    _source, module = _complete_plugin(tmp_path)
    gateway = make_gateway([("birthdays", module)], home=gateway_home)
    (listed,) = gateway.catalogue().tools
    text = _text()
    shown = text[text.index("The host sees `birthdays`"):]
    (block,) = re.findall(r"```json\n(.*?)```", shown, flags=re.DOTALL)[:1]
    assert json.loads(block) == dict(listed.tool.input_schema)
    assert listed.tool.read_only and listed.tool.title == "Upcoming birthdays"
