"""The privacy masks, form by form: what they hide, what they leave alone, and that masking twice changes
nothing. Every number here is invented, its check digits computed below; every domain is reserved."""

from __future__ import annotations

import base64
import hashlib
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gateway.privacy import mask, mask_secrets
from gateway.privacy.masks import CODE, LINK, PASSWORD_MESSAGE, SIGN_IN_LINK, TOKEN_LINK
from gateway.privacy.text import may_hold_other_digits

# --- invented numbers with their check digits ---------------------------------------------------------


def iban(country: str, bban: str) -> str:
    """An IBAN for an invented account: the check digits of ISO 13616 (mod 97) computed here."""
    number = int("".join(str(int(ch, 36)) for ch in bban + country + "00"))
    return f"{country}{98 - number % 97:02d}{bban}"


def broken(number: str, position: int = -1) -> str:
    """`number` with one digit changed, so that its check fails."""
    digit = number[position]
    replaced = str((int(digit) + 1) % 10)
    return number[:position] + replaced + (number[position + 1 :] if position != -1 else "")


def luhn_card(prefix: str, length: int) -> str:
    """A card number of `length` digits opening on `prefix`, its last digit completing Luhn's check."""
    body = (prefix + "718293604152637485960")[: length - 1]
    for last in "0123456789":
        if luhn_ok(body + last):
            return body + last
    raise AssertionError("unreachable")


def luhn_ok(digits: str) -> bool:
    total = 0
    for index, ch in enumerate(reversed(digits)):
        value = int(ch) * (2 if index % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def nir(body: str) -> str:
    """A French NIR from its 13 first characters, the key computed as the official rule says (2A→19, 2B→18)."""
    number = int(body[:5] + {"2A": "19", "2B": "18"}.get(body[5:7], body[5:7]) + body[7:])
    return f"{body}{97 - number % 97:02d}"


def grouped(number: str, sizes: list[int] | int = 4, sep: str = " ") -> str:
    if isinstance(sizes, int):
        sizes = [sizes] * (len(number) // sizes + 1)
    pieces, start = [], 0
    for size in sizes:
        if start < len(number):
            pieces.append(number[start : start + size])
            start += size
    return sep.join(pieces)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def digits_of(text: str) -> str:
    """The digits and capitals of `text`, every space and mark dropped: a number however it was written."""
    return re.sub(r"[^0-9A-Z]", "", text)


NBSP, NNBSP, THIN, FIGURE, ZWSP, EN_DASH = "\u00a0", "\u202f", "\u2009", "\u2007", "\u200b", "\u2013"

FR_IBAN = iban("FR", "14508059410452736918254")
DE_IBAN = iban("DE", "512108001245126199")
GB_IBAN = iban("GB", "EXMP40516212345678")
NL_IBAN = iban("NL", "EXMP5081392746")
BE_IBAN = iban("BE", "731045129806")
IT_IBAN = iban("IT", "Q0832011240000004815162")
NO_IBAN = iban("NO", "15036442893")
MT_IBAN = iban("MT", "EXMP048210009913ABCDEF45XY7")
BR_IBAN = iban("BR", "18273645000092837465019C2")  # 29 characters, a letter among the last ones

VISA = luhn_card("4", 16)
INVENTED_UUID = "7c1e2f3a-9b4d-4e8f-a1b2-c3d4e5f60718"
INVENTED_PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(7, 250, 3))).decode()
NIR_MAN = nir("1930749123058")
NIR_WOMAN = nir("2920175114203")
NIR_2A = nir("291042A031176")
NIR_2B = nir("178032B123456")

# --- one-time codes -----------------------------------------------------------------------------------

CODE_FORMS = {
    "plain": "Your verification code is 482913.",
    "spaced": "Your verification code is 482 913.",
    "dashed": "Your verification code is 482-913.",
    "pairs": "Your verification code is 48 29 13.",
    "digit by digit": "Your verification code is 4 8 2 9 1 3.",
    "non-breaking space": f"Your verification code is 482{NBSP}913.",
    "narrow non-breaking space": f"Your code: 48{NNBSP}29{NNBSP}13",
    "thin spaces between digits": f"Your code: {THIN.join('482913')}",
    "figure spaces": f"Your code: 482{FIGURE}913",
    "zero-width spaces": f"Your login code: {ZWSP.join('482913')}",
    "en dash": f"Your login code: 482{EN_DASH}913",
    "one digit per line": "Your code:\n4\n8\n2\n9\n1\n3\nThanks, Example",
    "html table turned to text": "Your security code\n\n| 4 | 8 | 2 | 9 | 1 | 3 |\n\nIt expires soon.",
    "table cells on blank lines": "Your security code\n\n 4 \n\n 8 \n\n 2 \n\n 9 \n\n 1 \n\n 3 \n\n",
    "boxes": "Your one-time code: [4][8][2][9][1][3]",
    "box drawing": "Your one-time code:\n│ 4 │ 8 │ 2 │ 9 │ 1 │ 3 │",
    "subject line": "482913 is your Example verification code",
    "subject with a prefix": "G-482913 is your Example verification code",
    "quoted reply": "Thanks!\n\n> From: Example <no-reply@example.com>\n> Your code is 482913\n> Thanks",
    "quoted digit by digit": "> Your code:\n> 4\n> 8\n> 2\n> 9\n> 1\n> 3\n",
    "after a warning": "Never share this code. Example staff will never ask for it.\n\nYour code: 482913",
    "far down a long text": "Your verification code is below.\n\n"
    + "We care about your account and its safety. " * 150
    + "\n\nHere it is: 482913",
    "in capitals": "YOUR VERIFICATION CODE IS 482913",
    "otp": "OTP 482913 for your payment of 12.50 EUR.",
    "2fa": "Your 2FA code: 482913",
    "passcode": "Use 482913 as your Example passcode.",
    "one-time password": "Your one-time password is 482913",
    "login code": "Your Example login code: 482 913",
    "use it to sign in": "Use 482913 to sign in to Example.",
    "enter it to verify": "Enter 482 913 to verify your address.",
    "french": "Votre code de vérification : 482 913",
    "french, your code": "Voici votre code : 48 29 13",
    "german": "Ihr Bestätigungscode lautet 48-29-13.",
    "spanish": "Tu código es 482913",
    "italian": "Il tuo codice di verifica è 482913",
    "next to a time and a date": "Your code is 482913, sent at 12:30 on 2026-03-12.",
    "dotted after the code's words": "Your verification code is 482.913",
    "dotted after a colon": "Your login code: 48.29.13 (valid 10 minutes)",
    "dotted, german": "Ihr Bestätigungscode lautet 482.913.",
    "don't share the code": "Don't share the code 482913",
    "don't share, typographic apostrophe": "Don’t share the code 482913 with anyone.",
    "do not share, code after the warning": "Do not share this code with anyone: 482913",
    "never share your pin": "Never share your PIN with anyone. 482913",
    "french, do not share": "ne partagez pas le code 482913",
    "french, never give": "Ne communiquez jamais ce code : 482 913",
    "spanish, do not share": "No compartas este código con nadie: 482913",
    "german, do not share": "Teilen Sie diesen Code nicht mit anderen: 482913",
    "italian, do not share": "Non condividere questo codice con nessuno: 482913",
    "portuguese, do not share": "Não compartilhe este código com ninguém: 482913",
    "portuguese, verification code": "Seu código de verificação é 482913",
    "portuguese, your code": "O seu código é 482 913",
}


