"""AuditEmit: one record per exchange; a whole answer waits for its record to be durable, a stream does not.

A real audit log in a temp directory; the flows are mitmproxy's test flows.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from pathlib import Path

import pytest
from mitmproxy import http
from mitmproxy.test import tflow

from audit import AuditConfig, AuditLog, Origin
from proxy.config import WardenConfig
from proxy.guard.engine import Guard
from proxy.schemas.plan import SchemaFacts, SchemaPlan, SchemaResult, SchemaSource
from proxy.services import Services
from proxy.stages.audit_emit import AuditEmit, record_body
from proxy.state import STATE_KEY, FlowState, Outcome, Route
from proxy.telemetry.metrics import Metrics
from rules.schema import SchemaCache

_GUARD = Guard.load()


def open_log(tmp_path: Path, *, batch_window: float) -> AuditLog:
    return AuditLog.open(AuditConfig(directory=tmp_path / "log", origin=Origin("test", "ns", "pod-0", "b"),
                                     batch_window=batch_window, checkpoint_interval=3600.0,
                                     heartbeat_interval=3600.0, tick=0.01))


def emitter(log: AuditLog, **kwargs: float) -> AuditEmit:
    services = Services(config=WardenConfig(upstream="http://u:1"), metrics=Metrics(), guard=_GUARD, audit=log)
    return AuditEmit(services, log, **kwargs)


def answered(*, stream: bool = False) -> tuple[http.HTTPFlow, FlowState]:
    flow = tflow.tflow(resp=True)
    assert flow.response is not None
    flow.response.stream = stream
    state = FlowState("req-1", Route.CHAT, 0.0, stream=stream)
    state.status = 200
    flow.metadata[STATE_KEY] = state
    return flow, state


def run(pending: Awaitable[None]) -> None:
    async def main() -> None:
        await pending

    asyncio.run(main())


def error_code(flow: http.HTTPFlow) -> object:
    assert flow.response is not None
    return json.loads(flow.response.content or b"{}")["error"]["code"]


def test_a_whole_answer_is_released_once_its_record_is_durable(tmp_path: Path) -> None:
    log = open_log(tmp_path, batch_window=0.05)  # a window long enough that the stage must wait for it
    flow, state = answered()
    original = flow.response
    pending = emitter(log).response(flow)
    assert pending is not None and state.provenance.audit_seq == 1  # seq 0 is the boot's epoch record
    run(pending)
    assert flow.response is original and state.outcome == Outcome.OK
    assert log.stats().size_durable == 2
    assert log.close(10)


def test_a_whole_answer_is_withheld_when_its_record_is_not_durable_in_time(tmp_path: Path) -> None:
    log = open_log(tmp_path, batch_window=0.5)  # the writer gathers for 0.5 s; the stage waits 0.02 s
    flow, state = answered()
    pending = emitter(log, durable_wait=0.02).response(flow)
    assert pending is not None
    run(pending)
    assert flow.response is not None and flow.response.status_code == 503
    assert error_code(flow) == "audit_unavailable"
    assert (state.status, state.outcome) == (503, Outcome.INTERNAL_ERROR)
    assert log.close(10)  # the abandoned wait's completion, resolved later, is ignored


@pytest.mark.parametrize("stream", [False, True])
def test_an_append_failure_withholds_a_whole_answer_and_leaves_a_stream_alone(tmp_path: Path,
                                                                            stream: bool) -> None:
    log = open_log(tmp_path, batch_window=0.002)
    assert log.close(10)  # appending to a closed log raises LogClosedError, an AuditError
    flow, state = answered(stream=stream)
    original = flow.response
    assert emitter(log).response(flow) is None
    assert state.audited and state.provenance.audit_seq is None
    if stream:  # already sent: nothing to withhold
        assert flow.response is original and state.outcome == Outcome.OK
    else:
        assert flow.response is not None and flow.response.status_code == 503
        assert error_code(flow) == "audit_unavailable"


def test_a_streamed_answer_s_record_is_queued_not_awaited(tmp_path: Path) -> None:
    log = open_log(tmp_path, batch_window=0.5)
    flow, state = answered(stream=True)
    original = flow.response
    assert emitter(log).response(flow) is None
    assert flow.response is original and state.provenance.audit_seq == 1
    assert log.close(10) and log.stats().size_durable == 3  # epoch, exchange, shutdown


def test_an_exchange_is_recorded_once_whichever_hooks_run(tmp_path: Path) -> None:
    log = open_log(tmp_path, batch_window=0.002)
    emit = emitter(log)
    flow, state = answered()
    pending = emit.response(flow)
    if pending is not None:
        run(pending)
    emit.error(flow)
    assert emit.response(flow) is None
    assert log.stats().records_total == 2 and state.provenance.audit_seq == 1
    assert log.close(10)


PERSON = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@pytest.mark.parametrize(("results", "verdict"), [
    ([SchemaResult.REASKED, SchemaResult.VALID], "valid"),
    ([SchemaResult.REJECTED], "rejected"),
    ([], None),  # nothing in the answer was under the schema (a refusal)
])
def test_the_record_has_the_schema_verdict_and_never_its_violations(tmp_path: Path, results: list[SchemaResult],
                                                                    verdict: str | None) -> None:
    log = open_log(tmp_path, batch_window=0.002)
    flow, state = answered()
    schema = SchemaCache().compile(PERSON)
    state.schema = SchemaFacts(SchemaPlan(SchemaSource.ROUTE, schema), list(results),
                               ("at /users/ann@example.com: expected type \"string\" (keyword `type`)",))
    body = record_body(state, "v1")
    assert body["schema"] == {"result": verdict, "sha256": schema.sha256, "source": "route",
                              "attempts": len(results)}
    assert "ann@example.com" not in json.dumps(body)
    pending = emitter(log).response(flow)
    if pending is not None:
        run(pending)
    assert flow.response is not None and flow.response.status_code == 200  # the log took the record
    assert log.close(10)


def test_an_exchange_without_a_schema_has_no_schema_object() -> None:
    assert "schema" not in record_body(FlowState("r", Route.CHAT, 0.0), "v1")
