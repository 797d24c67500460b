"""The core's call-time refresh: run before a plugin answers, waited for under the budget, continued past it."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import anyio
import pytest

from gateway import Context, Resource, Tool, hookimpl
from gateway.api.refresh import STILL_READING, Refresh, Refreshed
from gateway.engine.config import Config, ConfigError
from gateway.testing import make_gateway
from gateway.wire.notify import Notifier


class Slow:
    """A plugin whose store (a list) is filled by a refresh that waits for `release` when told to."""

    def __init__(self) -> None:
        self.store: list[str] = []
        self.backlog: list[str] = []
        self.release = threading.Event()
        self.release.set()
        self.runs = 0
        self.running = 0
        self.most_at_once = 0
        self.lock = threading.Lock()

    def refresh(self, ctx: Context) -> Refreshed:
        with self.lock:
            self.runs += 1
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
        try:
            if not self.backlog:
                return Refreshed()
            self.release.wait(30)
            added = len(self.backlog)
            self.store.extend(self.backlog)
            self.backlog.clear()
            return Refreshed(added=added, changed=("slow://store",))
        finally:
            with self.lock:
                self.running -= 1

    def plugin(self) -> SimpleNamespace:
        def things() -> dict:
            """What the store holds."""
            return {"things": list(self.store)}

        return SimpleNamespace(
            register_tools=hookimpl(lambda gateway: [Tool.from_function(things, read_only=True)]),
            register_resources=hookimpl(lambda gateway: [
                Resource(uri="slow://store", name="store", read=lambda ctx: ", ".join(self.store) or "(empty)")
            ]),
            register_refresh=hookimpl(lambda gateway: [Refresh(run=self.refresh)]),
        )


def _gateway(home, slow: Slow, budget_ms: float = 200):
    return make_gateway([("slow", slow.plugin())], home=home,
                        config={"gateway": {"plugins": ["slow"], "refresh_budget_ms": budget_ms}})


def test_a_call_has_what_its_refresh_brought_in(gateway_home):
    slow = Slow()
    gateway = _gateway(gateway_home, slow)
    slow.backlog = ["pear"]
    answer = gateway.call("things")
    assert answer.data == {"things": ["pear"]}
    assert STILL_READING.format(plugin="slow") not in answer.text
    slow.backlog = ["quince"]
    assert gateway.read("slow://store").text == "pear, quince"


def test_past_the_budget_the_call_answers_from_the_store_says_so_and_the_next_has_everything(gateway_home):
    slow = Slow()
    gateway = _gateway(gateway_home, slow, budget_ms=50)
    slow.backlog = ["pear", "quince"]
    slow.release.clear()
    answer = gateway.call("things")
    assert answer.data == {"things": []}  # the store as it was
    assert not answer.is_error
    assert answer.text.splitlines()[-1] == STILL_READING.format(plugin="slow")
    slow.release.set()  # the import goes on by itself: nothing else starts it
    answer = gateway.call("things")
    assert answer.data == {"things": ["pear", "quince"]}
    assert STILL_READING.format(plugin="slow") not in answer.text


def test_calls_during_a_refresh_wait_for_the_one_running_rather_than_start_another(gateway_home):
    slow = Slow()
    gateway = _gateway(gateway_home, slow, budget_ms=20)
    slow.backlog = ["pear"]
    slow.release.clear()
    for _ in range(3):
        assert gateway.call("things").text.endswith(STILL_READING.format(plugin="slow"))
    assert slow.runs == 1
    slow.release.set()
    assert gateway.call("things").data == {"things": ["pear"]}
    assert slow.most_at_once == 1


def test_a_failing_refresh_is_logged_and_the_call_answers_from_the_store(gateway_home, captured_logs):
    def broken(ctx):
        raise OSError("the disk went away")

    def things() -> str:
        """Nothing much."""
        return "from the store"

    plugin = SimpleNamespace(
        register_tools=hookimpl(lambda gateway: [Tool.from_function(things, read_only=True)]),
        register_refresh=hookimpl(lambda gateway: [Refresh(run=broken)]),
    )
    gateway = make_gateway([("broken", plugin)], home=gateway_home, config={"gateway": {"plugins": ["broken"]}})
    answer = gateway.call("things")
    assert not answer.is_error and answer.text == "from the store"
    failed = [line for line in captured_logs if line["event"] == "refresh failed"]
    assert failed and "the disk went away" in failed[0]["traceback"]


def test_the_listeners_hear_of_a_refresh_only_when_it_brought_something(gateway_home):
    slow = Slow()
    gateway = _gateway(gateway_home, slow)
    heard: list[tuple[str, Refreshed]] = []
    gateway.refreshing.listeners.append(lambda plugin, result: heard.append((plugin, result)))
    gateway.call("things")
    slow.backlog = ["pear"]
    gateway.call("things")
    assert heard == [("slow", Refreshed(added=1, changed=("slow://store",)))]


def test_a_refresh_does_not_run_for_another_plugins_call(gateway_home):
    slow = Slow()

    def other() -> str:
        """Another plugin's tool."""
        return "other"

    gateway = make_gateway(
        [("slow", slow.plugin()),
         ("other", SimpleNamespace(register_tools=hookimpl(lambda gateway: [Tool.from_function(other)])))],
        home=gateway_home,
        config={"gateway": {"plugins": ["slow", "other"]}},
    )
    gateway.call("other")
    assert slow.runs == 0