@pytest.mark.parametrize("text", CODE_FORMS.values(), ids=CODE_FORMS.keys())
def test_masks_every_written_form_of_a_code(text: str) -> None:
    masked = mask(text)
    assert CODE in masked
    assert "482913" not in digits_of(masked)


FULL_WIDTH = "４８２９１３"
OTHER_SCRIPT_CODES = {
    "full-width digits": f"Your verification code is {FULL_WIDTH}.",
    "full-width, spaced": "Your verification code is ４８２\u3000９１３.",
    "full-width, french": "Votre code de vérification : ４８２ ９１３",
    "arabic-indic digits": "رمز التحقق الخاص بك: ٤٨٢٩١٣ (your verification code)",
    "persian digits": "Your verification code is ۴۸۲۹۱۳",
    "devanagari digits": "आपका verification code: ४८२९१३",
    "thai digits": "Your OTP is ๔๘๒๙๑๓",
    "mathematical bold digits": "Your login code: 𝟒𝟖𝟐𝟗𝟏𝟑",
    "ascii and full-width mixed": "Your code is 48２９13",
}


@pytest.mark.parametrize("text", OTHER_SCRIPT_CODES.values(), ids=OTHER_SCRIPT_CODES.keys())
def test_masks_codes_written_in_the_digits_of_any_script(text: str) -> None:
    masked = mask(text)
    assert CODE in masked
    assert not any(ch.isdecimal() for ch in masked.replace("(your verification code)", ""))


def test_every_decimal_digit_of_unicode_is_seen_by_the_masks_glance() -> None:
    """The masks read other scripts' digits only in a text where their glance at the UTF-8 saw one."""
    digits = [chr(point) for point in range(0x80, 0x110000) if chr(point).isdecimal()]
    assert len(digits) > 600
    assert [digit for digit in digits if not may_hold_other_digits(digit.encode())] == []
    assert not may_hold_other_digits("café “déjà” 🎉☕️ 会議 Встреча ελληνικά Tiếng Việt".encode())


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Your PIN is 4821", "4821"),
        ("Your security code: 48291357", "48291357"),
        ("Your code is 2026", "2026"),
        ("Your verification code is 0042 (four digits, leading zeros kept)", "0042"),
    ],
    ids=["four digits", "eight digits", "a code that looks like a year", "leading zeros"],
)
def test_masks_codes_of_four_to_eight_digits(text: str, code: str) -> None:
    masked = mask(text)
    assert CODE in masked
    assert code not in digits_of(masked)


def test_masks_every_code_of_a_message_wherever_it_is() -> None:
    text = (
        "Subject: 482913 is your Example code\n\nYour code is 482 913.\n\n| 4 | 8 | 2 | 9 | 1 | 3 |\n\n"
        + "Thanks for using Example. " * 100
        + "\n\n> Your previous code was 771 204"
    )
    masked = mask(text)
    assert masked.count(CODE) == 4
    assert "482913" not in digits_of(masked) and "771204" not in digits_of(masked)


KEPT_IN_A_CODE_MESSAGE = {
    "a time": "12:30",
    "a time with seconds": "09:41:07",
    "an iso date": "2026-03-12",
    "a numeric date": "12/03/2026",
    "a dotted date": "12.03.2026",
    "a day-month-year date with dashes": "12-03-2026",
    "a month and a year": "March 2026",
    "a full date": "March 12, 2026",
    "a french date": "12 mars 2026",
    "a copyright line": "© 2026 Example Inc.",
    "a range of years": "2025-2026",
    "a french mobile": "+33 6 12 34 56 78",
    "a french phone": "06 12 34 56 78",
    "a us phone": "(555) 123-4567",
    "an amount": "1,250.00 EUR",
    "a version": "version 2.14.1",
    "a duration": "10 minutes",
    "an amount with a space, euro after": "1 200 €",
    "an amount, euro before": "€1 200",
    "an amount with a currency code": "1 200 EUR",
    "a currency code before": "USD 4 500",
    "a franc amount": "149 500 CHF",
    "an amount with cents": "1 299,00 €",
    "a time written with a space": "10 30",
    "a late time with a space": "23 59",
    "a room": "room 4 512",
    "a french room": "salle 4512",
    "a german room": "Raum 2 104",
    "a gate": "gate 2 104",
    "a short phone number": "call 3179",
    "a short number to text": "text STOP to 36 60",
    "a date with spaces": "12 03 2026",
    "a full-width amount": "１ ２００ €",
}


@pytest.mark.parametrize("kept", KEPT_IN_A_CODE_MESSAGE.values(), ids=KEPT_IN_A_CODE_MESSAGE.keys())
def test_a_code_message_keeps_its_dates_times_phones_and_amounts(kept: str) -> None:
    masked = mask(f"Your verification code is 482913. Sent {kept}, for {kept}.")
    assert "482913" not in masked
    assert masked.count(kept) == 2


WITHOUT_A_CODE = {
    "an order number": "Order #123456 has shipped and arrives on Friday.",
    "an invoice": "Invoice 2026-0042: 1,250.00 EUR, due in 30 days.",
    "source code lines": "The source code fails at line 1234 of parser.py.",
    "a review of your code": "Your code is fine, but line 1234 of parser.py could be shorter.",
    "this is your code": "This is your code from yesterday; it ran in 1250 ms.",
    "use this code": "Use this code instead:\n\nfor i in range(4096):\n    pass",
    "french review": "Votre code compile. Le test 4821 échoue encore.",
    "a room": "The meeting moved to room 4821, building 7.",
    "a phone": "Call me at 06 12 34 56 78 or +33 6 12 34 56 78.",
}


@pytest.mark.parametrize("text", WITHOUT_A_CODE.values(), ids=WITHOUT_A_CODE.keys())
def test_numbers_stay_in_a_message_that_is_not_a_code_message(text: str) -> None:
    assert mask(text) == text


# --- links --------------------------------------------------------------------------------------------

SIGN_IN_LINKS = {
    "reset with a token": "https://example.com/reset?token=aB3dE5fG7h",
    "without a scheme": "example.com/reset?token=aB3dE5fG7h",
    "in capitals": "HTTPS://EXAMPLE.COM/LOGIN?NEXT=%2FINBOX",
    "www without a scheme": "www.example.com/password/reset/48a1",
    "magic link": "https://example.com/magic-link/abc",
    "verify an address": "https://example.net/verify-email?u=42",
    "confirm an account": "https://example.org/account/confirm/abc",
    "sign-in": "https://example.com/sign-in",
    "signin": "https://app.example.com/signin?next=/",
    "oauth callback": "https://example.com/oauth2/callback?state=x",
    "activate": "https://example.com/activate/7f3a",
    "french reset": "https://example.org/mot-de-passe/reinitialiser",
    "a path with a port": "http://localhost:8080/login",
}


