"""Incremental scanning of streamed text with a bounded hold-back (DESIGN section 4).

`feed(delta)` appends to the unreleased text, asks the scanner where the shortest suffix begins that could
still grow into a match (`Scanner.viable_start`: prefix closures of the PII and rule patterns, the prefix
set of the word lists), moves that point back to the start of any finding that straddles it, and releases
everything before it, masked exactly as `masking.apply` would mask the whole text. Only the unreleased text
plus `CONTEXT` released characters (for boundaries and context words) are scanned again; released text is
never rescanned from the start.

Bounds: the held suffix is at most `scanner.max_hold_back + 1` normalized characters (invisible characters
inside it come on top). Detectors without a bound are capped: the e-mail pattern at 153 characters, JWTs at
4,096, private key blocks at 8,192, rule patterns with unbounded repetition at 256 (UNBOUNDED_CAP in
rules/scanner.py); a longer match split across chunks may be missed while streaming.

Invariant (tested by splitting texts at every position): for a stream that is not blocked, the
concatenation of all released text equals `masking.apply(full, scanner.scan(full), vault)` for a fresh vault.
When a block decision is released, the text before the blocking finding is released (masked), `blocked`
becomes True, and everything after is withheld.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from rules import masking
from rules.findings import Action, Finding
from rules.normalize import Views
from rules.policy import Decision
from rules.pseudonym import PseudonymVault
from rules.scanner import Scanner

CONTEXT = 64  # released characters kept as left context: >= the PII context window (24) plus slack


@dataclass(frozen=True, slots=True)
class StreamStep:
    """What one `feed`/`flush` releases: masked text, and the findings in it with offsets into the whole
    raw stream (not into `text`, which may be shorter or longer after masking)."""

    text: str
    findings: tuple[Finding, ...] = ()
    decisions: tuple[Decision, ...] = ()
    blocked: bool = False


class StreamScanner:
    """Scans one stream. Not thread-safe: feed it from one thread (the stream callable)."""

    def __init__(self, scanner: Scanner, vault: PseudonymVault | None = None) -> None:
        self._scanner = scanner
        self._vault = vault if vault is not None else PseudonymVault()
        self._released = 0  # raw characters released so far
        self._context = ""
        self._pending = ""
        self._blocked = False
        self._limit = scanner.max_hold_back + 1

    @property
    def blocked(self) -> bool:
        return self._blocked

    @property
    def pending(self) -> int:
        """Characters currently held back."""
        return len(self._pending)

    def feed(self, delta: str) -> StreamStep:
        if self._blocked:
            return StreamStep("", blocked=True)
        self._pending += delta
        if not self._pending:
            return StreamStep("")
        off = len(self._context)
        window = self._context + self._pending
        views = Views(window, self._scanner.config)
        # The window's views serve both questions: what may still grow into a match, and what is found.
        lo = off + max(0, len(self._pending) - self._limit)
        hold_from = self._scanner.viable_start_views(views, lo) - off
        return self._release(hold_from, window, views)

    def flush(self) -> StreamStep:
        if self._blocked:
            return StreamStep("", blocked=True)
        window = self._context + self._pending
        return self._release(len(self._pending), window, Views(window, self._scanner.config))

    def _release(self, cut: int, window: str, views: Views) -> StreamStep:
        if cut <= 0:
            return StreamStep("")
        off = len(self._context)
        result = self._scanner.scan_from(window, off, views)
        decisions = list(result.decisions)
        end = off + cut
        moved = True
        while moved:  # never cut through a finding: hold it back whole
            moved = False
            for d in decisions:
                if d.finding.start < end < d.finding.end:
                    end = d.finding.start
                    moved = True
        final = [d for d in decisions if d.finding.end <= end and d.finding.start < end]
        blocking = next((d for d in final if d.action is Action.BLOCK), None)
        text_end = end
        if blocking is not None:
            text_end = blocking.finding.start
            self._blocked = True
        chosen = [d for d in masking.rewrites(final) if d.finding.end <= text_end]
        parts: list[str] = []
        pos = off
        for d in chosen:
            parts.append(window[pos : d.finding.start])
            parts.append(masking.replacement(window, d, self._vault))
            pos = d.finding.end
        parts.append(window[pos:text_end])
        shift = self._released - off
        out_decisions = tuple(
            dataclasses.replace(d, finding=dataclasses.replace(
                d.finding, start=d.finding.start + shift, end=d.finding.end + shift
            ))
            for d in final
        )
        released_raw = window[off:end]
        self._released += len(released_raw)
        self._context = (self._context + released_raw)[-CONTEXT:]
        self._pending = window[end:]
        if self._blocked:
            self._pending = ""
        return StreamStep(
            text="".join(parts),
            findings=tuple(d.finding for d in out_decisions),
            decisions=out_decisions,
            blocked=self._blocked,
        )
