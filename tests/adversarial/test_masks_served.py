"""The masks widened in issue 7, played through a real `gateway serve`: a plugin hands back secrets in the
forms the masks used to miss, in its text and in its structured data; the host sees none of them.

The plugin is written on the spot and installed as pip would leave it (a module and a dist-info folder
announcing its entry point), since `gateway serve` runs in its own process. One tool returns the
secrets raw (the core's safety net, `mask_secrets`, must catch every context-free form); the other
masks a code message with `ctx.mask`, as every plugin does with others' words. All numbers are invented,
their check digits computed here; every domain is reserved.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.testing import installed_plugin, write_config
from tests.served_once import SharedClient, shared_client


def iban(country: str, bban: str) -> str:
    number = int("".join(str(int(ch, 36)) for ch in bban + country + "00"))
    return f"{country}{98 - number % 97:02d}{bban}"


def luhn_card(body: str) -> str:
    for last in "0123456789":
        digits = [int(ch) for ch in body + last]
        total = sum(d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(reversed(digits)))
        if total % 10 == 0:
            return body + last
    raise AssertionError("unreachable")


def grouped(number: str, sep: str = " ") -> str:
    return sep.join(number[i : i + 4] for i in range(0, len(number), 4))


FR_IBAN = iban("FR", "14508059410452736918254")
DE_IBAN = iban("DE", "512108001245126199")
CARD = luhn_card("471829360415263")
AWS_SECRET = "q8RtvLwnZkaVbN/xJmePd+HsGfYcTeAuWiQoXyzB"
RANDOM_36 = "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2"

# What the plugin hands back raw, and what of it must never reach the host.
RAW = {
    "connection": "postgres://jane:S3cretPw-served@db.example.com/app",
    "cache": "redis://:Zq9pW2xR-served@cache.example.net:6379/0",
    "slack": "https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/Zx81kQpLr7TmWv2Ns4Yb",
    "discord": f"https://discord.com/api/webhooks/123456789012345678/{RANDOM_36}-served",
    "huggingface": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz12345678",
    "gitlab": "glpat-Zx81kQpLr7TmWv2Ns4Yb",
    "npm": f"npm_{RANDOM_36}",
    "aws": f"aws_secret_access_key = {AWS_SECRET}",
    "aws_json": f'{{"SecretAccessKey": "{AWS_SECRET}"}}',
    "iban_small": grouped(FR_IBAN.lower()),
    "iban_dashes": grouped(DE_IBAN, "-"),
    "card_dots": grouped(CARD, "."),
    "card_slashes": grouped(CARD, "/"),
    "card_full_width": grouped(CARD.translate(str.maketrans("0123456789", "０１２３４５６７８９"))),
}
NEVER_SHOWN = [
    "S3cretPw-served",
    "Zq9pW2xR-served",
    "Zx81kQpLr7TmWv2Ns4Yb",
    f"{RANDOM_36}-served",
    RAW["huggingface"],
    RANDOM_36,
    AWS_SECRET,
    FR_IBAN,
    DE_IBAN,
    CARD,
]

CODE_MESSAGE = (
    "Votre code de vérification : ４８２ ９１３\n"
    "Do not share this code with anyone: 771204\n"
    "Or use 395.118 — your backup code is 395.118\n"
    "Total 1 200 €, meeting at 10 30 in room 4 512.\n"
    "Help: https://example.com/help/security  Track: https://t.example.net/track/66120458/open"
)
CODES = ["４８２ ９１３", "482913", "771204", "395.118", "395118", "66120458", "example.com/help", "t.example.net"]
KEPT = ["1 200 €", "10 30", "room 4 512"]

PLUGIN = f'''
from gateway import Answer, Tool, hookimpl

import json

RAW = {RAW!r}
CODE_MESSAGE = {CODE_MESSAGE!r}


def leak_raw(ctx) -> Answer:
    """Hand back secrets raw, in the text and in the data (the core must catch them)."""
    return Answer(text="\\n".join(f"{{k}}: {{v}}" for k, v in RAW.items()), data={{"items": RAW, "list": list(RAW.values())}})


def leak_number(ctx) -> Answer:
    """A card number as a JSON number, beside a millisecond timestamp; the text is the data's JSON."""
    data = {{"card": {int(CARD)}, "stamp": 1764512345678, "count": 3}}
    return Answer(text=json.dumps(data), data=data)


def code_message(ctx) -> Answer:
    """Hand back a code message masked as plugins mask others' words."""
    masked = ctx.mask(CODE_MESSAGE)
    return Answer(text=masked, data={{"body": masked, "lines": masked.splitlines()}})


@hookimpl
def register_tools(gateway):
    return [Tool.from_function(leak_raw, read_only=True), Tool.from_function(code_message, read_only=True),
            Tool.from_function(leak_number, read_only=True)]
'''


def install_plugin(site: Path) -> None:
    installed_plugin(site, "leaky", PLUGIN)


@pytest.fixture(scope="module")
def leaky(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedClient]:
    """One server with the plugin for the module: its tools only read, so no call changes the next one's answer."""
    base = tmp_path_factory.mktemp("leaky")
    home = base / "home"
    home.mkdir()
    site = base / "site"
    install_plugin(site)
    write_config(home, {"gateway": {"plugins": ["leaky"]}})
    with shared_client(home, extra_env={"PYTHONPATH": str(site)}) as served:
        yield served


def answers(served: SharedClient, tool: str) -> tuple[str, str]:
    """The text content and the structuredContent (as JSON) of one call through the real server."""

    async def call(client) -> tuple[str, str]:
        result = await client.call_tool(tool, {})
        assert not result.is_error, result.content
        text = "\n".join(block.text for block in result.content)
        return text, json.dumps(result.structured_content, ensure_ascii=False)

    return served.play(call)


def compact(text: str) -> str:
    """Letters and digits only, capitals: a number however it was written (full-width digits as ASCII)."""
    ascii_digits = text.translate(str.maketrans("０１２３４５６７８９", "0123456789"))
    return re.sub(r"[^0-9A-Z]", "", ascii_digits.upper())


def test_no_secret_of_the_widened_forms_reaches_the_host(leaky: SharedClient) -> None:
    text, data = answers(leaky, "leak_raw")
    for shown in (text, data):
        for secret in NEVER_SHOWN:
            assert secret not in shown
            assert compact(secret) not in compact(shown)
        for written in RAW.values():
            assert written not in shown
    # What was masked says what it was, the user and host of the connection string kept.
    assert "postgres://jane:[secret: password]@db.example.com/app" in text
    assert f"[IBAN …{FR_IBAN[-4:]}]" in data and f"[card …{CARD[-4:]}]" in data


def test_a_card_number_sent_as_a_json_number_is_masked_and_a_timestamp_is_not(leaky: SharedClient) -> None:
    text, data = answers(leaky, "leak_number")
    for shown in (text, data):
        assert CARD not in shown and compact(CARD) not in compact(shown)
    assert json.loads(text) == json.loads(data) == {"card": f"[card …{CARD[-4:]}]", "stamp": 1764512345678, "count": 3}


def test_a_code_message_served_keeps_no_code_and_no_link(leaky: SharedClient) -> None:
    text, data = answers(leaky, "code_message")
    for shown in (text, data):
        for code in CODES:
            assert code not in shown
        for kept in KEPT:
            assert kept in shown
    assert text.count("[code]") == 4 and text.count("[link]") == 2