@pytest.mark.parametrize("link", SIGN_IN_LINKS.values(), ids=SIGN_IN_LINKS.keys())
def test_masks_sign_in_reset_and_confirm_links(link: str) -> None:
    masked = mask(f"Open {link} to go on.")
    assert masked == f"Open {SIGN_IN_LINK} to go on."


TOKEN_LINKS = {
    "token parameter": "https://example.com/unsubscribe?list=news&token=aB3dE5fG7h",
    "access token": "https://example.com/cb#access_token=xyz123",
    "key": "https://maps.example.com/api?key=xyz123",
    "code": "https://example.com/cb?code=xyz123&state=1",
    "signature": "https://files.example.net/report.pdf?expires=1&sig=AbC123",
    "aws signed": "https://bucket.example.com/f.pdf?X-Amz-Signature=abc123",
    "session": "https://example.com/share?session=abc123",
    "random path part": "https://example.com/d/aB3dE5fG7hJ9kL1mN3pQ5rS",
}


@pytest.mark.parametrize("link", TOKEN_LINKS.values(), ids=TOKEN_LINKS.keys())
def test_masks_links_that_carry_a_token(link: str) -> None:
    assert mask(f"See {link}") == f"See {TOKEN_LINK}"


def test_a_link_keeps_what_surrounds_it() -> None:
    text = "(see https://example.com/reset?token=abc123). Or <https://example.com/login>, then"
    assert mask(text) == f"(see {SIGN_IN_LINK}). Or <{SIGN_IN_LINK}>, then"


ORDINARY_LINKS = {
    "a blog post": "https://example.org/blog/post",
    "a page with a query": "https://example.org/search?q=library+plans&page=2",
    "an author page": "https://example.org/authors/jane",
    "a word holding sign-in letters": "https://example.net/blog/designing-forms",
    "presets": "https://example.org/docs/presets/",
    "a commit": "https://example.org/repo/commit/3f2a9c81b4d5e6f70123456789abcdef01234567",
    "a uuid": f"https://example.org/items/{INVENTED_UUID}",
    "a dated path": "example.org/blog/2026/03/12/notes",
    "a video with a timestamp": "https://video.example.com/watch?v=Xk2pL9qRt3Z&t=30s",
    "a host alone": "https://login.example.com/",
    "a mail address": "jane@example.com",
    "a slack channel": "https://example.slack.com/archives/C0123ABCD/p1700000000000100",
    "a discord channel": "https://discord.com/channels/123456789012345678/987654321098765432",
    "a git remote": "https://example.com/example/repo.git",
    "a profile handle": "https://example.com/@jane",
}


@pytest.mark.parametrize("link", ORDINARY_LINKS.values(), ids=ORDINARY_LINKS.keys())
def test_ordinary_links_are_left_alone(link: str) -> None:
    text = f"Read {link} when you have time."
    assert mask(text) == text


def test_a_code_message_loses_every_link_its_sign_in_links_named_as_such() -> None:
    text = (
        "Your verification code is 482913.\n"
        "Or sign in at once: https://accounts.example.com/login/verify?token=Zx81kQpLr7TmWv2Ns4Yb\n"
        "Help: https://example.com/help/security\n"
        "Not you? www.example.com/account/activity\n"
        "Tracked: https://t.example.net/track/77123456/open.gif and example.org/r/Xk29?u=3"
    )
    masked = mask(text)
    assert masked == (
        f"Your verification code is {CODE}.\nOr sign in at once: {SIGN_IN_LINK}\nHelp: {LINK}\n"
        f"Not you? {LINK}\nTracked: {LINK} and {LINK}"
    )


def test_a_dotted_code_is_masked_wherever_the_message_writes_it() -> None:
    text = "Or use 395.118 to sign in. Your backup code is 395.118. Total 1.250 EUR."
    assert mask(text) == f"Or use {CODE} to sign in. Your backup code is {CODE}. Total 1.250 EUR."


def test_a_code_message_masks_a_connection_string_whole() -> None:
    text = "Your code is 482913. Database: postgres://jane:S3cretPw@db.example.com/app, then log in."
    assert mask(text) == f"Your code is {CODE}. Database: {LINK}, then log in."


def test_a_code_message_keeps_mail_addresses_and_bare_host_names() -> None:
    text = "Your code is 482913. Questions? Write to help@example.com or visit example.com today."
    assert mask(text) == f"Your code is {CODE}. Questions? Write to help@example.com or visit example.com today."


# --- passwords in URLs and webhooks ---------------------------------------------------------------------

URL_CREDENTIALS = {
    "postgres": ("postgres://jane:S3cretPw@db.example.com/app", "postgres://jane:[secret: password]@db.example.com/app"),
    "postgresql with a port": (
        "postgresql://app_user:q8!Zr2mK@db.example.net:5432/orders",
        "postgresql://app_user:[secret: password]@db.example.net:5432/orders",
    ),
    "mysql": ("mysql://root:Tr0ub4dor@127.0.0.1:3306/shop", "mysql://root:[secret: password]@127.0.0.1:3306/shop"),
    "redis without a user": ("redis://:Zq9pW2xR@cache.example.net:6379/0", "redis://:[secret: password]@cache.example.net:6379/0"),
    "rediss": ("rediss://default:Zq9pW2xR@cache.example.net:6380", "rediss://default:[secret: password]@cache.example.net:6380"),
    "amqp": ("amqp://guest:gu3st-Pw@rabbit.example.org:5672/vhost", "amqp://guest:[secret: password]@rabbit.example.org:5672/vhost"),
    "mongodb+srv, percent-encoded": (
        "mongodb+srv://app:Tr0ub4dor%263@cluster0.example.net/?retryWrites=true",
        "mongodb+srv://app:[secret: password]@cluster0.example.net/?retryWrites=true",
    ),
    "https": ("https://jane:hunter2@example.com/dav/", "https://jane:[secret: password]@example.com/dav/"),
    "a password holding an at sign": ("https://jane:p@ss@word1@example.com/", "https://jane:[secret: password]@example.com/"),
    "ftp": ("ftp://jane:hunter2@files.example.com", "ftp://jane:[secret: password]@files.example.com"),
    "in a setting": (
        "DATABASE_URL=postgres://app:Xk29pLq7@db.example.org/app",
        "DATABASE_URL=postgres://app:[secret: password]@db.example.org/app",
    ),
    "a token given to git as the user": (
        "git clone https://Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8@example.com/repo.git",
        "git clone https://[secret: token]@example.com/repo.git",
    ),
}


@pytest.mark.parametrize(("text", "masked"), URL_CREDENTIALS.values(), ids=URL_CREDENTIALS.keys())
def test_masks_the_password_of_a_url_and_keeps_its_user_and_host(text: str, masked: str) -> None:
    assert mask_secrets(text) == masked
    assert mask_secrets(f"Connect with {text} then.") == f"Connect with {masked} then."
    secret = text.split("://", 1)[1].rsplit("@", 1)[0].split(":", 1)[-1]
    assert secret not in mask(text)


