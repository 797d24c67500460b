"""The masks' third version: codes named by their word outside code messages, codes spelled out or in
capitals, digits of every form, numbers across table cells and line ends, bare AWS secret keys; and the
ordinary text none of these may touch. Every number is invented (check digits computed here), every
domain reserved."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gateway.privacy import mask, mask_secrets
from gateway.privacy.masks import CODE, mask_typed
from gateway.privacy.text import DIGIT_FORMS, ascii_digits, may_hold_other_digits


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


def groups(number: str, sep: str = " ", size: int = 4) -> str:
    return sep.join(number[i : i + size] for i in range(0, len(number), size))


def digits_of(text: str) -> str:
    """Every digit of `text`, of any script or form, as ASCII, all else dropped."""
    return re.sub(r"[^0-9]", "", ascii_digits(text))


CARD = luhn_card("471829360415263")
FR_IBAN = iban("FR", "14508059410452736918254")
AWS_ID = "AKIAEXAMPLE7Q2W3E4R5"
AWS_SECRET = "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"
NBSP = "\u00a0"

# --- codes named by their word ------------------------------------------------------------------------

# Each holds the code 731904 (or 482913), written some way; none is a code message by the older rules.
NAMED_CODES = {
    "code, colon, spaced": "Code: 731 904 (valid 10 min)",
    "the code, colon": "The code: 731904",
    "code then the number": "Code 731904 expires soon",
    "first person": "My code is 482913",
    "first person, french": "Mon code est 482 913",
    "a code in a sentence": "ok so the code 482913 worked on the second try",
    "code, equals": "auth_code=482913",
    "a code as a json string": '{"code": "482913"}',
    "an attachment's name": "code-482913.pdf",
    "an attachment's name, snake case": "verification_code_482913.png",
    "a sender's name": "Example (code 482913) <no-reply@example.com>",
    "code, dashed": "Code 48-29-13, thanks",
    "code, dotted": "Code: 482.913",
    "code, digit by digit": "Code: 4 8 2 9 1 3",
    "code on the next line": "Code:\n482913",
    "code, one digit per line": "Code:\n4\n8\n2\n9\n1\n3\n",
    "passcode": "the passcode 482913 opens it",
    "pin": "PIN 4829 for the card",
    "otp": "OTP: 482913",
    "spanish": "mi código es 482913",
    "italian": "il codice 482913",
    "superscript digits": "Your code: ⁷³¹⁹⁰⁴",
    "circled digits": "Your code is ⑦③①⑨⓪④",
    "negative circled digits": "code ❼❸❶❾⓿❹",
    "subscript digits": "code ₇₃₁₉₀₄",
    "parenthesized digits": "code ⑺⑶⑴⑼⓪⑷",
    "full-width digits": "code ７３１９０４",
    "arabic-indic digits": "code ٧٣١٩٠٤",
    "mathematical bold digits": "code 𝟕𝟑𝟏𝟗𝟎𝟒",
    "spelled out": "My code is seven three one nine zero four",
    "spelled out, capitals and commas": "CODE: SEVEN, THREE, ONE, NINE, ZERO, FOUR",
    "spelled out, a few words after": "the code they sent me is: seven three one nine zero four",
    "spelled out, oh for zero": "code seven three one nine oh four",
    "spelled out, french": "Le code est sept trois un neuf zéro quatre",
    "spelled out, french, dashes": "code : sept-trois-un-neuf-zéro-quatre",
    "spelled out, german": "Der Code ist sieben drei eins neun null vier",
    "spelled out, italian": "il codice è sette tre uno nove zero quattro",
    "spelled out, a count just after the word": "Code: one two three four",
}


@pytest.mark.parametrize("text", NAMED_CODES.values(), ids=NAMED_CODES.keys())
def test_a_code_named_by_its_word_is_masked_however_it_is_written(text: str) -> None:
    masked = mask(text)
    assert CODE in masked
    assert not re.search(r"[0-9]{3}", digits_of(masked))
    assert not re.search(r"(?i)\b(?:seven|three|nine|sept|trois|neuf|sieben|siete)\b", masked)


LETTER_CODES = {
    "after is": "Your code is ABX-482",
    "after a colon": "Code: K7Q9PL",
    "before is your code": "ABX-482 is your login code",
    "with a prefix": "Your code is G-482913",
}


@pytest.mark.parametrize("text", LETTER_CODES.values(), ids=LETTER_CODES.keys())
def test_a_code_of_capitals_and_digits_is_masked_where_its_word_says_code(text: str) -> None:
    masked = mask(text)
    assert CODE in masked
    assert "ABX" not in masked and "482" not in masked and "K7Q9PL" not in masked


def test_every_digit_of_every_form_is_read_as_its_digit() -> None:
    """The glance sees each digit (decimal or a form of one: superscript, circled...), and the plain copy
    reads it as `unicodedata.digit` does; `DIGIT_FORMS` lists exactly the digits that are no decimal."""
    digits = [chr(point) for point in range(0x80, 0x110000) if chr(point).isdigit()]
    assert [digit for digit in digits if not may_hold_other_digits(digit.encode())] == []
    assert [digit for digit in digits if ascii_digits(digit) != str(unicodedata.digit(digit))] == []
    forms = re.compile(f"[{DIGIT_FORMS}]")
    assert [d for d in digits if bool(forms.fullmatch(d)) == d.isdecimal()] == []
    assert not may_hold_other_digits("“déjà” — 12 € … ’ «x» 🎉 ✅ ☕️ © ° ±".encode())


# --- numbers across cells and lines -------------------------------------------------------------------

SPLIT_NUMBERS = {
    "card, table cells on one line": groups(CARD),
    "card, tabs": groups(CARD, "\t"),
    "card, wrapped at a line end": f"{groups(CARD[:8])}\n{groups(CARD[8:])}",
    "card, wrapped with spaces around": f"{groups(CARD[:8])} \n {groups(CARD[8:])}",
    "card, cells padded": groups(CARD, "   "),
    "card, non-breaking spaces": groups(CARD, NBSP),
    "card, crlf": f"{groups(CARD[:8])}\r\n{groups(CARD[8:])}",
    "card, wrapped mid-group": f"{groups(CARD)[:12]}\n{groups(CARD)[12:]}",
    "card, wrapped mid-group, crlf": f"{groups(CARD)[:7]}\r\n{groups(CARD)[7:]}",
    "card, unbroken, wrapped": f"{CARD[:11]}\n{CARD[11:]}",
    "iban, wrapped": f"{groups(FR_IBAN[:12])}\n{groups(FR_IBAN[12:])}",
    "iban, tabs": groups(FR_IBAN, "\t"),
    "iban, table cells": groups(FR_IBAN, "  "),
}


@pytest.mark.parametrize("written", SPLIT_NUMBERS.values(), ids=SPLIT_NUMBERS.keys())
def test_a_card_or_iban_across_cells_tabs_or_a_line_end_is_masked(written: str) -> None:
    number = FR_IBAN if written.startswith("FR") else CARD
    for masker in (mask, mask_secrets):
        masked = masker(f"Details:\n{written}\nThanks, Jane")
        assert f"…{number[-4:]}]" in masked
        assert number[-12:] not in re.sub(r"[^0-9A-Z]", "", masked)


def test_a_blank_line_parts_two_numbers() -> None:
    # Each half alone is no card; with a blank line between, they are two numbers, not one card.
    text = f"Order {CARD[:8]}\n\n{CARD[8:]} shipped"
    assert mask_secrets(text) == text


# --- AWS secret keys ----------------------------------------------------------------------------------

AWS_SECRETS = {
    "after its label and a space": f"aws_secret_access_key {AWS_SECRET}",
    "after its label in capitals and a space": f"AWS_SECRET_ACCESS_KEY {AWS_SECRET}",
    "beside its id": f"{AWS_ID} {AWS_SECRET}",
    "beside its id, on the next line": f"{AWS_ID}\n{AWS_SECRET}",
    "before its id": f"{AWS_SECRET}  {AWS_ID}",
    "a csv row": f"Jane,,{AWS_ID},{AWS_SECRET},https://signin.aws.example.com/console",
    "a credentials file": f"[default]\naws_access_key_id = {AWS_ID}\naws_secret_access_key = {AWS_SECRET}\n",
}


@pytest.mark.parametrize("text", AWS_SECRETS.values(), ids=AWS_SECRETS.keys())
def test_a_bare_aws_secret_key_is_masked(text: str) -> None:
    for masker in (mask, mask_secrets):
        masked = masker(text)
        assert AWS_SECRET not in masked and "[secret: AWS secret key]" in masked


def test_forty_characters_beside_no_aws_id_stay() -> None:
    commit = "3f2a1b4c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a"  # lowercase hex: a commit, not a key
    text = f"{AWS_ID} was rotated in commit {commit}; see {AWS_SECRET[:20]}"
    assert commit in mask_secrets(text)
    lone = f"The build id is {AWS_SECRET}."  # the shape alone, no id, no label
    assert mask_secrets(lone) == lone


# --- what stays ---------------------------------------------------------------------------------------

# Ordinary text that the new forms could be mistaken for: each must come back unchanged from both masks.
LEFT_ALONE = {
    "a date and a time": "The meeting is on 2026-03-12 at 10:30, room 4.",
    "a date in words": "Sent on 12 March 2026, 09:41.",
    "a french phone": "Call me at 06 12 34 56 78 or +33 6 12 34 56 78.",
    "a us phone": "Call (555) 123-4567 after 5 pm.",
    "version numbers": "Version 3.11.7 fixed it; see release 2.14.1.",
    "prices": "The price is 1 299,00 € or $1,299.00, down from 1 499 €.",
    "bm25 scores": "BM25 scores: 12.4821, 9.3316, -0.0042",
    "a rank": "(rank -4.8213)",
    "an error code": "Error code 4040 from the server; exit code 1234.",
    "an error code in snake case": "error_code=5023",
    "a status code": "HTTP status code 5030 is odd",
    "a zip code": "zip code 94105",
    "a postal code": "postal code 75002",
    "a french postal code": "Code postal : 75002 Paris",
    "source code": "the source code 1234 lines long",
    "a review of code": "Your code is fine, but line 1234 of parser.py could be shorter.",
    "a count in words": "one two three four five six",
    "a french count": "un, deux, trois, quatre",
    "a count after code": "the code has one two three four steps",
    "number words in prose": "I have two cats and one dog, three fish and four birds.",
    "nulls near code": "[null, null, null, null] was the code output",
    "a name with a number": "The code uses UTF-8; Code: COVID-19 rules apply.",
    "a promo code": "Promo code SAVE20 at checkout",
    "years one per line": "Years:\n2019\n2020\n2021\n2022",
    "amounts in cells": "Totals\t1200\t1500\t1800\t2100",
    "a phone in cells": "Phone\t06\t12\t34\t56\t78",
    "a timestamp": "Timestamp 1773311400000 in ms",
    "superscripts in prose": "10² m and x³, H₂O, a footnote¹",
    "circled list marks": "① Buy milk ② Call Jane ③ Pay 1200 €",
    "an isbn": "ISBN 978-2-07-036822-8 and ISSN 0317-8471",
    "a gpio pin": "pin 4 of the header, GPIO pin 1234",
    "unicode and encode": "unicode 15 and encode 1234",
    "a code of conduct": "Meeting code of conduct 2026",
    "the code civil": "dans le code civil, article 1240",
    "a table of numbers": "| 4000 | 4500 | 5000 | 5500 |",
    "a sha beside words": "commit 3f2a1b4c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a by Jane",
    "a pinned note": "pinned 4821 times, shopping 1234",
    "a year after code": "Advent of Code 2023, day 5",
    "a log file of an error code": "error_code_1234.log",
    "a version after code": "Visual Studio Code 1.85.0",
    "an error's number in json": '{"status": "error", "code": 4001, "message": "invalid token"}',
    "a range of years after code": "Code 2025-2026 of the association",
    "a time after code": "code review at 10:30",
    "a phone number after code": "code 06 12 34 56 78",
}


@pytest.mark.parametrize("text", LEFT_ALONE.values(), ids=LEFT_ALONE.keys())
def test_ordinary_text_the_new_forms_resemble_is_left_alone(text: str) -> None:
    assert mask(text) == text
    assert mask_secrets(text) == text


def test_masks_typed_by_an_agent_take_codes_and_keep_the_rest() -> None:
    assert mask_typed("482913") == CODE
    assert mask_typed("find 48 29 13 please") == f"find {CODE} please"
    for kept in ("2026-03-12", "10:30", "1 200 €", "room 204", "v2.14.1", "12", "123456789"):
        assert mask_typed(kept) == kept


# --- masking twice ------------------------------------------------------------------------------------

CHUNKS = [
    "code", "Code: ", "code is ", "my code is ", "error code ", "zip code ", "passcode ", "PIN ", "OTP: ",
    "482913", "731 904", "4 8 2 9 1 3", "482.913", "ABX-482", "K7Q9PL", " is your code", "COVID-19",
    "seven", "three", "one", "nine", "zero", "four", "sept", "trois", "un", "neuf", "null", ", ", " ", "-",
    "\n", "\n\n", "\t", "[", "]", "⁷³¹", "⑦③", "７３", NBSP, CARD[:8], CARD[8:], groups(CARD), FR_IBAN[:12],
    FR_IBAN[12:], AWS_ID, AWS_SECRET, "aws_secret_access_key ", "2026", "12:30", "they sent me ",
]
texts = st.lists(st.one_of(st.sampled_from(CHUNKS), st.text(max_size=4)), max_size=20).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts)
@example("Code: K7Q9PL482913")  # its digits alone were masked, leaving a "K7Q9PL[code]" that read as a code again
@example("482913code4 8 2 9 1 3")  # "[code] 8 2 9 1 3": the placeholder's word named the digits after it
def test_masking_the_new_forms_twice_changes_nothing_more(text: str) -> None:
    once = mask(text)
    assert mask(once) == once
    secrets_once = mask_secrets(text)
    assert mask_secrets(secrets_once) == secrets_once
    typed = mask_typed(text)
    assert mask_typed(typed) == typed
