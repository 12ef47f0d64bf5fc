"""proxy/mitm/dispatch.py calls what mitmproxy's own `handle_lifecycle` calls, in the same order, with the same
error handling; only the walk is done once."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import pytest
from mitmproxy import exceptions, hooks, http, options
from mitmproxy.addonmanager import AddonManager
from mitmproxy.master import Master
from mitmproxy.test import tflow

from proxy.mitm.dispatch import Dispatch, install


@dataclass
class ProbeHook(hooks.Hook):
    """A flow hook like `request` (`probe` on an addon); mitmproxy's own are its layers' internals."""

    flow: http.HTTPFlow


@dataclass
class UnheardHook(hooks.Hook):
    """A flow hook no addon here has."""

    flow: http.HTTPFlow


class Recorder:
    def __init__(self, name: str, log: list[str], *, fail: type[BaseException] | None = None,
                 is_async: bool = False) -> None:
        self.name, self.log, self.fail, self.is_async = name, log, fail, is_async

    def probe(self, flow: http.HTTPFlow) -> Any:
        if self.is_async:
            async def later() -> None:
                await asyncio.sleep(0)
                self.log.append(self.name)
            return later()
        self.log.append(self.name)
        if self.fail is not None:
            raise self.fail("boom")
        return None


class Parent:
    """An addon with children (mitmproxy's `traverse`): its own hook first, then theirs."""

    def __init__(self, log: list[str], children: list[object]) -> None:
        self.log, self.addons = log, children

    def probe(self, flow: http.HTTPFlow) -> None:
        self.log.append("parent")


class Updates:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def update(self, flows: list[http.HTTPFlow]) -> None:
        self.log.append(f"update {len(flows)}")


def run(addons: list[object], event: hooks.Hook, *, fast: bool) -> None:
    async def go() -> None:
        master = Master(options.Options())
        master.addons.add(*addons)
        if fast:
            install(master.addons)
        await master.addons.handle_lifecycle(event)

    asyncio.run(go())


@pytest.mark.parametrize("fast", [False, True], ids=["mitmproxy", "dispatch"])
def test_same_calls_in_the_same_order(fast: bool) -> None:
    log: list[str] = []
    addons = [Recorder("a", log), Parent(log, [Recorder("child", log)]), Recorder("b", log, is_async=True),
              Recorder("c", log), Updates(log)]
    run(addons, ProbeHook(tflow.tflow()), fast=fast)
    assert log == ["a", "parent", "child", "b", "c", "update 1"]


@pytest.mark.parametrize("fast", [False, True], ids=["mitmproxy", "dispatch"])
def test_an_addon_error_is_logged_and_the_next_addon_runs(fast: bool, caplog: pytest.LogCaptureFixture) -> None:
    log: list[str] = []
    addons = [Parent(log, [Recorder("child", log, fail=ValueError), Recorder("child 2", log)]), Recorder("b", log)]
    with caplog.at_level(logging.ERROR):
        run(addons, ProbeHook(tflow.tflow()), fast=fast)
    # mitmproxy's safecall wraps a top-level addon: the failing child's sibling is skipped, the next addon runs.
    assert log == ["parent", "child", "b"]
    assert [r.getMessage() for r in caplog.records] == ["Addon error: boom"]


@pytest.mark.parametrize("fast", [False, True], ids=["mitmproxy", "dispatch"])
def test_addon_halt_stops_the_event(fast: bool) -> None:
    log: list[str] = []
    run([Recorder("a", log, fail=exceptions.AddonHalt), Recorder("b", log), Updates(log)],
        ProbeHook(tflow.tflow()), fast=fast)
    assert log == ["a", "update 1"]


def test_options_errors_propagate() -> None:
    with pytest.raises(exceptions.OptionsError):
        run([Recorder("a", [], fail=exceptions.OptionsError)], ProbeHook(tflow.tflow()), fast=True)


def test_the_plan_follows_the_chain() -> None:
    log: list[str] = []

    async def go() -> None:
        master = Master(options.Options())
        manager: AddonManager = master.addons
        first = Recorder("a", log)
        manager.add(first)
        install(manager)
        install(manager)  # idempotent
        assert isinstance(manager.handle_lifecycle, Dispatch)
        await manager.handle_lifecycle(ProbeHook(tflow.tflow()))
        manager.add(Recorder("b", log))
        await manager.handle_lifecycle(ProbeHook(tflow.tflow()))
        manager.remove(first)
        await manager.handle_lifecycle(ProbeHook(tflow.tflow()))
        await manager.handle_lifecycle(UnheardHook(tflow.tflow()))  # nobody has it

    asyncio.run(go())
    assert log == ["a", "a", "b", "b"]