URLS_LEFT_ALONE = {
    "no credentials": "postgres://localhost/app",
    "a user alone": "postgres://jane@db.example.com/app",
    "an ssh user": "ssh://git@example.com:2222/repo.git",
    "a placeholder from the environment": "postgres://app:${POSTGRES_PASSWORD}@db:5432/app",
    "a placeholder in angle brackets": "mysql://root:<password>@localhost/db",
    "the word password, as in docs": "postgresql://user:password@localhost:5432/mydb",
    "an f-string": "url = f'postgres://{user}:{password}@{host}/{db}'",
    "an ipv6 host": "https://[2001:db8::1]:8443/status",
    "a port and no user": "redis://localhost:6379/0",
    "an scp-like remote": "git@example.com:example/repo.git",
    "a mailto link": "mailto:jane@example.com",
    "a git remote listing": "origin  https://example.com/example/repo.git (fetch)",
}


@pytest.mark.parametrize("text", URLS_LEFT_ALONE.values(), ids=URLS_LEFT_ALONE.keys())
def test_urls_without_a_password_are_left_alone(text: str) -> None:
    assert mask_secrets(text) == text
    assert mask(text) == text


WEBHOOKS = {
    "slack": ("https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8", "[secret: Slack webhook]"),
    "slack, no scheme": ("hooks.slack.com/services/T01ABCDEF/B02GHIJKL/Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8", "[secret: Slack webhook]"),
    "slack workflow": ("https://hooks.slack.com/workflows/T01ABCDEF/A02GHIJKL/123456789/Ab1Cd2Ef3Gh", "[secret: Slack webhook]"),
    "discord": (
        "https://discord.com/api/webhooks/123456789012345678/Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2-yz_",
        "[secret: Discord webhook]",
    ),
    "discordapp, api version": (
        "https://discordapp.com/api/v10/webhooks/123456789012345678/Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9",
        "[secret: Discord webhook]",
    ),
    "discord canary": (
        "https://canary.discord.com/api/webhooks/123456789012345678/Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9",
        "[secret: Discord webhook]",
    ),
}


@pytest.mark.parametrize(("url", "label"), WEBHOOKS.values(), ids=WEBHOOKS.keys())
def test_masks_webhook_addresses_whole(url: str, label: str) -> None:
    assert mask_secrets(f"curl -X POST {url} -d @msg.json") == f"curl -X POST {label} -d @msg.json"
    assert "Ab1Cd2Ef3Gh" not in mask(f"Post to {url}")


def test_a_mention_of_the_webhook_host_is_left_alone() -> None:
    text = "Slack's incoming webhooks live under hooks.slack.com; ask Jane for ours."
    assert mask_secrets(text) == text
    assert mask(text) == text


# --- messages giving a password -----------------------------------------------------------------------

PASSWORD_MESSAGES = {
    "your password is": "Welcome! Your password is: Tr0ub4dor&3",
    "temporary password": "Here is your temporary password. Change it soon.",
    "new password, no colon": "Your new password is Xy7-pQ2z",
    "a line with only the password": "Login: jane\nPassword: hunter2\n",
    "a code first": "Your verification code is 482913.\n\nYour password is q8!Zr2mK",
    "french": "Votre mot de passe provisoire est abc",
    "french with a colon": "Identifiant : jane\nMot de passe : Gq8!wz2",
    "german": "Ihr Passwort lautet Ab3dEf9",
    "spanish": "Tu contraseña es Gq8!wz2",
}


@pytest.mark.parametrize("text", PASSWORD_MESSAGES.values(), ids=PASSWORD_MESSAGES.keys())
def test_a_message_giving_a_password_is_kept_whole(text: str) -> None:
    assert mask(text) == PASSWORD_MESSAGE


NOT_PASSWORD_MESSAGES = {
    "forgot your password": "Forgot your password? No problem.",
    "about to expire": "Your password is about to expire.",
    "was changed": "Your password was changed on March 12.",
    "a rule": "Passwords need at least 12 characters.",
    "a rule after a colon": "Password: at least 12 characters, one of them a digit",
    "a password hidden by stars": "Login: jane\nPassword: ********\n",
}


@pytest.mark.parametrize("text", NOT_PASSWORD_MESSAGES.values(), ids=NOT_PASSWORD_MESSAGES.keys())
def test_a_message_speaking_of_passwords_without_giving_one_is_kept(text: str) -> None:
    assert mask(text) == text


def test_a_one_time_password_is_a_code_not_a_password() -> None:
    assert mask("Your one-time password is 482913.") == f"Your one-time password is {CODE}."


# --- IBANs --------------------------------------------------------------------------------------------

IBANS = {
    "france, grouped by four": grouped(FR_IBAN),
    "france, unbroken": FR_IBAN,
    "france, non-breaking spaces": grouped(FR_IBAN, 4, NBSP),
    "france, thin spaces": grouped(FR_IBAN, 4, THIN),
    "france, narrow non-breaking spaces": grouped(FR_IBAN, 4, NNBSP),
    "france, double spaces": grouped(FR_IBAN, 4, "  "),
    "germany": grouped(DE_IBAN),
    "united kingdom, letters in the account": grouped(GB_IBAN),
    "netherlands": grouped(NL_IBAN),
    "belgium": grouped(BE_IBAN),
    "italy": grouped(IT_IBAN),
    "norway, the shortest": NO_IBAN,
    "malta, letters at the end": grouped(MT_IBAN),
    "brazil": grouped(BR_IBAN),
    "france, small letters": grouped(FR_IBAN.lower()),
    "france, small letters, unbroken": FR_IBAN.lower(),
    "germany, small letters": grouped(DE_IBAN.lower()),
    "united kingdom, small letters": grouped(GB_IBAN.lower()),
    "netherlands, small letters": grouped(NL_IBAN.lower()),
    "france, capital country, small letters after": FR_IBAN[:2] + grouped(FR_IBAN.lower())[2:],
    "france, dashes": grouped(FR_IBAN, 4, "-"),
    "germany, dashes and small letters": grouped(DE_IBAN.lower(), 4, "-"),
    "belgium, en dashes": grouped(BE_IBAN, 4, EN_DASH),
}


@pytest.mark.parametrize("written", IBANS.values(), ids=IBANS.keys())
def test_masks_ibans_of_any_country_written_with_any_spaces(written: str) -> None:
    compact = digits_of(written)
    masked = mask_secrets(f"Please pay to {written}. Thanks")
    assert masked == f"Please pay to [IBAN …{compact[-4:]}]. Thanks"
    assert compact not in digits_of(masked)
    assert mask(f"IBAN: {written}") == f"IBAN: [IBAN …{compact[-4:]}]"


def test_masks_two_ibans_side_by_side() -> None:
    text = f"{grouped(FR_IBAN)} {grouped(DE_IBAN)}"
    assert mask_secrets(text) == f"[IBAN …{FR_IBAN[-4:]}] [IBAN …{DE_IBAN[-4:]}]"


def test_an_iban_followed_by_its_bic_keeps_the_bic() -> None:
    text = f"IBAN {grouped(FR_IBAN)} BIC EXMPFRPP"
    assert mask_secrets(text) == f"IBAN [IBAN …{FR_IBAN[-4:]}] BIC EXMPFRPP"


