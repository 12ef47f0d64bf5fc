"""Masking: rewrite the spans a scan decided to mask or pseudonymize; everything else stays byte for byte.

`apply(text, result, vault)` is the one function the proxy uses, and the stream scanner renders with the same
`rewrites` and `replacement`, so a streamed answer and the same answer scanned whole come out identical.

Overlapping findings (an ID that starts an e-mail address, `110105199003071239.wang@example.org`) are
rewritten as one region, the union of their spans: a character of it stays in clear only where every finding
covering it would leave it in clear under its own mask. That is the one rule that holds for every pair of
formats: keeping the strongest finding's format whole would show the other's characters wherever it keeps
its own (an ID keeps 10 of its digits, an e-mail address its domain, where a phone number may sit). A hidden
character is rewritten by the strongest finding hiding it: a pseudonym first (reversible: its placeholder
stands for the raw run it replaces, so restoring gives the region back), then a replacement text (secrets),
then `*` per character. Formats that are not per character become so here: an e-mail address hides every
letter and digit of its local part, its first one too (kept alone, character by character, a one-letter
local part would stay whole: "a-@13812345678.cn" -> "*-@138****5678.cn"); a pattern with literals hides its
`*` slots in the value's own layout.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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


# The first administrative level of a Chinese address: a province, autonomous region, SAR or municipality,
# else the first city, district or county; of a US or Canadian one, its state or province code before the
# postcode.
_FIRST_LEVEL = re.compile(
    "^(?:[\u4e00-\u9fff]{1,7}?(?:省|自治区|特别行政区|市)|[\u4e00-\u9fff]{1,7}?(?:区|县))"
    "|, ([A-Z]{2}) (?=[0-9]{5}|[A-Z][0-9][A-Z])"
)


def _kept(value: str, style: str) -> set[int]:
    """The indices of `value` that the `name` and `address` styles leave in clear."""
    if style == "name":
        return {i for i, c in enumerate(value) if _significant(c) and (i == 0 or not _significant(value[i - 1]))}
    kept: set[int] = set()
    for m in _FIRST_LEVEL.finditer(value):
        start, end = m.span(1) if m.group(1) else m.span()
        kept.update(range(start, end))
    return kept


def _mask_kept(value: str, style: str) -> str:
    kept = _kept(value, style)
    return "".join(c if i in kept or not _significant(c) else MASK_CHAR for i, c in enumerate(value))


def mask_value(value: str, spec: MaskSpec) -> str:
    """The masked form of one value (see MaskSpec for the styles)."""
    if spec.style in ("name", "address"):
        return _mask_kept(value, spec.style)
    if spec.style == "keep":
        return _mask_keep(value, spec.first, spec.last)
    if spec.style == "pattern":
        return _mask_pattern(value, spec.pattern)
    if spec.style == "email":
        return _mask_email(value)
    return spec.text


# Placeholders named as people read them (issue 24): <PERSON_1>, <ADDRESS_1>.
_PLACEHOLDER_KIND = {"person_name": "PERSON", "postal_address": "ADDRESS"}


def placeholder_kind(decision: Decision) -> str:
    f = decision.finding
    if f.kind in _PLACEHOLDER_KIND:
        return _PLACEHOLDER_KIND[f.kind]
    return (f.category if f.kind in ("word", "pattern", "semantic") else f.kind).upper()


_REWRITES = (Action.MASK, Action.PSEUDONYMIZE)


@dataclass(frozen=True, slots=True)
class Rewrite:
    """One region of a text rewritten as a whole: a finding's span, or the union of overlapping ones."""

    start: int
    end: int
    decisions: tuple[Decision, ...]  # by start, then the longer span first


def _by_span(d: Decision) -> tuple[int, int]:
    return (d.finding.start, -d.finding.end)


def rewrites(decisions: Iterable[Decision]) -> list[Rewrite]:
    """The mask/pseudonymize decisions that will be applied, as disjoint regions in text order: decisions
    whose spans overlap share one region."""
    out: list[Rewrite] = []
    for d in sorted((d for d in decisions if d.action in _REWRITES), key=_by_span):
        f = d.finding
        if out and f.start < out[-1].end:
            last = out[-1]
            out[-1] = Rewrite(last.start, max(last.end, f.end), (*last.decisions, d))
        else:
            out.append(Rewrite(f.start, f.end, (d,)))
    return out


