"""API keys, tokens, private key blocks, authorization headers and secret settings (`password=...`).

What was chosen: `password=...` is masked unless the value is a plain name, a call or an index
(`password=password`, `os.environ[...]` in code stay), a quoted value unless empty or a placeholder
(`$PW`, `{{pw}}`, `<pw>`, `***`), `password: x` only as a whole lowercase line (a setting, not prose);
`api_key`, `client_secret`, `*_token` and the like only when the value looks like a key. A secret query
parameter (`access_token=`, `sig=`...) keeps its name and loses its value. An AWS secret access key is
told by its shape (40 characters of base64) after any of its usual labels, whatever their case and
separators: `aws_secret_access_key = `, `AWS_SECRET_ACCESS_KEY=`, `"SecretAccessKey": "`,
`--aws-secret-access-key `, `AWS Secret Access Key [None]: ` (what `aws configure` asks), or, after a
label in snake case, a space alone (`aws_secret_access_key wJalr...`); without a label, beside an access key id (`AKIA...`, within 120
characters: a credentials file, a CSV row, a pasted pair) when it mixes both cases. Hugging Face
(`hf_`), GitLab (`glpat-` and its kin) and npm (`npm_`) tokens by their prefix and length; an `hf_` one
must mix capitals and small letters, as real ones do, so that a long snake_case name is no token.
"""

from __future__ import annotations

import re

from gateway.privacy.text import Edit, LazyPattern, apply_edits, find_all, lower_same_length

# Most patterns open on a literal, which `re` searches for fast; the boundary is checked just after it.
# A mask's bracket counts as a letter at every boundary: a number glued to a code stays glued once the code
# reads "[code]", so that masking again finds nothing new.