BAD_IBANS = {
    "a wrong digit": grouped(broken(FR_IBAN)),
    "a wrong check": grouped(FR_IBAN[:2] + broken(FR_IBAN[:4], 3)[2:] + FR_IBAN[4:]),
    "one character short": grouped(FR_IBAN[:-1]),
    "lowercase letters in a word": "the FR76 rule",
    "small letters, a wrong digit": grouped(broken(FR_IBAN).lower()),
    "dashes, a wrong digit": grouped(broken(DE_IBAN), 4, "-"),
    "small letters, not grouped by four": "fr76 30006 00001 12345 67890 189",
    "small letters, an unknown country": grouped(iban("QQ", "12345678901234").lower()),
    "a browser and a release": "ie11 and chrome are both supported by this release",
    "a product key": "ab12-cdef-3456-7890-ghij",
}


@pytest.mark.parametrize("written", BAD_IBANS.values(), ids=BAD_IBANS.keys())
def test_an_iban_whose_check_fails_is_left_alone(written: str) -> None:
    text = f"Account {written} on file."
    assert mask_secrets(text) == text
    assert mask(text) == text


# --- payment cards ------------------------------------------------------------------------------------

CARDS = {
    "visa, spaces": grouped(VISA),
    "visa, dashes": grouped(VISA, 4, "-"),
    "visa, unbroken": VISA,
    "visa, non-breaking spaces": grouped(VISA, 4, NBSP),
    "visa, thin spaces": grouped(VISA, 4, THIN),
    "visa, en dashes": grouped(VISA, 4, EN_DASH),
    "visa, 13 digits": luhn_card("4", 13),
    "mastercard 51-55": grouped(luhn_card("53", 16)),
    "mastercard 2221-2720": grouped(luhn_card("2223", 16)),
    "american express": grouped(luhn_card("37", 15), [4, 6, 5]),
    "discover 6011": grouped(luhn_card("6011", 16)),
    "discover 65": grouped(luhn_card("65", 16)),
    "discover 644": grouped(luhn_card("645", 16)),
    "jcb": grouped(luhn_card("3530", 16)),
    "diners 36, 14 digits": grouped(luhn_card("36", 14), [4, 6, 4]),
    "diners 300": grouped(luhn_card("301", 16)),
    "unionpay": grouped(luhn_card("62", 16)),
    "unionpay, 19 digits": grouped(luhn_card("62", 19)),
    "maestro": grouped(luhn_card("6759", 16)),
    "visa, dots": grouped(VISA, 4, "."),
    "visa, slashes": grouped(VISA, 4, "/"),
    "mastercard, dots": grouped(luhn_card("53", 16), 4, "."),
    "american express, dots": grouped(luhn_card("37", 15), [4, 6, 5], "."),
}


@pytest.mark.parametrize("written", CARDS.values(), ids=CARDS.keys())
def test_masks_payment_cards_with_any_spaces_or_dashes(written: str) -> None:
    compact = digits_of(written)
    masked = mask_secrets(f"Card {written}, exp 12/28.")
    assert masked == f"Card [card …{compact[-4:]}], exp 12/28."
    assert compact not in digits_of(masked)


def test_masks_a_card_written_in_full_width_digits() -> None:
    full_width = grouped(VISA.translate(str.maketrans("0123456789", "０１２３４５６７８９")))
    assert mask_secrets(f"Card {full_width}, exp 12/28.") == f"Card [card …{VISA[-4:]}], exp 12/28."
    assert mask(f"カード {full_width}") == f"カード [card …{VISA[-4:]}]"


NOT_CARDS = {
    "luhn fails": grouped(broken(VISA)),
    "unknown issuer": grouped(luhn_card("1", 16)),
    "a timestamp in milliseconds": "1773311400000",
    "a long order number": broken(luhn_card("4", 16)),
    "a siret": grouped(luhn_card("552", 14), [3, 3, 3, 5]),
    "a siret unbroken": luhn_card("552", 14),
    "a siret opening like a diners card": grouped(luhn_card("362", 14), [3, 3, 3, 5]),
    "a visa prefix with 14 digits": luhn_card("4", 14),
    "an amex prefix laid out 4-6-4": grouped(luhn_card("37", 14), [4, 6, 4]),
    "a row of numbers that passes luhn": grouped(VISA, [2, 4, 2, 4, 4]),
    "a maestro prefix with 14 digits": grouped(luhn_card("67", 14), [4, 6, 4]),
    "dots, luhn fails": grouped(broken(VISA), 4, "."),
    "dots and slashes mixed": f"{VISA[:4]}.{VISA[4:8]}/{VISA[8:12]}.{VISA[12:]}",
    "a french phone with dots": "06.12.34.56.78",
    "an oid": "1.3.6.1.4.1.311.21.8",
    "a dotted date and time": "2026.03.12.1030",
    "a path of numbers": "/var/cache/4111/1111/1111",
    "a row of slashed numbers": "1200/3400/5600/7800",
}


@pytest.mark.parametrize("written", NOT_CARDS.values(), ids=NOT_CARDS.keys())
def test_numbers_that_fail_the_card_checks_are_left_alone(written: str) -> None:
    text = f"Reference {written} noted."
    assert mask_secrets(text) == text
    assert mask(text) == text


def test_a_card_followed_by_its_security_number_keeps_only_the_card_masked() -> None:
    masked = mask_secrets(f"{grouped(VISA)} 123")
    assert masked.startswith(f"[card …{VISA[-4:]}]")
    assert VISA not in digits_of(masked)


# --- French NIRs --------------------------------------------------------------------------------------

NIRS = {
    "grouped as on the card": grouped(NIR_MAN, [1, 2, 2, 2, 3, 3, 2]),
    "unbroken": NIR_MAN,
    "non-breaking spaces": grouped(NIR_WOMAN, [1, 2, 2, 2, 3, 3, 2], NBSP),
    "thin spaces": grouped(NIR_WOMAN, [1, 2, 2, 2, 3, 3, 2], THIN),
    "key apart": grouped(NIR_MAN, [13, 2]),
    "corsica 2a": grouped(NIR_2A, [1, 2, 2, 2, 3, 3, 2]),
    "corsica 2b, unbroken": NIR_2B,
    "born abroad": nir("1930799123456"),
    "a temporary number": nir("7930749123058"),
}


@pytest.mark.parametrize("written", NIRS.values(), ids=NIRS.keys())
def test_masks_french_social_security_numbers(written: str) -> None:
    compact = digits_of(written)
    masked = mask_secrets(f"N° de sécurité sociale : {written}.")
    assert masked == f"N° de sécurité sociale : [NIR …{compact[-4:]}]."
    assert compact not in digits_of(masked)


def corsican_with_a_naive_key() -> str:
    """A Corsican NIR whose key was computed reading 2A as 20: the official rule says 19, so it fails."""
    body = "291042A031176"
    naive = int(body.replace("2A", "20"))
    key = 97 - naive % 97
    assert key != int(nir(body)[-2:])
    return f"{body}{key:02d}"


NOT_NIRS = {
    "a wrong key": grouped(broken(NIR_MAN), [1, 2, 2, 2, 3, 3, 2]),
    "corsica with the naive key": corsican_with_a_naive_key(),
    "a siret": grouped(luhn_card("83", 14), [3, 3, 3, 5]),
    "a french mobile": "+33 6 12 34 56 78",
    "a french phone": "06 12 34 56 78",
    "sex digit 5": nir("5930749123058"),
    "a row of numbers that passes the key": "12 12 204 204 12 204",
    "three numbers of five digits": grouped(NIR_MAN, 5),
}


