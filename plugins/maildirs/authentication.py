"""Whether the account's own receiving server authenticated a message's sender, from its Authentication-Results.

One rule for every reader of mail: the mail plugin's verdict on a message (`authenticated by the account's own
server`, or forged) and the spam plugin's description of its sender to the gate (a `Person` proven or not) read the
same headers the same way. Only a header that the account's own server added (its `authserv_id`, the header's
first word) counts: any other is the sender's own word.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

PASS, FORGED, UNAUTHENTICATED = "pass", "forged", "unauthenticated"


def _aligned(domain: str, other: str) -> bool:
    """Relaxed alignment (RFC 7489): one domain is the other or below it (an approximation of the org domain)."""
    domain, other = domain.lower().rstrip("."), other.lower().rstrip(".")
    return bool(domain and other) and (domain == other or domain.endswith("." + other) or other.endswith("." + domain))


def server_of(value: str) -> str:
    """The authserv-id an Authentication-Results value names (its first word), lower-cased; "" when none."""
    return (" ".join(value.split()).split(";", 1)[0].split() or [""])[0].lower()


def verdict(results: Iterable[str], authserv_id: str, sender: str) -> str:
    """PASS, FORGED or UNAUTHENTICATED for the From address `sender`, from the Authentication-Results values
    `results`, of which only those the account's own server (`authserv_id`) added are read.

    Forged: its DMARC failed, or no passing SPF (smtp.mailfrom) or DKIM (header.d / header.i) aligns with the
    From domain. With no `authserv_id`, or no header of that server: unauthenticated.
    """
    if not authserv_id:
        return UNAUTHENTICATED
    from_domain = sender.rpartition("@")[2]
    ours = [" ".join(value.split()).lower() for value in results if server_of(value) == authserv_id]
    if not ours:
        return UNAUTHENTICATED
    joined = " ; ".join(ours)
    if re.search(r"\bdmarc\s*=\s*fail", joined):
        return FORGED
    if re.search(r"\bdmarc\s*=\s*pass", joined) and re.search(r"header\.from\s*=\s*" + re.escape(from_domain), joined):
        return PASS
    for method, property_pattern in (("spf", r"smtp\.mailfrom\s*=\s*([^\s;]+)"),
                                     ("dkim", r"header\.[di]\s*=\s*([^\s;]+)")):
        for clause in re.split(r";", joined):
            if re.search(rf"\b{method}\s*=\s*pass\b", clause):
                for value in re.findall(property_pattern, clause):
                    if _aligned(value.rpartition("@")[2] or value, from_domain):
                        return PASS
    return FORGED


def passed_by(results: Iterable[str], sender: str) -> tuple[str, ...]:
    """The servers (authserv-ids) whose Authentication-Results pass `sender`: what a reader that learns the
    account only later keeps per message (a few short words, not the headers)."""
    values = list(results)
    servers = dict.fromkeys(server_of(value) for value in values)
    return tuple(server for server in servers if server and verdict(values, server, sender) == PASS)
