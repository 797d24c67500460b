"""The core's net reads all the strings of an answer as one text: played through a real `gateway serve`, a plugin
hands back secrets raw, each in a field of its own beside fields that could run into them (digits, a label), and the
host sees none of them, in the text or in the data.

The plugin is written on the spot and installed as pip would leave it; every number is invented, its check digits
computed here; every domain is reserved.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from gateway.testing import installed_plugin, serve_client, write_config
from tests.adversarial.test_masks_served import CARD, FR_IBAN, compact, grouped

SETTING = "password: Tr0ub4dor-served"
# Each secret between fields that a reader joining them carelessly would glue to it: digits before and after a card
# (a longer number whose check digits fail), a label before a setting line (no longer a whole line).
FIELDS = ["2026", grouped(CARD), "7", "Subject:", SETTING, "12", FR_IBAN, "34", CARD, "5"]

PLUGIN = f'''
from gateway import Answer, Tool, hookimpl

FIELDS = {FIELDS!r}


def fields(ctx) -> Answer:
    """Secrets raw, one a field, between fields of digits and labels; the text is one short line."""
    return Answer(text="the fields are in the data", data={{"fields": FIELDS, "first": 2026, "rows": [
        {{"n": 1, "value": FIELDS[1]}}, {{"n": 41, "value": FIELDS[4]}}, {{"n": 3, "value": FIELDS[6]}}]}})


@hookimpl
def register_tools(gateway):
    return [Tool.from_function(fields, read_only=True)]
'''


def test_no_secret_in_a_field_of_its_own_reaches_the_host(gateway_home: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    installed_plugin(site, "fieldy", PLUGIN)
    write_config(gateway_home, {"gateway": {"plugins": ["fieldy"]}})
    found: list[str] = []

    async def session() -> None:
        async with serve_client(gateway_home, extra_env={"PYTHONPATH": str(site)}) as client:
            result = await client.call_tool("fields", {})
            assert not result.is_error, result.content
            found.append("\n".join(block.text for block in result.content))
            found.append(json.dumps(result.structured_content, ensure_ascii=False))

    anyio.run(session)
    text, data = found
    for shown in (text, data):
        assert CARD not in compact(shown) and compact(FR_IBAN) not in compact(shown)
        assert "Tr0ub4dor-served" not in shown
    shown = json.loads(data)
    assert shown["fields"][1] == shown["fields"][8] == f"[card …{CARD[-4:]}]"
    assert shown["fields"][4] == "password: [secret: password]"
    assert shown["fields"][6] == f"[IBAN …{FR_IBAN[-4:]}]"
    # The fields around them are left as they were: masking one field does not reach into its neighbours.
    assert [shown["fields"][i] for i in (0, 2, 3, 5, 7, 9)] == ["2026", "7", "Subject:", "12", "34", "5"]
    assert shown["first"] == 2026 and [row["n"] for row in shown["rows"]] == [1, 41, 3]