@pytest.mark.parametrize("written", NOT_NIRS.values(), ids=NOT_NIRS.keys())
def test_numbers_that_fail_the_nir_checks_are_left_alone(written: str) -> None:
    text = f"Numéro {written} noté."
    assert mask_secrets(text) == text


# --- keys and tokens ----------------------------------------------------------------------------------

RANDOM_36 = "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2"
SECRETS = {
    "github personal token": (f"ghp_{RANDOM_36}", "[secret: GitHub token]"),
    "github oauth token": (f"gho_{RANDOM_36}", "[secret: GitHub token]"),
    "github app token": (f"ghs_{RANDOM_36}", "[secret: GitHub token]"),
    "github fine-grained token": (f"github_pat_11ABCDEFG0{RANDOM_36}_{RANDOM_36}", "[secret: GitHub token]"),
    "aws access key id": ("AKIAEXAMPLE7Q2W3E4R5", "[secret: AWS access key]"),
    "aws temporary key id": ("ASIAEXAMPLE7Q2W3E4R5", "[secret: AWS access key]"),
    "openai key": (f"sk-{RANDOM_36}{RANDOM_36}", "[secret: OpenAI key]"),
    "openai project key": (f"sk-proj-{RANDOM_36}_{RANDOM_36}", "[secret: OpenAI key]"),
    "anthropic key": (f"sk-ant-api03-{RANDOM_36}-{RANDOM_36}", "[secret: Anthropic key]"),
    "slack bot token": ("xoxb-1234567890123-1234567890123-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8", "[secret: Slack token]"),
    "slack user token": ("xoxp-1234567890123-1234567890123-Ab1Cd2Ef3Gh4", "[secret: Slack token]"),
    "slack app token": ("xapp-1-A0123456789-1234567890123-ab12cd34ef56", "[secret: Slack token]"),
    "google api key": ("AIzaSyAb1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1", "[secret: Google API key]"),
    "stripe live key": (f"sk_live_{RANDOM_36[:24]}", "[secret: Stripe key]"),
    "stripe restricted key": (f"rk_live_{RANDOM_36[:24]}", "[secret: Stripe key]"),
    "hugging face token": ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz12345678", "[secret: Hugging Face token]"),
    "gitlab personal token": ("glpat-Ab1Cd2Ef3Gh4Ij5Kl6Mn", "[secret: GitLab token]"),
    "gitlab token, newer format": ("glpat-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8.01.0x1a2b3c4d5", "[secret: GitLab token]"),
    "gitlab deploy token": ("gldt-Ab1Cd2Ef3Gh4Ij5Kl6Mn", "[secret: GitLab token]"),
    "npm token": (f"npm_{RANDOM_36}", "[secret: npm token]"),
    "jwt": (
        ".".join([b64url(b'{"alg":"HS256"}'), b64url(b'{"sub":"jane"}'), RANDOM_36]),
        "[secret: JWT]",
    ),
}


@pytest.mark.parametrize(("token", "label"), SECRETS.values(), ids=SECRETS.keys())
def test_masks_api_keys_and_tokens_of_common_shapes(token: str, label: str) -> None:
    assert mask_secrets(f"export TOKEN={token}\n") == f"export TOKEN={label}\n"
    assert mask_secrets(f"The key {token} leaked.") == f"The key {label} leaked."
    assert token not in mask(f"token: {token}")


PRIVATE_KEYS = {
    "rsa": "RSA PRIVATE KEY",
    "openssh": "OPENSSH PRIVATE KEY",
    "ec": "EC PRIVATE KEY",
    "pkcs8": "PRIVATE KEY",
    "encrypted": "ENCRYPTED PRIVATE KEY",
    "pgp": "PGP PRIVATE KEY BLOCK",
}


@pytest.mark.parametrize("kind", PRIVATE_KEYS.values(), ids=PRIVATE_KEYS.keys())
def test_masks_private_key_blocks_whole(kind: str) -> None:
    block = f"-----BEGIN {kind}-----\nMIIEow1BAAKCAQEA7x\nQ2hlY2sgdGhpcw==\n-----END {kind}-----"
    assert mask_secrets(f"key:\n{block}\ndone") == "key:\n[secret: private key]\ndone"


def test_masks_a_private_key_block_cut_short_to_the_end() -> None:
    text = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAAB"
    assert mask_secrets(text) == "[secret: private key]"


ASSIGNMENTS = {
    "aws secret key": (
        "aws_secret_access_key = q8RtvLwnZkaVbN/xJmePd+HsGfYcTeAuWiQoXyzB",
        "aws_secret_access_key = [secret: AWS secret key]",
    ),
    "bearer header": (
        "Authorization: Bearer Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8",
        "Authorization: Bearer [secret: bearer token]",
    ),
    "bearer in a curl command": (
        "curl -H 'authorization: bearer Ab1Cd2Ef3Gh4Ij5' https://api.example.com",
        "curl -H 'authorization: bearer [secret: bearer token]' https://api.example.com",
    ),
    "basic header": ("Authorization: Basic amFuZTpodW50ZXIy", "Authorization: Basic [secret: credentials]"),
    "password in an env file": ("DB_PASSWORD=hunter2!", "DB_PASSWORD=[secret: password]"),
    "password in a url query": (
        "https://example.com/db?user=jane&password=hunter2xyz",
        "https://example.com/db?user=jane&password=[secret]",
    ),
    "password in json": (
        '{"user": "jane", "password": "s3cret"}',
        '{"user": "jane", "password": "[secret: password]"}',
    ),
    "password in python": (
        'connect(user="jane", password="hunter2")',
        'connect(user="jane", password="[secret: password]")',
    ),
    "password in yaml": ("db:\n  password: hunter2\n", "db:\n  password: [secret: password]\n"),
    "api key in a setting": ('API_KEY = "a1b2c3d4e5f6g7h8i9"', 'API_KEY = "[secret: key]"'),
    "api key in yaml": ("api_key: a1b2c3d4e5f6g7h8i9\n", "api_key: [secret: key]\n"),
    "client secret in json": ('{"client_secret": "Zx81kQpLr7TmWv2N"}', '{"client_secret": "[secret: key]"}'),
    "refresh token": ("REFRESH_TOKEN=Zx81kQpLr7TmWv2Ns4Yb", "REFRESH_TOKEN=[secret: token]"),
    "aws secret key in an env file": (
        "AWS_SECRET_ACCESS_KEY=q8RtvLwnZkaVbN/xJmePd+HsGfYcTeAuWiQoXyzB",
        "AWS_SECRET_ACCESS_KEY=[secret: AWS secret key]",
    ),
    "aws secret key exported, quoted": (
        'export AWS_SECRET_ACCESS_KEY="q8RtvLwnZkaVbN/xJmePd+HsGfYcTeAuWiQoXyzB"',
        'export AWS_SECRET_ACCESS_KEY="[secret: AWS secret key]"',
    ),
    "aws secret key in json": (
        '{"AccessKeyId": "ASIA…", "SecretAccessKey": "q8RtvLwnZkaVbN/xJmePd+HsGfYcTeAuWiQoXyzB"}',
        '{"AccessKeyId": "ASIA…", "SecretAccessKey": "[secret: AWS secret key]"}',
    ),
    "aws secret key in yaml": ("SecretAccessKey: q8RtvLwnZkaVbN/xJmePd+HsGfYcTeAuWiQoXyzB\n", "SecretAccessKey: [secret: AWS secret key]\n"),
    "aws configure prompt": (
        "AWS Secret Access Key [None]: q8RtvLwnZkaVbN/xJmePd+HsGfYcTeAuWiQoXyzB",
        "AWS Secret Access Key [None]: [secret: AWS secret key]",
    ),
    "aws cli flag": ("--aws-secret-access-key q8RtvLwnZkaVbN/xJmePd+HsGfYcTeAuWiQoXyzB", "--aws-secret-access-key [secret: AWS secret key]"),
    "aws secret key in python": (
        "boto3.client('s3', aws_secret_access_key='q8RtvLwnZkaVbN/xJmePd+HsGfYcTeAuWiQoXyzB')",
        "boto3.client('s3', aws_secret_access_key='[secret: AWS secret key]')",
    ),
    "access token in a query": (
        "https://api.example.com/v1/me?access_token=Ab1Cd2Ef3Gh4",
        "https://api.example.com/v1/me?access_token=[secret]",
    ),
}


