"""What the guard decided over one exchange, typed: the `GuardLedger` every guarding stage writes and audit,
metrics and spans read. Ids, kinds, counts and seconds; never the matched text.

Actions are `rules.findings.Action` and verdicts `audit.records.Verdict` here; they become strings only at the
edges (the audit record, metrics labels, span attributes, the `X-Warden-Action` header). `strongest` is the one
ordering of actions the proxy uses.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, NamedTuple

from audit.records import Verdict
from rules.findings import SEVERITY, Action
from rules.roles import RECORD_ORDER

if TYPE_CHECKING:
    from rules.policy import Decision
    from rules.pseudonym import PseudonymVault


def strongest(a: Action, b: Action) -> Action:
    """The more severe of two actions (allow < annotate < mask < pseudonymize < block, rules.findings)."""
    return b if SEVERITY[b] > SEVERITY[a] else a


class Direction(StrEnum):
    """Which body a verdict is about; the value names the stage in audit records and span events."""

    REQUEST = "request"
    RESPONSE = "response"

    @property
    def source(self) -> str:
        """`input` or `output`: the metrics label and the guardrail event's source (OpenTelemetry GenAI)."""
        return "input" if self is Direction.REQUEST else "output"


ACTION_VERDICT = {
    Action.ALLOW: Verdict.PASS, Action.ANNOTATE: Verdict.ANNOTATE, Action.MASK: Verdict.MASK,
    Action.PSEUDONYMIZE: Verdict.PSEUDONYMIZE, Action.BLOCK: Verdict.BLOCK,
}


class Detection(NamedTuple):
    """The labels of `warden_guard_detections_total`, typed until the metric is observed."""

    detector: str  # lexical | semantic
    kind: str
    direction: Direction
    action: Action


def detector_of(kind: str) -> str:
    return "semantic" if kind == "semantic" else "lexical"


@dataclass(slots=True)
class GuardLedger:
    """One per exchange (a part of proxy.state.FlowState), filled in as the flow moves: the request's
    inspection, the answer's (whole or streamed), and a semantic verdict that may arrive after a stream."""

    # The request's pseudonyms, shared with its answer so the client gets its own values back. Working memory
    # rather than a decision, but it lives and dies with the exchange's guard like the rest.
    vault: PseudonymVault | None = None
    verdicts: dict[Direction, Verdict] = field(default_factory=dict)
    rule_actions: dict[str, Action] = field(default_factory=dict)  # rule id -> strongest action
    finding_counts: dict[str, int] = field(default_factory=dict)  # detector kind -> findings
    action: Action = Action.ALLOW  # strongest action over the exchange (X-Warden-Action)
    blocked_rules: tuple[str, ...] = ()
    detections: dict[Detection, int] = field(default_factory=dict)
    seconds: dict[Direction, float] = field(default_factory=dict)  # scanning time per direction
    matched_rules: dict[Direction, tuple[str, ...]] = field(default_factory=dict)  # rule ids that matched there
    # The request's findings by the role of their text (rules/roles.py): rule id -> role -> the strongest of
    # what happened there (block, annotate, mask, strip, ignore, ...). The audit record's `roles`.
    role_actions: dict[str, dict[str, str]] = field(default_factory=dict)

    def record(self, direction: Direction, action: Action, decisions: Iterable[Decision],
               seconds: float = 0.0) -> None:
        """One direction's decisions (a body's inspection, a stream's, or a late semantic verdict)."""
        self.verdicts[direction] = ACTION_VERDICT[action]
        rules: set[str] = set(self.matched_rules.get(direction, ()))
        for d in decisions:
            rule, kind = d.finding.rule, d.finding.kind
            previous = self.rule_actions.get(rule)
            self.rule_actions[rule] = d.action if previous is None else strongest(previous, d.action)
            self.finding_counts[kind] = self.finding_counts.get(kind, 0) + 1
            key = Detection(detector_of(kind), kind, direction, d.action)
            self.detections[key] = self.detections.get(key, 0) + 1
            rules.add(rule)
        if rules:
            self.matched_rules[direction] = tuple(sorted(rules))
        if seconds:
            self.spent(direction, seconds)
        self.action = strongest(self.action, action)

    def record_roles(self, entries: Iterable[tuple[str, str, str]]) -> None:
        """(rule, role, what happened) per request finding; the strongest per rule and role stays."""
        for rule, role, happened in entries:
            by_role = self.role_actions.setdefault(rule, {})
            previous = by_role.get(role)
            if previous is None or RECORD_ORDER.get(happened, 0) > RECORD_ORDER.get(previous, 0):
                by_role[role] = happened

    def spent(self, direction: Direction, seconds: float) -> None:
        self.seconds[direction] = self.seconds.get(direction, 0.0) + seconds

    def over_budget(self, direction: Direction, seconds: float, *, fail_open: bool) -> None:
        """The scan outran `guard_budget`: recorded `failed_open` (forwarded uninspected) or `timeout`
        (refused), never `pass`."""
        self.spent(direction, seconds)
        self.verdicts[direction] = Verdict.FAILED_OPEN if fail_open else Verdict.TIMEOUT
