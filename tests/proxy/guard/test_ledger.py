"""The GuardLedger: one ordering of actions, typed decisions recorded per direction, the over-budget verdicts."""

from __future__ import annotations

import itertools

from audit.records import Verdict
from proxy.guard.engine import compile_policy
from proxy.guard.ledger import Detection, Direction, GuardLedger, strongest
from rules.findings import Action

PHONE = "13812345678"
ORDER = (Action.ALLOW, Action.ANNOTATE, Action.MASK, Action.PSEUDONYMIZE, Action.BLOCK)


def test_strongest_is_the_severity_order_whatever_the_argument_order() -> None:
    for a, b in itertools.product(ORDER, repeat=2):
        expected = ORDER[max(ORDER.index(a), ORDER.index(b))]
        assert strongest(a, b) is expected and strongest(b, a) is expected


def test_record_keeps_typed_decisions_per_direction() -> None:
    policy = compile_policy([])
    ledger = GuardLedger()
    blocked = policy.request.scan(f"我想找人代考，电话{PHONE}")
    ledger.record(Direction.REQUEST, blocked.action, blocked.decisions, 0.25)
    masked = policy.whole_response.scan(f"ok {PHONE}")
    ledger.record(Direction.RESPONSE, masked.action, masked.decisions, 0.5)
    ledger.record(Direction.RESPONSE, masked.action, masked.decisions, 0.5)
    assert ledger.verdicts == {Direction.REQUEST: Verdict.BLOCK, Direction.RESPONSE: Verdict.MASK}
    assert ledger.action is Action.BLOCK  # the strongest over the exchange, not the last one recorded
    assert ledger.rule_actions["exam_fraud"] is Action.BLOCK
    assert ledger.finding_counts == {"word": 1, "cn_mobile": 3}
    assert ledger.detections[Detection("lexical", "cn_mobile", Direction.RESPONSE, Action.MASK)] == 2
    assert ledger.detections[Detection("lexical", "word", Direction.REQUEST, Action.BLOCK)] == 1
    assert ledger.matched_rules == {Direction.REQUEST: ("CHN_MOBILE", "exam_fraud"),
                                    Direction.RESPONSE: ("CHN_MOBILE",)}
    assert ledger.seconds == {Direction.REQUEST: 0.25, Direction.RESPONSE: 1.0}


def test_over_budget_is_never_recorded_as_pass() -> None:
    ledger = GuardLedger()
    ledger.over_budget(Direction.REQUEST, 2.0, fail_open=True)
    ledger.over_budget(Direction.RESPONSE, 3.0, fail_open=False)
    assert ledger.verdicts == {Direction.REQUEST: Verdict.FAILED_OPEN, Direction.RESPONSE: Verdict.TIMEOUT}
    assert ledger.seconds == {Direction.REQUEST: 2.0, Direction.RESPONSE: 3.0}
    assert ledger.action is Action.ALLOW
    assert (Direction.REQUEST.source, Direction.RESPONSE.source) == ("input", "output")
