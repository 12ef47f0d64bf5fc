"""Deadline on mitmproxy's test flows: what holds without a live connection (timers armed and cancelled, an
expiry that finds no connection leaves the flow to mitmproxy, the connect deadline cancels the connecting task)."""

from __future__ import annotations

import asyncio
import time

import pytest
from mitmproxy import connection, http
from mitmproxy.proxy import server_hooks
from mitmproxy.test import taddons, tflow

from proxy.config import WardenConfig
from proxy.errors import CONNECT_TIMED_OUT
from proxy.guard.engine import Guard
from proxy.services import Services
from proxy.stages.deadline import Deadline
from proxy.state import STATE_KEY, FlowState, Outcome, Route
from proxy.telemetry.metrics import Metrics

_GUARD = Guard.load([])


def deadline(timeout: float = 30.0, connect_timeout: float = 5.0) -> Deadline:
    config = WardenConfig(upstream="http://u:1", upstream_timeout=timeout, upstream_connect_timeout=connect_timeout)
    return Deadline(Services(config=config, metrics=Metrics(), guard=_GUARD))


def flow_with_state() -> tuple[http.HTTPFlow, FlowState]:
    flow = tflow.tflow()
    state = FlowState("r", Route.CHAT, 0.0)
    flow.metadata[STATE_KEY] = state
    return flow, state


@pytest.mark.parametrize("hook", ["responseheaders", "response", "error"])
def test_a_timer_is_armed_on_request_and_cancelled_when_the_answer_or_an_error_comes(hook: str) -> None:
    stage = deadline(30.0)
    flow, _ = flow_with_state()

    async def run() -> None:
        loop = asyncio.get_running_loop()
        stage.request(flow)
        timer = stage._timers[flow.id]
        assert abs(timer.when() - (loop.time() + 30.0)) < 1.0
        getattr(stage, hook)(flow)
        assert flow.id not in stage._timers and timer.cancelled()
        getattr(stage, hook)(flow)  # twice is harmless

    asyncio.run(run())


def test_a_flow_answered_already_or_a_zero_timeout_arms_nothing() -> None:
    answered, _ = flow_with_state()
    answered.response = http.Response.make(403, b"{}")
    unanswered, _ = flow_with_state()

    async def run() -> None:
        deadline(30.0).request(answered)
        off = deadline(0.0)
        off.request(unanswered)
        assert off._timers == {}

    asyncio.run(run())
    stage = deadline(30.0)

    async def armed() -> None:
        stage.request(answered)

    asyncio.run(armed())
    assert stage._timers == {}


def test_expiry_without_a_connection_handler_leaves_the_flow_alone() -> None:
    stage = deadline(0.01)
    flow, state = flow_with_state()
    assert flow.live and flow.response is None

    async def run() -> None:
        with taddons.context():  # a master without the proxyserver addon: no connection handler
            stage.request(flow)
            await asyncio.sleep(0.05)  # the timer fires: _expire runs

    asyncio.run(run())
    assert stage._timers == {} and stage._tasks == set()
    assert flow.response is None and state.outcome is Outcome.OK
    assert flow.metadata.keys() == {STATE_KEY}


def test_expiry_of_a_flow_that_has_its_answer_does_nothing() -> None:
    stage = deadline(30.0)
    flow, state = flow_with_state()
    flow.response = http.Response.make(200, b"{}")
    stage._expire(flow)  # no master needed: it returns before looking for the connection
    assert flow.response.status_code == 200 and state.outcome is Outcome.OK


def hook_data() -> server_hooks.ServerConnectionHookData:
    return server_hooks.ServerConnectionHookData(server=tflow.tserver_conn(), client=tflow.tclient_conn())


def test_the_connect_timer_is_armed_in_the_connecting_task_and_disarmed_once_connected() -> None:
    stage = deadline(connect_timeout=5.0)
    data = hook_data()

    async def run() -> None:
        stage.server_connect(data)
        assert data.server.id in stage._connect_timers
        timer = stage._connect_timers[data.server.id]
        stage.server_connected(data)
        assert stage._connect_timers == {} and timer.cancelled()
        stage.server_connect(data)
        stage.server_connect_error(data)
        assert stage._connect_timers == {}

    asyncio.run(run())
    off = deadline(connect_timeout=0.0)

    async def disabled() -> None:
        off.server_connect(data)

    asyncio.run(disabled())
    assert off._connect_timers == {}


def test_a_connect_past_its_deadline_cancels_the_connecting_task() -> None:
    stage = deadline(connect_timeout=0.01)
    server = tflow.tserver_conn()
    server.state = connection.ConnectionState.CLOSED
    server.timestamp_start = time.time() - 1.0  # connecting for a second already

    async def run() -> str:
        async def connecting() -> None:
            stage.server_connect(server_hooks.ServerConnectionHookData(server=server, client=tflow.tclient_conn()))
            await asyncio.sleep(10)

        task = asyncio.ensure_future(connecting())
        try:
            await asyncio.wait_for(task, 1.0)
        except asyncio.CancelledError as exc:
            return str(exc.args[0]) if exc.args else ""
        return "not cancelled"

    message = asyncio.run(run())
    assert message.startswith(CONNECT_TIMED_OUT)
    assert stage._connect_timers == {}


def test_a_connect_still_queued_is_looked_at_again_rather_than_cancelled() -> None:
    stage = deadline(connect_timeout=5.0)
    server = tflow.tserver_conn()
    server.state = connection.ConnectionState.CLOSED
    server.timestamp_start = None  # waiting behind mitmproxy's per-client connection limit

    async def run() -> bool:
        task = asyncio.ensure_future(asyncio.sleep(10))
        stage._connect_expired(server, task)
        rearmed = server.id in stage._connect_timers
        stage._disarm_connect(server)
        await asyncio.sleep(0)
        cancelled = task.cancelled() or task.cancelling() > 0
        task.cancel()
        return rearmed and not cancelled

    assert asyncio.run(run())
