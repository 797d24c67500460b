"""One real `gateway serve`, spoken to with the SDK's own client, shared by the tests of a module.

A served test costs a second or two of CPU to start its server (the SDK's types are built at import). Tests that
only read from a server, and so cannot change what the next one is answered, share one: a module-scoped fixture
opens it with `shared_client(home, ...)` (the same options as `serve_client`), and each test plays its part on it
with `served.play(coroutine_function, *arguments)`, which runs `coroutine_function(client, *arguments)` on the
event loop that holds the connection and gives back its result. A test that changes the server's state (files it
watches, the config, a subscription it leaves open) starts its own server instead.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from anyio.from_thread import BlockingPortal, start_blocking_portal

from gateway.testing import serve_client

Result = TypeVar("Result")


class SharedClient:
    """The SDK client of a shared server and the portal into the event loop that holds its connection."""

    def __init__(self, portal: BlockingPortal, client: Any) -> None:
        self.portal = portal
        self.client = client

    def play(self, play: Callable[..., Awaitable[Result]], *arguments: Any) -> Result:
        """Run `play(client, *arguments)` on the connection's event loop and return what it returns."""
        return self.portal.call(play, self.client, *arguments)


@contextmanager
def shared_client(home: Path, **options: Any) -> Iterator[SharedClient]:
    """A real `gateway serve` on `home` and the SDK client connected to it, for as long as the block lasts."""
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(serve_client(home, **options)) as client:
        yield SharedClient(portal, client)
