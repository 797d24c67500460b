"""The messages spam_fetch brought into the corpus, described for the person: `traits_of` (for
`gateway access why spam:corpus/<id>`) and `census` (for `gateway access list`), with the traits the tools give the
gate (see `tools.Gatekeeper.own_owners`): the file and its folder, the fetched corpus as folder `corpus` of no
account, its sender (never proven: no account's server vouches for what spam_fetch brought) and its subject masked
as the tools show it.

A message of the person's own Maildirs has a `mid:` address, which the mail plugin describes. Ties are not read
here (a hook gets no tie store): a fetched message tied to a project is kept by the tools all the same, and
`gateway access why mid:<its id>` names the tie.
"""

from __future__ import annotations

from collections.abc import Iterator

from gateway import Person, PluginHost, Traits

_UNPROVEN = "fetched by spam_fetch: no account's server vouches for it"


def _traits(place) -> Traits | None:  # noqa: ANN001 (a corpus.Place)
    from maildirs.conversations import facts_of

    from gateway_spam.tools import _masked_subject

    head = facts_of(place.path)
    if head is None:
        return None
    people = (Person(head.address, proven=False, why_unproven=_UNPROVEN),) if head.address else ()
    words = (_masked_subject(head.subject),) if head.subject else ()
    return Traits(paths=(str(place.path), str(place.path.parent)), people=people, words=words, folder=place.folder)


def traits_of(host: PluginHost, address: str) -> Traits | None:
    from gateway_spam import corpus

    match = corpus.CORPUS_PLACE.match(address.strip())
    if match is None:
        return None
    place = corpus.find_fetched(host.folders.data, match.group(1))
    return None if place is None else _traits(place)


def census(host: PluginHost) -> Iterator[tuple[str, Traits]]:
    from gateway_spam import corpus

    for place in corpus.fetched_places(host.folders.data):
        traits = _traits(place)
        if traits is not None:
            yield f"spam corpus ({place.label})", traits
