"""Masking: rewrite the spans a scan decided to mask or pseudonymize; everything else stays byte for byte.

`apply(text, result, vault)` is the one function the proxy and the stream scanner use, so a streamed answer
and the same answer scanned whole come out identical.
"""

from __future__ import annotations

from collections.abc import Iterable

from rules.findings import Action
from rules.policy import Decision, MaskSpec
from rules.pseudonym import PseudonymVault
from rules.scanner import ScanResult

MASK_CHAR = "*"


def _significant(c: str) -> bool:
    return c.isalnum()


def _mask_keep(value: str, first: int, last: int) -> str:
    positions = [i for i, c in enumerate(value) if _significant(c)]
    n = len(positions)
    # Keeping that much would show the whole value: mask all of it instead.
    hidden = set(positions) if first + last >= n else set(positions[first : n - last])
    return "".join(MASK_CHAR if i in hidden else c for i, c in enumerate(value))


def _mask_pattern(value: str, pattern: str) -> str:
    slots = [c for c in pattern if c in "*#"]
    chars = [c for c in value if _significant(c)]
    if not slots:
        return pattern
    # Right-align slots with the value's letters and digits; extra value characters take the first slot.
    assigned: list[str] = []
    offset = len(chars) - len(slots)
    for k, c in enumerate(chars):
        j = k - offset
        slot = slots[j] if j >= 0 else slots[0]
        assigned.append(c if slot == "#" else MASK_CHAR)
    literal = any(c not in "*#" for c in pattern)
    if literal:
        extra = max(0, offset)
        out = assigned[:extra]
        it = iter(assigned[extra:])
        skip = max(0, -offset)
        for c in pattern:
            if c in "*#":
                if skip:
                    skip -= 1
                    continue
                out.append(next(it))
            elif not skip:
                out.append(c)
        return "".join(out)
    it = iter(assigned)
    return "".join(next(it) if _significant(c) else c for c in value)


def _mask_email(value: str) -> str:
    local, at, domain = value.rpartition("@")
    if not at:
        return _mask_keep(value, 0, 0)
    return f"{local[:1]}***@{domain}"


def mask_value(value: str, spec: MaskSpec) -> str:
    """The masked form of one value (see MaskSpec for the styles)."""
    if spec.style == "keep":
        return _mask_keep(value, spec.first, spec.last)
    if spec.style == "pattern":
        return _mask_pattern(value, spec.pattern)
    if spec.style == "email":
        return _mask_email(value)
    return spec.text


def placeholder_kind(decision: Decision) -> str:
    f = decision.finding
    return (f.category if f.kind in ("word", "pattern", "semantic") else f.kind).upper()


def rewrites(decisions: Iterable[Decision]) -> list[Decision]:
    """The mask/pseudonymize decisions that will be applied, in text order, overlaps resolved: an earlier
    start wins, then the longer span (findings were already de-duplicated by the scanner)."""
    chosen: list[Decision] = []
    end = -1
    for d in sorted(
        (d for d in decisions if d.action in (Action.MASK, Action.PSEUDONYMIZE)),
        key=lambda d: (d.finding.start, -d.finding.end),
    ):
        if d.finding.start >= end:
            chosen.append(d)
            end = d.finding.end
    return chosen


def replacement(text: str, decision: Decision, vault: PseudonymVault) -> str:
    value = text[decision.finding.start : decision.finding.end]
    if decision.action is Action.PSEUDONYMIZE:
        return vault.pseudonymize(placeholder_kind(decision), value)
    assert decision.mask is not None
    return mask_value(value, decision.mask)


def apply(text: str, result: ScanResult, vault: PseudonymVault | None) -> str:
    """`text` with masked and pseudonymized spans rewritten; block, annotate and allow leave it as is.
    Without a vault, pseudonyms come from a fresh one (stable within this text only)."""
    chosen = rewrites(result.decisions)
    if not chosen:
        return text
    if vault is None:
        vault = PseudonymVault()
    parts: list[str] = []
    pos = 0
    for d in chosen:
        parts.append(text[pos : d.finding.start])
        parts.append(replacement(text, d, vault))
        pos = d.finding.end
    parts.append(text[pos:])
    return "".join(parts)