@pytest.mark.parametrize(("text", "masked"), ASSIGNMENTS.values(), ids=ASSIGNMENTS.keys())
def test_masks_secrets_given_to_a_name(text: str, masked: str) -> None:
    assert mask_secrets(text) == masked


LEFT_ALONE = {
    "a uuid": f"id {INVENTED_UUID}",
    "a commit hash": "fixed in 3f2a9c81b4d5e6f70123456789abcdef01234567",
    "a sha256": "sha256:" + hashlib.sha256(b"the library plans").hexdigest(),
    "a base64 image": "data:image/png;base64," + INVENTED_PNG,
    "a password passed along": "connect(user=user, password=password)",
    "a password from the environment": 'password = os.environ["DB_PASSWORD"]',
    "a password from a call": "password=getpass()",
    "an empty password": 'password=""',
    "a placeholder": "password: ${DB_PASSWORD}",
    "a template": 'api_key = "{{ api_key }}"',
    "a token count": "max_tokens=4096",
    "a short key": 'key = "value"',
    "a bearer variable": 'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
    "prose about a bearer": "The bearer of this letter is a friend.",
    "scikit": "pip install scikit-learn==1.5.0",
    "a setting in prose": "Password: at least 12 characters, one of them a digit.",
    "markdown table": "| name | tokens |\n|------|--------|\n| jane | 1200   |",
    "a hugging face import": "from huggingface_hub import hf_hub_download, snapshot_download",
    "a hugging face setting name": 'hf_model_name_or_path = "bert-base-uncased"',
    "a long snake_case name after hf_": "hf_tokenizerconfigurationloadinghelper",
    "an npm setting": "npm_config_cache=/tmp/npm-cache npm ci",
    "an npm variable": 'echo "building $npm_package_name@$npm_package_version"',
    "a gitlab token described": "GitLab tokens start with glpat- and are shown once.",
    "an aws secret from a placeholder": "aws_secret_access_key = ${AWS_SECRET}",
    "an aws secret from a command": "AWS_SECRET_ACCESS_KEY=$(vault read -field=secret aws/creds/ci)",
    "an aws secret named in prose": "Set AWS_SECRET_ACCESS_KEY in your environment before the deploy.",
    "an aws response described": "The response has AccessKeyId, SecretAccessKey and SessionToken.",
    "an aws template reference": "secret_access_key: !Ref SecretKeyParam",
    "a pinned package": "huggingface-hub==0.24.5\nnpm==10.8.2",
    "a cron line": "30 10 * * 1-5 /usr/local/bin/backup.sh --keep 4512",
    "an access log": '203.0.113.7 - - [12/Mar/2026:10:30:00 +0000] "GET /reset.css HTTP/1.1" 200 512',
    "an application log": "2026-03-12T10:30:00Z INFO GET /api/v1/items/4111 200 12ms user=jane",
    "an invoice line": "Invoice INV-2026-0042 — 3 × 1 200,00 € = 3 600,00 € (VAT FR 12 345 678 901)",
    "a csv of amounts": "date,amount\n2026-03-12,1 200.00\n2026-03-13,4 512.50",
    "a compose file": "DATABASE_URL: postgres://app:${POSTGRES_PASSWORD}@db:5432/app",
}


@pytest.mark.parametrize("text", LEFT_ALONE.values(), ids=LEFT_ALONE.keys())
def test_hashes_ids_images_and_code_are_left_alone(text: str) -> None:
    assert mask_secrets(text) == text
    assert mask(text) == text


# --- ordinary text ------------------------------------------------------------------------------------

PROSE = {
    "english": (
        "The committee met on Tuesday, March 12, 2026 at 10:30 to talk over the plans for the library. "
        "Several members raised questions about the budget (about 145,000 EUR), and the chair promised "
        "a written answer before the next meeting. The draft is at https://example.org/blog/library-plans."
    ),
    "french": (
        "Bonjour Jeanne, la réunion est déplacée au 12 mars à 14h30, salle 204. Le devis de 1 250 € est "
        "joint ; merci de me dire si le code couleur des plans vous convient. Bonne journée !"
    ),
    "a code snippet": (
        "def total(items: list[int]) -> int:\n    result = 0\n    for item in items:\n"
        "        result += item * 1024\n    return result  # 2026-03-12: faster\n"
    ),
    "a shell session": "$ ls -la /var/log\ntotal 4821\n-rw-r--r-- 1 root root 12034 Mar 12 10:30 syslog",
    "a window title": "report-2026-03.pdf — Example Viewer (page 12 of 48)",
    "a list of numbers": "Results: 12, 48, 1024, 2048, 4096 and 65536.",
    "greek": "Η συνάντηση μετατέθηκε για την Τρίτη στις 10:30, στην αίθουσα 4.",
    "russian": "Встреча перенесена на вторник, 12 марта, в 10:30, комната 4.",
    "japanese": "会議は3月12日（火）10時30分から、4階の会議室で行います。",
    "japanese, full-width digits": "会議は３月１２日（火）１０時３０分から、４階の会議室で行います。",
    "arabic, arabic-indic digits": "الاجتماع يوم ١٢ مارس ٢٠٢٦ في الساعة ١٠:٣٠ في الغرفة ٤",
    "hindi, devanagari digits": "बैठक १२ मार्च २०२६ को १०:३० बजे, कमरा ४ में होगी।",
    "emoji and a time": "Great work 🎉🎉 see you at 10:30 ☕️ in room 4",
    "mathematical bold letters and digits": "𝐓𝐡𝐞 𝐛𝐞𝐬𝐭 𝐨𝐟 𝟐𝟎𝟐𝟔, 𝐫𝐨𝐨𝐦 𝟒𝟓𝟏𝟐",
    "an invoice in french": (
        "Facture n° 2026-0042 du 12/03/2026 : 3 × 1 200,00 € HT, TVA 20 % 720,00 €, total 4 320,00 € TTC, "
        "payable sous 30 jours."
    ),
    "a meeting note with rooms": "Moved to room 4 512 at 10 30; the budget is 1 200 € and the phone is 3179.",
}


