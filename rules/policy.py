"""Policy: what each rule does with its findings (level or explicit action) and how values are masked.

Levels follow the seed format: 1 = warn (annotate), 2 = block, 3 = block and alert. An explicit `action`
(`allow|annotate|mask|pseudonymize|block`) wins over a level. PII rules default to `mask`. A word or pattern
rule's `reply` ({zh, en} texts) makes a blocked chat request answer as the assistant with that text instead of an
error (proxy/stages/inspect_request.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from rules.findings import Action, Finding

LEVEL_ACTIONS: dict[int, Action] = {1: Action.ANNOTATE, 2: Action.BLOCK, 3: Action.BLOCK}
ALERT_LEVEL = 3

MaskStyle = Literal["keep", "pattern", "replace", "email", "name", "address"]


@dataclass(frozen=True, slots=True)
class MaskSpec:
    """How a masked value is rewritten.

    * `keep`: keep the first `first` and last `last` letters/digits, `*` for the others, separators stay.
    * `pattern`: the seed syntax, e.g. `****-****-****-####`: `*` masks a character, `#` keeps one, anything
      else is written literally. Slots line up with the value's letters and digits from the right (so
      `####` is always the last four); value characters left over on the left follow the first slot. When
      the pattern has literal characters its layout is used, otherwise the value's separators stay.
    * `replace`: the value becomes `text` (e.g. `[REDACTED]`).
    * `email`: first character of the local part, then `***`, then `@domain`.
    * `name`: the first character of each word (a Chinese name is one word): `张*`, `J*** S****`.
    * `address`: the first administrative level stays (`北京市******`, `浙江省******`; an English address
      keeps its state or province code), every other letter and digit is `*`.
    """

    style: MaskStyle
    first: int = 0
    last: int = 0
    pattern: str = ""
    text: str = ""


# Per-kind defaults: 110105********1234, 138****5678, ************1234, j***@example.com.
DEFAULT_MASKS: dict[str, MaskSpec] = {
    "cn_resident_id": MaskSpec("keep", first=6, last=4),
    "bank_card": MaskSpec("keep", first=0, last=4),
    "cn_mobile": MaskSpec("pattern", pattern="###****####"),
    "cn_landline": MaskSpec("keep", first=0, last=4),
    "cn_uscc": MaskSpec("keep", first=2, last=2),
    "cn_passport": MaskSpec("keep", first=1, last=2),
    "passport": MaskSpec("keep", first=1, last=2),
    "person_name": MaskSpec("name"),
    "postal_address": MaskSpec("address"),
    "hk_macau_permit": MaskSpec("keep", first=1, last=2),
    "cn_license_plate": MaskSpec("keep", first=2, last=1),
    "email": MaskSpec("email"),
    "ipv4": MaskSpec("keep", first=0, last=0),
    "ipv6": MaskSpec("keep", first=0, last=0),
    "us_ssn": MaskSpec("keep", first=0, last=4),
    "iban": MaskSpec("keep", first=4, last=4),
    "secret": MaskSpec("replace", text="[REDACTED]"),
}
FALLBACK_MASK = MaskSpec("keep", first=0, last=0)


@dataclass(frozen=True, slots=True)
class RulePolicy:
    """The compiled policy of one rule."""

    rule: str
    action: Action
    level: int | None = None
    mask: MaskSpec | None = None  # None: the kind's default
    min_score: float = 0.5
    alert: bool = False
    reply: Mapping[str, str] | None = None  # {zh, en}: a block answers with this text (rules/loader.py)


@dataclass(frozen=True, slots=True)
class Decision:
    """The policy's verdict on one finding."""

    finding: Finding
    action: Action
    level: int | None
    mask: MaskSpec | None  # set for mask decisions (the effective spec, defaults resolved)
    alert: bool = False


def policy_for(rule: str, *, level: int | None, action: Action | None, mask: MaskSpec | None = None,
               min_score: float = 0.5, default: Action = Action.BLOCK,
               reply: Mapping[str, str] | None = None) -> RulePolicy:
    if action is None:
        action = LEVEL_ACTIONS[level] if level is not None else default
    return RulePolicy(rule, action, level, mask, min_score, alert=level is not None and level >= ALERT_LEVEL,
                      reply=reply)


_new = object.__new__
_D_FINDING, _D_ACTION, _D_LEVEL, _D_MASK, _D_ALERT = (
    Decision.__dict__[n].__set__ for n in ("finding", "action", "level", "mask", "alert")
)


def default_mask(kind: str) -> MaskSpec:
    """How a value of `kind` is masked when its rule says nothing else."""
    return DEFAULT_MASKS.get(kind, FALLBACK_MASK)


def decide(finding: Finding, policy: RulePolicy | None) -> Decision:
    """Unknown rules (a plug-in detector's own rule ids) are annotated: fail visible, not silent."""
    if policy is None:
        return Decision(finding, Action.ANNOTATE, None, None)
    mask = None
    if policy.action is Action.MASK:
        mask = policy.mask or default_mask(finding.kind)
    # Slots filled directly (rules.findings.new_finding says why): one Decision per finding per scan.
    d = _new(Decision)
    _D_FINDING(d, finding)
    _D_ACTION(d, policy.action)
    _D_LEVEL(d, policy.level)
    _D_MASK(d, mask)
    _D_ALERT(d, policy.alert)
    return d
