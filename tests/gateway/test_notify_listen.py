"""gateway.wire.notify for 2026-07-28 hosts: listen streams are bounded, gated when each notice is sent, and list_changed
goes out only when something a refresh added is readable when it is told."""

from __future__ import annotations

import anyio
import pytest

from gateway.api.refresh import Refreshed
from gateway.wire.notify import LIST_CHANGED, UPDATED, Listen, Notifier, TooManyListens


async def tell_everyone(uri: str, caller: object) -> bool:
    return True


async def drain(stream: Listen) -> list[tuple[str, str]]:
    found = []
    with anyio.move_on_after(0.2):
        async for notice in stream:
            found.append(notice)
    return found


def drained(stream: Listen) -> list[tuple[str, str]]:
    return anyio.run(drain, stream)


def test_the_number_of_listen_streams_is_capped():
    notifier = Notifier(may_tell=tell_everyone, max_listens=2)
    first = notifier.listen("host", frozenset(), True)
    notifier.listen("host", frozenset(), True)
    with pytest.raises(TooManyListens):
        notifier.listen("host", frozenset(), True)
    notifier.unlisten(first)
    assert notifier.listen("host", frozenset(), True) is not None


def test_a_stream_whose_host_stopped_reading_is_ended_at_its_backlog():
    stream = Listen("host", frozenset({"a://1", "a://2", "a://3"}), True, backlog=2)
    for uri in ("a://1", "a://1", "a://2", "a://3"):  # the repeated notice waits once
        stream.deliver((UPDATED, uri))
    assert stream.ended
    assert drained(stream) == [(UPDATED, "a://1"), (UPDATED, "a://2")]  # what waited, then the end


def test_a_listen_stream_counts_as_a_subscriber():
    notifier = Notifier(may_tell=tell_everyone)
    assert not notifier.has_subscribers()
    stream = notifier.listen("host", frozenset(), True)
    assert notifier.has_subscribers()
    notifier.unlisten(stream)
    assert not notifier.has_subscribers()


def test_listeners_hear_what_the_gate_lets_through_when_it_is_sent():
    readable = {"orchard": True}

    def may_list(owners: tuple[frozenset[str], ...]) -> bool:
        return any(all(readable.get(p, False) for p in each) for each in owners)

    async def may_tell(uri: str, caller: object) -> bool:
        return caller == "still-open"

    async def scenario() -> list[list]:
        notifier = Notifier(may_tell=may_tell, gap=0.3, may_list=may_list)
        open_one = notifier.listen("still-open", frozenset({"s://watched"}), True)
        closed_one = notifier.listen("closed-since", frozenset({"s://watched"}), True)
        deaf = notifier.listen("still-open", frozenset(), False)  # asked for neither
        async with anyio.create_task_group() as tasks:
            await notifier.serve(tasks)
            tell = notifier.refreshed
            await anyio.to_thread.run_sync(tell, "p", Refreshed(added=1, changed=("s://watched",),
                                                                owners=[{"orchard"}]))
            await anyio.sleep(0.05)
            await anyio.to_thread.run_sync(tell, "p", Refreshed(added=1, owners=[{"vault"}]))  # kept: not told
            await anyio.to_thread.run_sync(tell, "p", Refreshed(added=1))  # says nowhere: not told
            await anyio.to_thread.run_sync(tell, "p", Refreshed(added=1, owners=[{"orchard"}]))  # held 0.3 s ...
            readable["orchard"] = False  # ... during which the person closes the orchard
            await anyio.sleep(0.5)
            for stream in (open_one, closed_one, deaf):
                stream.end()
        return [await drain(stream) for stream in (open_one, closed_one, deaf)]

    open_heard, closed_heard, deaf_heard = anyio.run(scenario)
    assert open_heard == [(UPDATED, "s://watched"), (LIST_CHANGED, "")]
    assert closed_heard == [(LIST_CHANGED, "")]  # list_changed names nothing; the update was refused
    assert deaf_heard == []


def test_a_refresh_told_on_the_loops_own_thread_is_heard_and_does_not_wait_on_itself():
    async def scenario() -> list[tuple[str, str]]:
        notifier = Notifier(may_tell=tell_everyone)
        stream = notifier.listen("host", frozenset(), True)
        async with anyio.create_task_group() as tasks:
            await notifier.serve(tasks)
            with anyio.fail_after(5):
                notifier.refreshed("inline", Refreshed(added=1, owners=[()]))
            await anyio.sleep(0.05)
            stream.end()
        return await drain(stream)

    assert anyio.run(scenario) == [(LIST_CHANGED, "")]


def test_what_the_person_opened_between_two_readings_of_the_gate():
    from gateway.gate.access import Gate, Manifest
    from gateway.wire.server import _opened

    def gate(open_ids: set[str], outside: bool = True, ids: tuple[str, ...] = ("orchard", "vault")) -> Gate:
        manifest = Manifest.from_dict({"project": [{"id": i, "ai": i in open_ids, "paths": [f"/p/{i}"]} for i in ids]})
        return Gate(manifest, outside_projects=outside)

    assert _opened(gate({"orchard"}), gate({"orchard", "vault"})) == (frozenset({"vault"}),)
    assert _opened(gate({"orchard", "vault"}), gate({"orchard"})) == ()  # closing tells nothing
    assert _opened(gate(set(), outside=False), gate(set())) == (frozenset(),)  # things in no project let out
    assert _opened(gate({"orchard"}), gate({"orchard"}, ids=("orchard",))) == (frozenset(),)  # the vault taken out
    assert _opened(gate({"orchard"}, outside=False), gate({"orchard"}, outside=False, ids=("orchard",))) == ()