@pytest.mark.parametrize("text", PROSE.values(), ids=PROSE.keys())
def test_ordinary_text_comes_back_unchanged(text: str) -> None:
    assert mask(text) == text
    assert mask_secrets(text) == text


@pytest.mark.parametrize(
    "text", ["", " ", "\n", "a", "1234"], ids=["empty", "space", "newline", "letter", "digits"]
)
def test_tiny_texts_come_back_unchanged(text: str) -> None:
    assert mask(text) == text
    assert mask_secrets(text) == text


def test_mask_secrets_leaves_codes_and_sign_in_links_to_mask() -> None:
    text = "Your verification code is 482913. Sign in: https://example.com/login?next=/inbox"
    assert mask_secrets(text) == text
    assert mask(text) == f"Your verification code is {CODE}. Sign in: {SIGN_IN_LINK}"


# --- masking twice ------------------------------------------------------------------------------------

EVERY_TEXT = {
    **{f"code: {key}": text for key, text in CODE_FORMS.items()},
    **{f"sign-in link: {key}": f"Open {link}." for key, link in SIGN_IN_LINKS.items()},
    **{f"token link: {key}": f"See {link}" for key, link in TOKEN_LINKS.items()},
    **{f"iban: {key}": f"Pay to {written}." for key, written in IBANS.items()},
    **{f"card: {key}": f"Card {written}" for key, written in CARDS.items()},
    **{f"nir: {key}": f"NIR {written}" for key, written in NIRS.items()},
    **{f"secret: {key}": f"key {token}" for key, (token, _) in SECRETS.items()},
    **{f"assignment: {key}": text for key, (text, _) in ASSIGNMENTS.items()},
    **{f"password: {key}": text for key, text in PASSWORD_MESSAGES.items()},
    **{f"url credentials: {key}": text for key, (text, _) in URL_CREDENTIALS.items()},
    **{f"webhook: {key}": f"Post to {url}" for key, (url, _) in WEBHOOKS.items()},
    **{f"other script: {key}": text for key, text in OTHER_SCRIPT_CODES.items()},
    # Found by the property below: a mask must not free, or make, what its neighbour was glued to.
    "an iban glued to a code": f"482913{FR_IBAN}\nyour code is",
    "a setting glued to a code": "482913password=…your code is",
    "a password label glued to a code": "verification code482913Password: ]4 8 2 9 1 3",
    "a code phrase completed by a link's mask": "your code iswww.example.com/resetyour code is[code]482913",
    "a bearer over a setting over a query": "Bearer aws_secret_access_key=https://example.com/login?token=482913482913",
    "everything at once": (
        f"Your code is 482913. Pay {grouped(FR_IBAN)} with {grouped(VISA)}, NIR {NIR_2A}, "
        f"token ghp_{RANDOM_36}, https://example.com/reset?token=abc123"
    ),
}


@pytest.mark.parametrize("text", EVERY_TEXT.values(), ids=EVERY_TEXT.keys())
def test_masking_twice_changes_nothing_more(text: str) -> None:
    once = mask(text)
    assert mask(once) == once
    assert mask_secrets(once) == once
    secrets_once = mask_secrets(text)
    assert mask_secrets(secrets_once) == secrets_once


CHUNKS = [
    "482913",
    "482 913",
    "4 8 2 9 1 3",
    "48-29-13",
    "\n",
    " ",
    "|",
    "> ",
    "[",
    "]",
    "…",
    ":",
    "/",
    ".",
    ",",
    "-",
    NBSP,
    THIN,
    ZWSP,
    "2026",
    "March",
    "12",
    "©",
    "(555)",
    "code",
    "your code is",
    "verification code",
    "OTP",
    "password",
    "Password: ",
    "password=",
    "token=",
    "?",
    "&",
    "https://",
    "example.com/",
    "reset",
    "login",
    "www.",
    "IBAN …",
    "[card …",
    FR_IBAN,
    grouped(FR_IBAN),
    VISA,
    grouped(VISA),
    NIR_MAN,
    NIR_2A,
    "FR76",
    "2A",
    "ghp_",
    RANDOM_36,
    "sk-",
    "AKIA",
    "eyJ",
    "Bearer ",
    "Authorization: ",
    "-----BEGIN RSA PRIVATE KEY-----",
    '"',
    "'",
    "=",
    "(c)",
    "+33 ",
    "06 12 34 56 78",
    "2026-03-12",
    "12:30",
    "4444",
    "666666",
    "999999999",
    "Your PIN is",
    "Votre code",
    "temporary password",
    "│",
    EN_DASH,
    NNBSP,
    "2B",
    grouped(GB_IBAN),
    grouped(VISA, 4, "-"),
    grouped(VISA, 4, "."),
    grouped(VISA, 4, "/"),
    grouped(FR_IBAN.lower()),
    grouped(DE_IBAN, 4, "-"),
    "fr76",
    "postgres://",
    "jane:",
    "hunter2",
    "@",
    "@db.example.com/app",
    "hooks.slack.com/services/",
    "discord.com/api/webhooks/123456789012345678/",
    "hf_",
    "glpat-",
    "npm_",
    "AWS_SECRET_ACCESS_KEY=",
    "SecretAccessKey: ",
    "q8RtvLwnZkaVbN/xJmePd+HsGfYcTeAuWiQoXyzB",
    FULL_WIDTH,
    "٤٨٢٩١٣",
    "482.913",
    "Don't share the code ",
    "ne partagez pas le code ",
    "1 200 €",
    "10 30",
    "room 4 512",
    "€",
    "https://example.com/help",
]
texts_with_every_kind_of_piece = st.lists(
    st.one_of(st.sampled_from(CHUNKS), st.text(max_size=6)), max_size=24
).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts_with_every_kind_of_piece)
@example("482913OTPDE75-5121-0800-1245-1261-99")  # the code masked with "OTPDE75" left a card standing alone
def test_masking_is_idempotent_on_any_text(text: str) -> None:
    once = mask(text)
    assert mask(once) == once
    secrets_once = mask_secrets(text)
    assert mask_secrets(secrets_once) == secrets_once


ORDINARY_WORDS = [
    "the",
    "plans",
    "library",
    "Tuesday",
    "budget",
    "meeting",
    "Jane",
    "answer",
    "garden",
    "café",
    "room",
    "page",
    "1",
    "12",
    "204",
    "3.5",
    "10:30",
    "１２",
    "٤",
    "४",
    "€",
    "1 200 €",
    "room 4 512",
    "at",
    "and",
    "of",
    "—",
    "(",
    ")",
    ",",
    ".",
    ";",
    "!",
    "?",
    "'",
    "\n",
]
ordinary_texts = st.lists(st.sampled_from(ORDINARY_WORDS), max_size=60).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(ordinary_texts)
def test_masking_never_grows_or_changes_a_text_with_nothing_to_mask(text: str) -> None:
    assert mask(text) == text
    assert mask_secrets(text) == text
