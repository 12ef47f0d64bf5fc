"""The inspect core for whole bodies: inline or off the loop, under the budget, into the ledger, a rewrite plan."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from prometheus_client import generate_latest

from audit.records import Verdict
from proxy.guard.body import OFFLOAD_CHARS, BodyInspector, BodyScan
from proxy.guard.engine import Guard, compile_policy
from proxy.guard.ledger import Direction
from proxy.state import FlowState, Route
from proxy.telemetry.metrics import Metrics
from rules.findings import Action

PHONE = "13812345678"
GUARD = Guard(compile_policy([], request_pii="pseudonymize"))


def inspector(direction: Direction, metrics: Metrics | None = None, *, budget: float = 5.0,
              fail_mode: str = "closed") -> BodyInspector:
    return BodyInspector(GUARD, direction, metrics or Metrics(), budget=budget, fail_mode=fail_mode)


def chat(text: str) -> dict[str, object]:
    return {"model": "m", "messages": [{"role": "user", "content": text}]}


def answer(text: str) -> dict[str, object]:
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}


def done(scan: BodyScan | Awaitable[BodyScan]) -> BodyScan:
    if isinstance(scan, BodyScan):
        return scan

    async def wait() -> BodyScan:
        return await scan

    return asyncio.run(wait())


def test_a_small_prompt_is_scanned_inline_and_its_rewrite_planned() -> None:
    state = FlowState("r", Route.CHAT, 0.0)
    scan = inspector(Direction.REQUEST).inspect_body(state, chat(f"call {PHONE} please"))
    assert isinstance(scan, BodyScan)  # no thread hop for a short text
    assert scan.inspection is not None and scan.inspection.action is Action.PSEUDONYMIZE
    assert scan.rewrites() == [(("messages", 0, "content"), "call <CN_MOBILE_1> please")]
    assert state.ledger.vault is scan.vault and state.ledger.verdicts[Direction.REQUEST] is Verdict.PSEUDONYMIZE
    assert state.provenance.policy_version == GUARD.policy.version
    assert Direction.REQUEST in state.ledger.seconds


def test_an_answer_is_masked_then_given_the_request_s_pseudonyms_back() -> None:
    state = FlowState("r", Route.CHAT, 0.0)
    done(inspector(Direction.REQUEST).inspect_body(state, chat(f"call {PHONE} please")))
    other = "13987654321"
    scan = done(inspector(Direction.RESPONSE).inspect_body(state, answer(f"calling <CN_MOBILE_1>, not {other}")))
    assert scan.rewrites(restore=True) == [(("choices", 0, "message", "content"),
                                            f"calling {PHONE}, not 139****4321")]
    assert state.ledger.verdicts[Direction.RESPONSE] is Verdict.MASK


def test_a_blocked_body_plans_no_rewrite_and_names_its_rules() -> None:
    state = FlowState("r", Route.CHAT, 0.0)
    scan = done(inspector(Direction.REQUEST).inspect_body(state, chat(f"我想找人代考，电话{PHONE}")))
    assert scan.blocked and scan.rewrites() == []
    assert state.ledger.blocked_rules == ("exam_fraud",) and state.ledger.action is Action.BLOCK


def test_a_big_body_is_scanned_in_a_worker_thread() -> None:
    state = FlowState("r", Route.CHAT, 0.0)
    pending = inspector(Direction.REQUEST).inspect_body(state, chat("a" * OFFLOAD_CHARS + f" {PHONE}"))
    assert not isinstance(pending, BodyScan)
    scan = done(pending)
    assert scan.inspection is not None and len(scan.rewrites()) == 1
    assert state.ledger.verdicts[Direction.REQUEST] is Verdict.PSEUDONYMIZE


def test_over_budget_the_fail_mode_is_recorded_and_counted() -> None:
    for mode, verdict in (("open", Verdict.FAILED_OPEN), ("closed", Verdict.TIMEOUT)):
        metrics = Metrics()
        state = FlowState("r", Route.CHAT, 0.0)
        core = inspector(Direction.RESPONSE, metrics, budget=1e-6, fail_mode=mode)
        scan = done(core.inspect_body(state, answer("a" * (4 * OFFLOAD_CHARS) + f" {PHONE}")))
        assert scan.inspection is None and not scan.blocked and scan.rewrites(restore=True) == []
        assert state.ledger.verdicts[Direction.RESPONSE] is verdict
        assert f'warden_guard_over_budget_total{{direction="output",fail_mode="{mode}"}} 1.0' in \
            generate_latest(metrics.registry).decode()