@pytest.mark.parametrize("value", [-1, "fast", True, 100_000])
def test_the_budget_setting_is_checked(value):
    with pytest.raises(ConfigError, match="refresh_budget_ms"):
        Config.from_dict({"gateway": {"refresh_budget_ms": value}})
    assert Config.from_dict({"gateway": {"refresh_budget_ms": 0}}).refresh_budget_ms == 0


class FakeSession:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str | None]] = []

    async def send_resource_list_changed(self) -> None:
        self.sent.append(("list_changed", None))

    async def send_resource_updated(self, uri: str) -> None:
        self.sent.append(("updated", uri))


async def tell_everyone(uri: str, caller: object) -> bool:
    return True


def test_list_changed_is_paced_and_updated_goes_to_subscribers_only():
    async def scenario() -> tuple[FakeSession, FakeSession]:
        notifier = Notifier(may_tell=tell_everyone, gap=0.3)
        watching, other = FakeSession(), FakeSession()
        async with anyio.create_task_group() as tasks:
            await notifier.serve(tasks)
            notifier.connected(watching)
            notifier.connected(other)
            notifier.subscribe(watching, "slow://store")
            for _ in range(5):  # a burst of refreshes from threads: one list_changed now, one held for the rest
                added = Refreshed(added=1, changed=("slow://store",), owners=[()])  # one thing, in no project
                await anyio.to_thread.run_sync(notifier.refreshed, "slow", added)
            await anyio.sleep(0.1)
            assert other.sent == [("list_changed", None)]
            await anyio.sleep(0.5)
        return watching, other

    watching, other = anyio.run(scenario)
    assert other.sent == [("list_changed", None)] * 2
    assert watching.sent.count(("updated", "slow://store")) == 5
    assert watching.sent.count(("list_changed", None)) == 2


def test_updated_goes_only_where_the_gate_says_so_when_it_is_sent():
    asked: list[tuple[str, object]] = []

    async def gate(uri: str, caller: object) -> bool:
        asked.append((uri, caller))
        if caller == "broken":
            raise RuntimeError("the gate cannot answer")
        return caller == "still-open"

    async def scenario() -> list[FakeSession]:
        notifier = Notifier(may_tell=gate, gap=0.3)
        sessions = [FakeSession(), FakeSession(), FakeSession()]
        async with anyio.create_task_group() as tasks:
            await notifier.serve(tasks)
            for session, caller in zip(sessions, ["still-open", "closed-since", "broken"], strict=True):
                notifier.connected(session)
                notifier.subscribe(session, "slow://store", caller)
            await anyio.to_thread.run_sync(notifier.refreshed, "slow", Refreshed(changed=("slow://store",)))
            await anyio.sleep(0.2)
        return sessions

    open_one, closed_one, broken_one = anyio.run(scenario)
    assert open_one.sent == [("updated", "slow://store")]
    assert closed_one.sent == [] and broken_one.sent == []  # refused, or a gate that failed: nothing told
    assert sorted(caller for _uri, caller in asked) == ["broken", "closed-since", "still-open"]


def test_a_plugin_table_can_turn_its_refresh_off(gateway_home):
    slow = Slow()
    gateway = make_gateway([("slow", slow.plugin())], home=gateway_home,
                           config={"gateway": {"plugins": ["slow"]}, "plugins": {"slow": {"refresh": False}}})
    slow.backlog = ["pear"]
    assert gateway.call("things").data == {"things": []}
    assert slow.runs == 0
    with pytest.raises(ConfigError, match="refresh must be true or false"):
        Config.from_dict({"plugins": {"slow": {"refresh": "no"}}})


def test_a_stale_check_saying_nothing_changed_spares_the_refresh(gateway_home):
    slow = Slow()
    checks: list[str] = []

    def stale(ctx) -> bool:
        checks.append(ctx.plugin)
        return bool(slow.backlog)

    plugin = slow.plugin()
    plugin.register_refresh = hookimpl(lambda gateway: [Refresh(run=slow.refresh, stale=stale)])
    gateway = make_gateway([("slow", plugin)], home=gateway_home, config={"gateway": {"plugins": ["slow"]}})
    gateway.call("things")
    assert slow.runs == 0 and checks == ["slow"]
    slow.backlog = ["pear"]
    assert gateway.call("things").data == {"things": ["pear"]}
    assert slow.runs == 1