_GITHUB = LazyPattern(
    r"g(?<![A-Za-z0-9_\]]g)(?:h[pousr]_[A-Za-z0-9]{20,255}|ithub_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_\[])"
)
_STRIPE = LazyPattern(r"(?<![A-Za-z0-9_\]])[sr]k_(?:live|test)_[0-9A-Za-z]{16,}")
_ANTHROPIC = LazyPattern(r"sk-(?<![A-Za-z0-9_\]-]sk-)ant-[A-Za-z0-9_-]{20,}")
_OPENAI = LazyPattern(
    r"sk-(?<![A-Za-z0-9_\]-]sk-)(?:proj-|svcacct-|admin-)?(?=[A-Za-z_-]{0,256}[0-9])[A-Za-z0-9_-]{20,}"
)
_SLACK = LazyPattern(r"x(?<![A-Za-z0-9_\]-]x)(?:ox[abprse]-[0-9A-Za-z-]{10,}|app-[0-9]-[0-9A-Za-z-]{10,})")
_AWS_KEY = LazyPattern(r"A(?<![A-Za-z0-9\]]A)(?:KIA|SIA)[A-Z0-9]{16}(?![A-Za-z0-9\[])")
_GOOGLE = LazyPattern(r"A(?<![A-Za-z0-9_\]-]A)Iza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_\[-])")
_HUGGING_FACE = LazyPattern(
    r"h(?<![A-Za-z0-9_\]]h)f_(?=[A-Za-z0-9]{0,64}[A-Z])(?=[A-Za-z0-9]{0,64}[a-z])[A-Za-z0-9]{30,64}(?![A-Za-z0-9_\[])"
)
_NPM = LazyPattern(r"n(?<![A-Za-z0-9_\]]n)pm_[A-Za-z0-9]{36}(?![A-Za-z0-9_\[])")
_GITLAB = LazyPattern(
    r"g(?<![A-Za-z0-9_\]-]g)l(?:pat|dt|rt|ptt|cbt|oas|soat|ffct|imt|agent)-[0-9A-Za-z_-]{20,}(?:\.[0-9A-Za-z_-]+)*"
)
_AWS_SECRET = LazyPattern(
    r"((?i:secret)[ _-]?(?i:access)[ _-]?(?i:key)(?: \[[^\]\n]{0,32}\])?[\"']?[ \t]*[:=]?[ \t]*[\"']?)"
    r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
)
_AWS_LABEL = r"\1[secret: AWS secret key]"
# A secret key without its label, beside its access key id (a credentials file or a CSV row, a pasted pair):
# 40 characters of base64 with both cases, within so many characters of the id.
_AWS_SECRET_ALONE = LazyPattern(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS_SECRET_CHARS = LazyPattern(r"[A-Za-z0-9/+=]")
_AWS_NEAR = 120
_JWT = LazyPattern(r"eyJ(?<![A-Za-z0-9_\]-]eyJ)[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
_PRIVATE_KEY = LazyPattern(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)
# A ':' after a quote (JSON) or after a name that may hold a secret (YAML, headers); the class first
# turns most colons away at once.
_COLON_HINT = LazyPattern(
    r":(?<=[\"'dDyYnNtT\]]:)(?:(?<=[\"'\]]:)|(?<=ssword:)|(?<=SSWORD:)|(?<=sswd:)|(?<=uthorization:)"
    r"|(?<=UTHORIZATION:)|(?<=[kK]ey:)|(?<=KEY:)|(?<=[tT]oken:)|(?<=TOKEN:)|(?<=[sS]ecret:)|(?<=SECRET:))"
)
_BEARER_HINT = LazyPattern(r"earer(?<=[Bb]earer)")
_DASH_TOKEN_HINT = LazyPattern(
    r"-(?:(?<=sk-)|(?<=xox[abprse]-)|(?<=xapp-)|----BEGIN|(?<=gl[a-z][a-z]-)|(?<=gl[a-z]{3}-)|(?<=gl[a-z]{4}-)"
    r"|(?<=glagent-)|(?=access-key))"
)
_A_TOKEN_HINT = LazyPattern(r"A(?:KIA|SIA|Iza)")
_JWT_HINT = LazyPattern(r"J(?<=eyJ)")

_AUTH_HEADER = LazyPattern(
    r"(authorization[\"']?\s*[:=]\s*[\"']?(bearer|basic|token|bot)\s+)(?![\[$<{])[A-Za-z0-9._~+/=-]{8,}",
    re.IGNORECASE,
)
_BEARER = LazyPattern(r"(bearer\s+)(?![\[$<{])[A-Za-z0-9._~+/-]{20,}=*", re.IGNORECASE)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")
_ASSIGNMENT_WORDS = ("pass", "pwd", "secret", "key", "token", "sig")
_ASSIGNMENT_TAIL = LazyPattern(r"[a-z0-9_.-]{0,24}[\"']?[ \t]*[:=]")
_ASSIGNMENT = LazyPattern(
    r"""
    (?P<name>["']?(?:[a-z0-9]+[_.-])*
        (?:(?P<pw>password|passwd|passphrase|pwd)
          |secret|secret[_-]?key|client[_-]?secret|api[_-]?key|apikey|access[_-]?key
          |auth[_-]?token|access[_-]?token|api[_-]?token|refresh[_-]?token)["']?)
    (?P<op>[ \t]*[:=][ \t]*)
    (?:(?P<q>["'])(?P<quoted>[^"'\n]{0,1024})(?P=q)|(?P<bare>[^\s"',;&(){}\[\]]{0,1024}[^\s"',;&(){}\[\].]))
    """,
    re.VERBOSE | re.IGNORECASE,
)
_QUERY_SECRET = LazyPattern(
    r"((?:[a-z0-9]+[_.-])*(?:access_token|refresh_token|id_token|auth_token|client_secret|api_key|apikey|token"
    r"|signature|sig|password|passwd|pwd|security-token)=)[^&#\s\"'<>\[\]]{8,}",
    re.IGNORECASE,
)
_PLAIN_NAME = LazyPattern(r"[A-Za-z_]+(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_PLACEHOLDER_START = ("[", "$", "%", "{", "<", "(", "`", "*")
_NOT_VALUES = frozenset({"none", "null", "nil", "true", "false", "undefined", "..."})


def _looks_like_a_key(value: str) -> bool:
    """Whether the value given to a name such as `api_key` is a key rather than a word or a name."""
    if len(value) < 12 or any(ch.isspace() for ch in value):
        return False
    has_digit = any(ch.isdigit() for ch in value)
    return (has_digit and any(ch.isalpha() for ch in value)) or len(value) >= 30


def _assignment(match: re.Match[str]) -> str | None:
    """The masked form of `name = value`, or None when the value is no secret."""
    quoted, bare = match.group("quoted"), match.group("bare")
    value = quoted if quoted is not None else bare
    if not value or value.startswith(_PLACEHOLDER_START) or value.lower() in _NOT_VALUES:
        return None
    if not value.strip("*x.•"):
        return None
    name = match.group("name").lower()
    if match.group("pw"):
        if bare is not None:
            if _is_code(match, bare):
                return None
            if ":" in match.group("op") and not _is_a_lowercase_setting_line(match):
                return None
        label = "[secret: password]"
    elif not _looks_like_a_key(value) or (bare is not None and _is_code(match, bare)):
        return None
    elif "aws" in name and "secret" in name:
        label = "[secret: AWS secret key]"
    else:
        label = "[secret: token]" if "token" in name else "[secret: key]"
    quote = match.group("q") or ""
    return f"{match.group('name')}{match.group('op')}{quote}{label}{quote}"


def _is_code(match: re.Match[str], bare: str) -> bool:
    """A plain name, an attribute, a call or an index (`password=password`, `os.environ[...]`): code."""
    after = match.string[match.end() : match.end() + 1]
    return bool(_PLAIN_NAME.fullmatch(bare)) or after in ("(", "[")


def _is_a_lowercase_setting_line(match: re.Match[str]) -> bool:
    """`password: hunter2` is a setting only as a whole line with a lowercase key; in prose it is not."""
    text = match.string
    name_start = match.start("name")
    line_start = text.rfind("\n", max(0, name_start - 64), name_start) + 1 or max(0, name_start - 64)
    line_end = text.find("\n", match.end(), match.end() + 64)
    line_end = min(len(text), match.end() + 64) if line_end < 0 else line_end
    return (
        not text[line_start:name_start].strip(" \t-")
        and not text[match.end() : line_end].strip()
        and match.group("name").islower()
    )


def _name_start(text: str, low: str, index: int) -> int:
    start = index
    while start > 0 and index - start < 64 and low[start - 1] in _NAME_CHARS:
        start -= 1
    if start > 0 and text[start - 1] in "\"'":
        start -= 1
    return start


def _assignment_edits(text: str, low: str) -> list[Edit]:
    """`name = value` settings and secret query parameters, found from the words their names hold."""
    candidates = sorted(
        (index, index + len(word))
        for word in _ASSIGNMENT_WORDS
        for index in find_all(low, word)
        if _ASSIGNMENT_TAIL.match(low, index + len(word))
    )
    edits: list[Edit] = []
    covered = 0
    for index, _ in candidates:
        start = _name_start(text, low, index)
        if start < covered or text[start - 1 : start] == "]":  # glued to a mask, as to a letter
            continue
        if start > 0 and text[start - 1] in "?&;":
            query = _QUERY_SECRET.match(text, start)
            if query:
                edits.append((start, query.end(), query.group(1) + "[secret]"))
                covered = query.end()
                continue
        match = _ASSIGNMENT.match(text, start)
        masked = _assignment(match) if match else None
        if match and masked is not None:
            edits.append((start, match.end(), masked))
            covered = match.end()
    return edits


def _authorization_edits(text: str, low: str) -> list[Edit]:
    edits = []
    schemes_seen = set()
    for index in find_all(low, "authorization"):
        match = _AUTH_HEADER.match(text, index)
        if match:
            scheme = match.group(2).lower()
            label = "[secret: bearer token]" if scheme == "bearer" else "[secret: credentials]"
            edits.append((index, match.end(), match.group(1) + label))
            schemes_seen.add(match.start(2))
    for index in find_all(low, "bearer"):
        if index in schemes_seen or index and (low[index - 1].isalnum() or low[index - 1] == "]"):
            continue
        match = _BEARER.match(text, index)
        if match:
            edits.append((index, match.end(), match.group(1) + "[secret: bearer token]"))
    return edits


def _aws_access_keys(text: str) -> str:
    """AWS access key ids, and the secret key written beside one without its label."""
    edits: list[Edit] = []
    for key in _AWS_KEY.finditer(text):
        edits.append((key.start(), key.end(), "[secret: AWS access key]"))
        # Within reach of the id only (the end checked by hand: `endpos` would end a longer word there).
        end = min(len(text), key.end() + _AWS_NEAR + 40)
        for secret in _AWS_SECRET_ALONE.finditer(text, max(0, key.start() - _AWS_NEAR - 40), end):
            value = secret.group()
            if _AWS_SECRET_CHARS.match(text, secret.end()) is None and value.lower() != value != value.upper():
                edits.append((secret.start(), secret.end(), "[secret: AWS secret key]"))
    return apply_edits(text, edits) if edits else text


def mask_keys(text: str) -> str:
    """`text` with its keys, tokens, private keys, authorization headers and secret settings masked."""
    # Single characters first: finding one is a memchr, far cheaper than a search for a longer string.
    if "-" in text and _DASH_TOKEN_HINT.search(text):
        if "-----BEGIN" in text:
            text = _PRIVATE_KEY.sub("[secret: private key]", text)
        text = _ANTHROPIC.sub("[secret: Anthropic key]", text)
        text = _OPENAI.sub("[secret: OpenAI key]", text)
        text = _SLACK.sub("[secret: Slack token]", text)
        if "gl" in text:
            text = _GITLAB.sub("[secret: GitLab token]", text)
        if "-access-key" in text or "-ACCESS-KEY" in text:  # a command's flag
            text = _AWS_SECRET.sub(_AWS_LABEL, text)
    if "_" in text:
        if "ccess_key" in text or "CCESS_KEY" in text:  # its label in snake case, whatever follows it
            text = _AWS_SECRET.sub(_AWS_LABEL, text)
        text = _GITHUB.sub("[secret: GitHub token]", text)
        if "k_live_" in text or "k_test_" in text:
            text = _STRIPE.sub("[secret: Stripe key]", text)
        if "hf_" in text:
            text = _HUGGING_FACE.sub("[secret: Hugging Face token]", text)
        if "npm_" in text:
            text = _NPM.sub("[secret: npm token]", text)
    if _A_TOKEN_HINT.search(text):
        text = _aws_access_keys(text)
        text = _GOOGLE.sub("[secret: Google API key]", text)
    if _JWT_HINT.search(text):
        text = _JWT.sub("[secret: JWT]", text)
    if "=" in text or (":" in text and _COLON_HINT.search(text)):
        # Headers first, then settings found in what they leave: each step sees the masks of the one
        # before, as a second pass would.
        low = lower_same_length(text)
        if "ccess" in low:
            text = _AWS_SECRET.sub(_AWS_LABEL, text)
            low = lower_same_length(text)
        if "bearer" in low or "authorization" in low:
            edits = _authorization_edits(text, low)
            if edits:
                text = apply_edits(text, edits)
                low = lower_same_length(text)
        edits = _assignment_edits(text, low)
        return apply_edits(text, edits) if edits else text
    if _BEARER_HINT.search(text):
        edits = _authorization_edits(text, lower_same_length(text))
        return apply_edits(text, edits) if edits else text
    return text