def _replace_one(value: str, decision: Decision, vault: PseudonymVault) -> str:
    if decision.action is Action.PSEUDONYMIZE:
        return vault.pseudonymize(placeholder_kind(decision), value)
    assert decision.mask is not None
    return mask_value(value, decision.mask)


def _hidden(value: str, decision: Decision) -> tuple[list[int], str | None]:
    """The indices of `value` that `decision` hides in an overlap region, and the text a run of them becomes
    when they are rewritten as a run ("" for a pseudonym) instead of one `*` each (None)."""
    spec = decision.mask
    if decision.action is Action.PSEUDONYMIZE or spec is None:
        return list(range(len(value))), ""
    if spec.style == "replace" or (spec.style == "pattern" and not any(c in "*#" for c in spec.pattern)):
        return list(range(len(value))), spec.text if spec.style == "replace" else spec.pattern
    positions = [i for i, c in enumerate(value) if _significant(c)]
    n = len(positions)
    if spec.style in ("name", "address"):
        kept = _kept(value, spec.style)
        return [i for i in positions if i not in kept], None
    if spec.style == "email":
        local = value.rfind("@")
        return ([i for i in positions if i < local] if local >= 0 else positions), None
    if spec.style == "pattern":
        slots = [c for c in spec.pattern if c in "*#"]
        offset = n - len(slots)
        # As _mask_pattern lines them up: from the right, extra value characters on the first slot.
        return [i for k, i in enumerate(positions) if slots[max(0, k - offset)] == "*"], None
    if spec.first + spec.last >= n:
        return positions, None
    return positions[spec.first : n - spec.last], None


def _owner_rank(d: Decision) -> tuple[int, float, bool, int, int, str]:
    f = d.finding
    how = 0 if d.action is Action.PSEUDONYMIZE else 1 if d.mask is not None and d.mask.style == "replace" else 2
    return (how, -f.score, f.valid is not True, f.start - f.end, f.start, f.rule)


def _replace_overlap(text: str, region: Rewrite, vault: PseudonymVault) -> str:
    start = region.start
    owners: list[Decision | None] = [None] * (region.end - start)
    runs: dict[int, str | None] = {}
    # Weakest first: a stronger finding hiding the same character takes it over.
    for d in sorted(region.decisions, key=_owner_rank, reverse=True):
        f = d.finding
        indices, runs[id(d)] = _hidden(text[f.start : f.end], d)
        base = f.start - start
        for i in indices:
            owners[base + i] = d
    out: list[str] = []
    i, n = 0, len(owners)
    while i < n:
        owner = owners[i]
        if owner is None:
            out.append(text[start + i])
            i += 1
            continue
        run = runs[id(owner)]
        if run is None:
            out.append(MASK_CHAR)
            i += 1
            continue
        j = i + 1
        while j < n and owners[j] is owner:
            j += 1
        out.append(vault.pseudonymize(placeholder_kind(owner), text[start + i : start + j]) if run == "" else run)
        i = j
    return "".join(out)


def replacement(text: str, region: Rewrite, vault: PseudonymVault) -> str:
    """What `region` of `text` becomes."""
    if len(region.decisions) == 1:
        return _replace_one(text[region.start : region.end], region.decisions[0], vault)
    return _replace_overlap(text, region, vault)


def rewrite(text: str, decisions: Sequence[Decision], vault: PseudonymVault | None) -> str:
    """`text` with the spans of the mask and pseudonymize `decisions` rewritten. Without a vault, pseudonyms
    come from a fresh one (stable within this text only)."""
    chosen = rewrites(decisions)
    if not chosen:
        return text
    if vault is None:
        vault = PseudonymVault()
    parts: list[str] = []
    pos = 0
    for region in chosen:
        parts.append(text[pos : region.start])
        parts.append(replacement(text, region, vault))
        pos = region.end
    parts.append(text[pos:])
    return "".join(parts)


def apply(text: str, result: ScanResult, vault: PseudonymVault | None) -> str:
    """`text` with masked and pseudonymized spans rewritten, covered findings' included; block, annotate and
    allow leave it as is. Without a vault, pseudonyms come from a fresh one (stable within this text only)."""
    return rewrite(text, (*result.decisions, *result.covered) if result.covered else result.decisions, vault)
