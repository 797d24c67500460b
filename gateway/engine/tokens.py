"""Named HTTP tokens, one per host, each giving the `[profiles.NAME]` it names: made, listed and revoked by the
person (`gateway token ...`), looked up by `gateway serve --http` on every request.

Each token is a file of its own in the `tokens` folder of the gateway's state folder (0700), readable by the
person alone (0600), written whole (a temporary file renamed over), holding the token's name, its profile, when
it was made, and the SHA-256 of its secret: the secret itself is shown once, when it is made, and kept nowhere.
A token revoked is a file removed; the folder is looked at on every request (one directory listing, the files
parsed again only when one changed), so a revoked token is refused from the next request on.

The secret is 32 random bytes (`secrets.token_urlsafe`): hashing it once is enough to keep it from whoever
reads the file, no slow hash is needed for a secret nobody chose. The hash presented is compared with each
token's in constant time (`hmac.compare_digest`), all of them every time.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import click

TOKENS_FOLDER = "tokens"
SUFFIX = ".json"
# The name the audit log gives the single token `gateway serve --http` made on first use (the file http-token).
DEFAULT_NAME = "default"
# Where the HTTP layer leaves, in a request's ASGI scope, the token it accepted, (name, profile), for the server's
# handlers; profile None for the served token (the profile the gateway was started with).
TOKEN_SCOPE_KEY = "gateway.token"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")


class TokenError(Exception):
    """A token that cannot be made or revoked; the message says why and what to do."""


@attrs.frozen
class Token:
    """One named token as kept on disk: never its secret, only the secret's hash."""

    name: str
    profile: str
    created: str
    sha256: str
    path: Path


def digest(secret: str | bytes) -> str:
    """The hex SHA-256 of a secret, as kept in its file."""
    return hashlib.sha256(secret.encode() if isinstance(secret, str) else secret).hexdigest()


def _read(path: Path) -> Token | None:
    """The token kept in `path`, or None when the file is not a whole token (no profile, no hash, not JSON):
    such a file gives nothing, whatever secret is presented."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    name, profile, sha = data.get("name"), data.get("profile"), data.get("sha256")
    if not (isinstance(name, str) and isinstance(profile, str) and profile.strip() and isinstance(sha, str)
            and re.fullmatch(r"[0-9a-f]{64}", sha) and name == path.name.removesuffix(SUFFIX)):
        return None
    return Token(name, profile.strip(), str(data.get("created") or ""), sha, path)


class TokenStore:
    """The tokens folder: add, list and revoke for the person; `find` for the HTTP server, per request."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._seen: tuple[tuple[str, int, int, int], ...] | None = None
        self._tokens: tuple[Token, ...] = ()
        self.broken: tuple[Path, ...] = ()  # files of the folder that are no whole token: they give nothing

    @classmethod
    def of_state(cls, state: Path) -> TokenStore:
        return cls(state / TOKENS_FOLDER)

    def path_of(self, name: str) -> Path:
        return self.folder / f"{name}{SUFFIX}"

    def tokens(self) -> tuple[Token, ...]:
        """Every whole token, read again only when a file of the folder was added, removed or replaced."""
        try:
            with os.scandir(self.folder) as entries:
                files = sorted((e for e in entries if e.name.endswith(SUFFIX) and e.is_file()), key=lambda e: e.name)
                seen = tuple((e.name, (s := e.stat()).st_ino, s.st_mtime_ns, s.st_size) for e in files)
        except FileNotFoundError:
            seen = ()
        if seen != self._seen:
            found = [(name, _read(self.folder / name)) for name, *_rest in seen]
            self._tokens = tuple(token for _name, token in found if token is not None)
            self.broken = tuple(self.folder / name for name, token in found if token is None)
            self._seen = seen
        return self._tokens

    def find(self, secret: bytes | str) -> Token | None:
        """The token whose secret this is, or None. Every token's hash is compared, in constant time."""
        presented = digest(secret).encode()
        match = None
        for token in self.tokens():
            if hmac.compare_digest(presented, token.sha256.encode()) and match is None:
                match = token
        return match

    def add(self, name: str, profile: str) -> tuple[Token, str]:
        """Make the token `name` for `profile`: its file written whole (0600), and its secret, to show once."""
        if not NAME_PATTERN.match(name):
            raise TokenError(f"{name!r} cannot name a token: use letters, digits, - and _ (at most 40), e.g. chatgpt")
        if name.casefold() == DEFAULT_NAME:
            raise TokenError(f"{DEFAULT_NAME!r} names the token `gateway serve --http` makes itself; choose another "
                             "name")
        if not profile.strip():
            raise TokenError("a token needs a profile: name one with --profile (a [profiles.NAME] of the config)")
        path = self.path_of(name)
        if path.exists():
            raise TokenError(f"a token named {name!r} exists already; revoke it first (`gateway token revoke "
                             f"{name}`) or choose another name")
        secret = secrets.token_urlsafe(32)
        created = datetime.now(UTC).isoformat(timespec="seconds")
        body = {"name": name, "profile": profile.strip(), "created": created, "sha256": digest(secret)}
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.folder, 0o700)
        _write_whole(path, json.dumps(body, indent=1) + "\n")
        return Token(name, profile.strip(), created, body["sha256"], path), secret

    def revoke(self, name: str) -> Token:
        """Remove the token `name`; the next request presenting it is refused."""
        path = self.path_of(name)
        token = _read(path) if NAME_PATTERN.match(name) else None
        try:
            if not NAME_PATTERN.match(name):
                raise FileNotFoundError
            path.unlink()
        except FileNotFoundError:
            names = ", ".join(t.name for t in self.tokens()) or "none"
            raise TokenError(f"no token named {name!r} (the tokens: {names})") from None
        return token or Token(name, "", "", "", path)


