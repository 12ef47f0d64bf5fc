"""One inspect core for whole bodies, both directions: extract -> scan (inline, or in a worker thread under
`guard_budget`) -> decisions into the exchange's ledger -> a rewrite plan. The inspect stages are thin shells
around it that apply the result: block, rewrite, restore pseudonyms, or the fail mode when over budget.

Big bodies (and every scan with a plug-in detector, the semantic model) run off the event loop so one long
prompt never stalls other streams; small ones inline, where a thread hop would cost more than the scan.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from proxy.guard.engine import Guard, Inspection, inspect
from proxy.guard.extract import Path, TextField, request_texts, response_texts
from proxy.guard.ledger import Direction
from rules.pseudonym import PseudonymVault

if TYPE_CHECKING:
    from proxy.state import FlowState
    from proxy.telemetry.metrics import Metrics
    from rules.roles import RolePolicy
    from rules.scanner import Scanner

log = logging.getLogger("warden.guard")

OFFLOAD_CHARS = 32_000  # above this much text, scanning moves off the event loop (~1 ms of CPU per 4 KB)


@dataclass(frozen=True, slots=True)
class BodyScan:
    """One body's inspection, for its stage to apply. `inspection` is None when the scan outran the budget."""

    fields: tuple[TextField, ...]
    vault: PseudonymVault
    inspection: Inspection | None

    @property
    def blocked(self) -> bool:
        return self.inspection is not None and self.inspection.blocked

    def rewrites(self, *, restore: bool = False) -> list[tuple[Path, str]]:
        """The fields whose text changes, with the new text: masked or pseudonymized, and with `restore` the
        request's pseudonyms given back (an answer's, after it was scanned as the model wrote it)."""
        new = {f.path: text for f, text in self.inspection.rewritten} if self.inspection else {}
        restore = restore and len(self.vault) > 0
        if not (new or restore):
            return []
        out = []
        for f in self.fields:
            text = new.get(f.path, f.text)
            if restore:
                text = self.vault.restore(text)
            if text != f.text:
                out.append((f.path, text))
        return out


class BodyInspector:
    """The core for one direction; the live policy is read per body (a reload swaps it between two)."""

    def __init__(self, guard: Guard, direction: Direction, metrics: Metrics, *, budget: float,
                 fail_mode: str) -> None:
        self.guard = guard
        self.direction = direction
        self.metrics = metrics
        self.budget = budget
        self.fail_open = fail_mode == "open"
        self.fail_mode = fail_mode
        self.texts = request_texts if direction is Direction.REQUEST else response_texts

    def inspect_body(self, state: FlowState, body: dict[str, object]) -> BodyScan | Awaitable[BodyScan]:
        """Scan the text fields of a parsed body (their JSON paths come with them, for the rewrite)."""
        return self.inspect_fields(state, self.texts(state.route, body))

    def inspect_fields(self, state: FlowState, fields: Sequence[TextField]) -> BodyScan | Awaitable[BodyScan]:
        """A BodyScan at once, or an awaitable of one when the scan runs in a worker thread."""
        policy = self.guard.policy  # one policy for the whole body, whatever a reload does meanwhile
        fields = tuple(fields)
        if self.direction is Direction.REQUEST:
            scanner = policy.request
            vault = PseudonymVault()
            for f in fields:
                vault.learn(f.text)  # placeholders sent back from an earlier turn keep their numbers
            state.ledger.vault = vault  # the answer gets these values back
            state.provenance.policy_version = policy.version
        else:
            scanner = policy.whole_response
            vault = state.ledger.vault or PseudonymVault()
        # Role policy is the request's: an answer is the model's text, judged by the rules as they are.
        roles = policy.roles if self.direction is Direction.REQUEST else None
        if policy.offload or sum(len(f.text) for f in fields) > OFFLOAD_CHARS:
            return self._off_loop(state, scanner, fields, vault, roles)
        started = time.perf_counter()
        inspection = inspect(scanner, fields, vault, roles)
        return self._scanned(state, fields, vault, inspection, time.perf_counter() - started)

    async def _off_loop(self, state: FlowState, scanner: Scanner, fields: tuple[TextField, ...],
                        vault: PseudonymVault, roles: RolePolicy | None) -> BodyScan:
        started = time.perf_counter()
        try:
            inspection = await asyncio.wait_for(asyncio.to_thread(inspect, scanner, fields, vault, roles),
                                                self.budget or None)
        except TimeoutError:
            return self._over_budget(state, fields, vault, time.perf_counter() - started)
        return self._scanned(state, fields, vault, inspection, time.perf_counter() - started)

    def _scanned(self, state: FlowState, fields: tuple[TextField, ...], vault: PseudonymVault,
                 inspection: Inspection, seconds: float) -> BodyScan:
        state.ledger.record(self.direction, inspection.action, inspection.decisions, seconds)
        state.ledger.record_roles(inspection.role_record)
        if inspection.blocked:
            state.ledger.blocked_rules = inspection.blocking_rules
        return BodyScan(fields, vault, inspection)

    def _over_budget(self, state: FlowState, fields: tuple[TextField, ...], vault: PseudonymVault,
                     seconds: float) -> BodyScan:
        """The scan outran `guard_budget` (a flood of long prompts, a starved CPU). The scan thread cannot be
        stopped, but the exchange no longer waits for it; what happens to the body is the fail mode, applied
        by the stage: closed, it is refused (503); open, it goes on uninspected, recorded `failed_open`."""
        direction = self.direction.source
        self.metrics.guard_over_budget.labels(direction, self.fail_mode).inc()
        state.ledger.over_budget(self.direction, seconds, fail_open=self.fail_open)
        log.warning("inspection over budget", extra={"request_id": state.request_id, "direction": direction,
                                                     "budget_s": self.budget, "fail_mode": self.fail_mode})
        return BodyScan(fields, vault, None)