def _write_whole(path: Path, text: str) -> None:
    """`text` into `path`, readable by the person alone: a temporary file beside it, flushed, renamed over, so
    that a reader sees the old file or the new one, never a part."""
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def last_used(entries: Iterator[dict]) -> dict[str, str]:
    """The time of the latest audit line of each token name, from the audit log's entries."""
    found: dict[str, str] = {}
    for entry in entries:
        name, time = entry.get("token"), entry.get("time")
        if isinstance(name, str) and isinstance(time, str) and time > found.get(name, ""):
            found[name] = time
    return found


# -- the `gateway token` commands ---------------------------------------------------------------------------


def _store_and_gateway() -> tuple[TokenStore, Any]:
    """The store of this run's gateway (the root command's session, `gateway.commands.cli.Session`, builds it)."""
    gateway = click.get_current_context().find_root().obj.gateway()
    return TokenStore.of_state(gateway.folders.state), gateway


@click.group()
def token() -> None:
    """Tokens for hosts that reach `gateway serve --http`: each gives one profile of the config.

    A host sends its token in the header `Authorization: Bearer TOKEN`; the token chooses what it is given: the
    [profiles.NAME] the token names (its plugins, tools and projects). The token `gateway serve --http` makes
    on its own (the file http-token) still works and gives the profile `serve --profile` names, or everything
    the config gives when it names none.
    """


@token.command("add")
@click.argument("name")
@click.option("--profile", required=True, metavar="PROFILE",
              help="The [profiles.PROFILE] of the config that this token gives (and nothing more).")
def token_add(name: str, profile: str) -> None:
    """Make a token called NAME that gives the profile PROFILE, and print it once.

    Only its hash is kept (in a file of its own, readable by you alone), so copy it now into the host's
    config. `gateway token revoke NAME` takes it back.
    """
    store, gateway = _store_and_gateway()
    snapshot = gateway.snapshot()
    if snapshot.error is None and profile.strip() not in snapshot.config.profiles:
        defined = ", ".join(snapshot.config.profiles) or "none"
        where = snapshot.config.path or gateway.source.path
        raise click.ClickException(f"the profile {profile!r} is not defined in {where} (its profiles: {defined}); "
                                   f"add a [profiles.{profile}] table first, saying what this host may be given")
    try:
        made, secret = store.add(name, profile)
    except TokenError as error:
        raise click.ClickException(str(error)) from None
    click.echo(secret)
    click.echo(f"Made the token {made.name!r}, giving the profile {made.profile!r}. It is shown this once (only its "
               f"hash is kept, in {made.path}): the host sends it as `Authorization: Bearer TOKEN` to "
               "`gateway serve --http`.", err=True)


@token.command("list")
def token_list() -> None:
    """Every token: its name, the profile it gives, when it was made and last used (never the token itself)."""
    store, gateway = _store_and_gateway()
    used = last_used(gateway.audit.read())
    served = (gateway.folders.state / "http-token").exists()
    rows = [(DEFAULT_NAME, "(the one `serve --profile` names, if any)", "", used.get(DEFAULT_NAME, ""))] if served else []
    rows += [(t.name, t.profile, t.created, used.get(t.name, "")) for t in store.tokens()]
    for path in store.broken:
        click.echo(f"{path} is not a whole token (no profile, no hash, or not JSON): it gives nothing; revoke it "
                   f"with `gateway token revoke {path.name.removesuffix(SUFFIX)}`", err=True)
    if not rows:
        click.echo("(no tokens: `gateway token add NAME --profile PROFILE` makes one)", err=True)
        return
    for name, profile, created, last in rows:
        click.echo(f"{name}  profile={profile}  made={created or '?'}  last used={last or 'never'}")


@token.command("revoke")
@click.argument("name")
def token_revoke(name: str) -> None:
    """Take the token NAME back: a host presenting it is refused from its next request on."""
    store, _gateway = _store_and_gateway()
    try:
        gone = store.revoke(name)
    except TokenError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"Revoked the token {gone.name!r}" + (f" (profile {gone.profile})" if gone.profile else "") + ".")
