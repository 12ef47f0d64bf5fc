"""The detection engine as the proxy uses it: one compiled policy per direction, scans of extracted fields.

Direction matters for PII: a prompt's PII is masked, or pseudonymized where configured (the model sees
`<CN_MOBILE_1>`, the answer gets the real value back); an answer's PII is masked, since a placeholder means
nothing to the client. Both scanners come from the same rule files, compiled once, swapped atomically on
reload. No mitmproxy here: this module is the pure core of the inspect stages.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from proxy.guard.extract import TextField
from proxy.guard.ledger import strongest
from rules import addressed, cover, deputised, distress, extraction, forged, masking, persona, smuggled, waiver
from rules.decode import DecodingDetector
from rules.decode_only import DecodeOnly
from rules.findings import Action, Detector, Finding, FindingFilter
from rules.loader import LoadedRules, load
from rules.policy import Decision, default_mask
from rules.pseudonym import PseudonymVault
from rules.roles import Role, RolePolicy, strip_notice
from rules.scanner import Scanner, ScanResult

log = logging.getLogger("warden.guard")

REQUEST_PII_ACTIONS = ("mask", "pseudonymize", "block")


def _with_pii_action(rules: LoadedRules, before: Action, after: Action) -> LoadedRules:
    """The same rules with PII rules whose action is `before` switched to `after`."""
    entries = tuple(
        dataclasses.replace(e, fields={**e.fields, "action": after})
        if e.type == "pii" and Action(e.fields.get("action", Action.MASK)) is before else e
        for e in rules.entries
    )
    return dataclasses.replace(rules, entries=entries)


def _replies_annotate(rules: LoadedRules) -> LoadedRules:
    """The answer side of rules that carry a `reply` (self_harm): annotate, not block. Such a rule speaks to a
    person who may need help; a model's answer that quotes its words is almost always the model refusing or
    pointing to help ("I can't share suicide methods; please call 988"), and blocking it would replace that
    answer with an error. The request side keeps the rule's block and its reply."""
    entries = tuple(
        dataclasses.replace(e, fields={**e.fields, "action": Action.ANNOTATE}) if "reply" in e.fields else e
        for e in rules.entries
    )
    return dataclasses.replace(rules, entries=entries)


@dataclass(frozen=True, slots=True)
class Policy:
    request: Scanner
    response: Scanner  # streamed answers: lexical only
    whole_response: Scanner  # whole answers: with the plug-in detectors, like requests
    offload: bool = False  # scans with plug-ins take milliseconds (a model): always off the event loop
    roles: RolePolicy | None = None  # what the request's findings do per role of their field (rules/roles.py)

    @property
    def version(self) -> str:
        return self.request.version


def compile_policy(
    paths: Sequence[str | Path], *, request_pii: str = "mask", extra_detectors: Sequence[Detector] = (),
    filters: Sequence[FindingFilter] = (),
) -> Policy:
    """Load and compile the builtin packs plus `paths` for both directions (raises RuleFileError)."""
    if request_pii not in REQUEST_PII_ACTIONS:
        raise ValueError(f"request_pii must be one of {REQUEST_PII_ACTIONS}, got {request_pii!r}")
    rules = load(paths, builtin=True)
    if not any(e.fields.get("enabled", True) for e in rules.entries):
        # Fail closed: an empty policy passes everything (DESIGN section 10.6).
        raise ValueError("no enabled rules: an empty policy would pass everything")
    request_rules = rules if request_pii == "mask" else _with_pii_action(rules, Action.MASK, Action(request_pii))
    response_rules = _replies_annotate(_with_pii_action(rules, Action.PSEUDONYMIZE, Action.MASK))
    # Plug-in detectors (the semantic model) judge prompts and whole answers, in a worker thread. Streamed
    # answers are scanned inside the stream callable, where a model taking milliseconds must never run:
    # they get the lexical rules only (a keyword in a benign context is then blocked, not cleared).
    stream = Scanner(response_rules)
    request = Scanner(request_rules, extra_detectors=(*extra_detectors, *_decoding(rules, extra_detectors),
                                                      *_injection_signatures(rules), *_self_harm_signatures(rules)),
                      filters=(*filters, *_decode_only(rules)))
    return Policy(
        request,
        stream,
        Scanner(response_rules, extra_detectors=extra_detectors, filters=filters) if extra_detectors else stream,
        offload=bool(extra_detectors),
        roles=RolePolicy(request_rules, {r: p for r in request.rule_ids if (p := request.policy(r)) is not None}),
    )


def _decode_only(rules: LoadedRules) -> list[FindingFilter]:
    """The filter that sets aside the soft injection judgements of a bare request to decode a run
    (rules/decode_only.py), requests only and only with decoding on: it lets them go because the decoded text was
    scanned, which `_decoding` does, with the same bounds."""
    return [DecodeOnly(rules.decode)] if rules.decode.enabled else []


def _decoding(rules: LoadedRules, semantic: Sequence[Detector]) -> list[Detector]:
    """The attack side's decoding (rules/decode.py), requests only: base64/hex runs decoded within bounds and
    scanned by the word lists and patterns (a scanner of their own, without PII: a decoded run is judged for
    what it says), by the plug-in detectors (the semantic model) and by the injection signatures."""
    if not rules.decode.enabled:
        return []
    lexical = [e for e in rules.entries if e.type != "pii" and e.fields.get("enabled", True)]
    scans: list[Callable[[str], Sequence[Finding]]] = []
    if lexical:
        inner = Scanner(dataclasses.replace(rules, entries=tuple(lexical)))
        scans.append(lambda text: inner.scan(text).findings)
    # what the decoded text says to an automated reader, or asks to be decoded and obeyed, too
    signatures = _injection_signatures(rules)
    scans += [d.detect for d in (*semantic, *signatures)]
    # and an automated reader named before the run, told what the run says (only the addressed signature links a
    # mark outside the run to an order inside it)
    in_place = [addressed.detector().detect] if signatures else []
    return [DecodingDetector(rules.decode, scans, in_place)] if scans else []


def _injection_signatures(rules: LoadedRules) -> list[Detector]:
    """Instructions addressed to an automated reader that tell it to do harm (rules/addressed.py), requests to
    decode something and obey it (rules/smuggled.py), requests for the hidden setup named by when it was given
    (rules/extraction.py), headers forging the operator's authority (rules/forged.py), personas set up never to
    refuse (rules/persona.py), stories asked to teach a working harm (rules/cover.py), requests to carry out what a
    pasted text instructs (rules/deputised.py) and claims that the model's usual rules do not apply (rules/waiver.py),
    requests only, while a rule of their category is enabled: an injection's signatures, model or no model."""
    enabled = any(e.fields.get("category", e.rule) == addressed.CATEGORY for e in rules.entries
                  if e.type == "words" and e.fields.get("enabled", True))
    return ([addressed.detector(), smuggled.detector(), extraction.detector(), forged.detector(), persona.detector(),
             cover.detector(), deputised.detector(), waiver.detector()] if enabled else [])


def _self_harm_signatures(rules: LoadedRules) -> list[Detector]:
    """Short Chinese statements of self-harm intent or means without a stock word (rules/distress.py), requests only,
    while a rule of the `self_harm` category is enabled: its policy (the safe reply) applies to them."""
    enabled = any(e.fields.get("category", e.rule) == distress.CATEGORY for e in rules.entries
                  if e.type == "words" and e.fields.get("enabled", True))
    return [distress.detector()] if enabled else []


@dataclass(frozen=True, slots=True)
class FieldScan:
    """One field's scan; on requests `result` holds the decisions after the field's role policy, and
    `stripped` the rules that have its whole text replaced (rules/roles.py)."""

    field: TextField
    result: ScanResult
    stripped: tuple[str, ...] = ()
    roles: tuple[tuple[str, str, str], ...] = ()  # (rule, role, what happened): the record's `roles`


@dataclass(frozen=True, slots=True)
class Inspection:
    """What the guard found in one direction of one exchange: never the matched text."""

    action: Action
    scans: tuple[FieldScan, ...]
    rewritten: tuple[tuple[TextField, str], ...]  # fields whose text changed, with the new text

    @property
    def blocked(self) -> bool:
        return self.action is Action.BLOCK

    @property
    def decisions(self) -> Iterator[Decision]:
        return (d for scan in self.scans for d in scan.result.decisions)

    @property
    def kind_counts(self) -> Counter[str]:
        return Counter(d.finding.kind for scan in self.scans for d in scan.result.decisions)

    @property
    def blocking_rules(self) -> tuple[str, ...]:
        return tuple(sorted({d.finding.rule for s in self.scans for d in s.result.decisions
                             if d.action is Action.BLOCK}))

    @property
    def alert(self) -> bool:
        return any(s.result.alert for s in self.scans)

    @property
    def role_record(self) -> Iterator[tuple[str, str, str]]:
        """(rule, role, what happened) per request finding, its role's policy applied: never the text."""
        return (r for scan in self.scans for r in scan.roles)


def _with_role(result: ScanResult, roles: RolePolicy, role: Role) -> tuple[ScanResult, tuple[str, ...],
                                                                          tuple[tuple[str, str, str], ...]]:
    outcome = roles.apply(result.decisions, result.covered, role)
    if outcome.decisions is not result.decisions and outcome.decisions != result.decisions:
        kept = tuple(d.finding for d in outcome.decisions)
        result = ScanResult(kept, outcome.decisions, outcome.action, tuple(sorted({f.rule for f in kept})),
                            result.covered)
    return result, outcome.stripped, outcome.record


def inspect(scanner: Scanner, fields: Sequence[TextField], vault: PseudonymVault,
            roles: RolePolicy | None = None) -> Inspection:
    """Scan every field; with `roles` (requests), apply each field's role policy; compute the rewritten text
    of fields to mask, pseudonymize or strip (none when blocked)."""
    scans: list[FieldScan] = []
    action = Action.ALLOW
    for f in fields:
        result = scanner.scan(f.text)
        if result.findings:
            if roles is None:
                scans.append(FieldScan(f, result))
            else:
                result, stripped, record = _with_role(result, roles, f.role)
                scans.append(FieldScan(f, result, stripped, record))
            action = strongest(action, result.action)
    rewritten: list[tuple[TextField, str]] = []
    if action is not Action.BLOCK:
        for scan in scans:
            if scan.stripped:
                # The whole field goes: an injection's instruction is the text around its phrase too. Tool-call
                # arguments stay a JSON object, as servers parse them to render the chat template.
                notice = strip_notice(scan.field.role, scan.stripped)
                if scan.field.path and scan.field.path[-1] == "arguments":
                    notice = json.dumps({"warden": notice})
                rewritten.append((scan.field, notice))
                continue
            new = masking.apply(scan.field.text, scan.result, vault)
            if new != scan.field.text:
                rewritten.append((scan.field, new))
    return Inspection(action, tuple(scans), tuple(rewritten))


NAMES_KEPT = 1024  # distinct model names whose recordable form is remembered


class Guard:
    """The live policy, swappable at run time without a moment of no policy: the product's one hot-reload
    mechanism (SIGHUP, proxy/server.py). Rule files are not watched; a changed file takes effect on the signal."""

    def __init__(self, policy: Policy, paths: Sequence[str | Path] = (), *, request_pii: str = "mask",
                 extra_detectors: Sequence[Detector] = (), filters: Sequence[FindingFilter] = ()) -> None:
        self.policy = policy
        self.paths = tuple(str(p) for p in paths)
        self.request_pii = request_pii
        self._extra = tuple(extra_detectors)
        self._filters = tuple(filters)
        self._lock = threading.Lock()
        self._names: dict[str, str] = {}  # recordable_name's answers, for `_names_policy`
        self._names_policy = policy

    @classmethod
    def load(cls, paths: Sequence[str | Path] = (), *, request_pii: str = "mask",
             extra_detectors: Sequence[Detector] = (), filters: Sequence[FindingFilter] = ()) -> Guard:
        policy = compile_policy(paths, request_pii=request_pii, extra_detectors=extra_detectors, filters=filters)
        return cls(policy, paths, request_pii=request_pii, extra_detectors=extra_detectors, filters=filters)

    def recordable_name(self, name: str, *, remember: bool = True) -> str:
        """A name the client chose (the request's `model`, its request id) as logs, metrics labels, spans and
        audit records may carry it: PII and secrets in it masked with their kind's mask, the rest as it is.
        Model names repeat, so the answers are remembered (at most NAMES_KEPT, for the live policy); request
        ids do not (`remember=False`)."""
        policy = self.policy
        if policy is not self._names_policy:
            self._names, self._names_policy = {}, policy
        known = self._names.get(name)
        if known is not None:
            return known
        result = policy.response.scan(name)
        # Every PII finding masked whatever its rule does with it in text (annotate, block): a record carries
        # no PII. Covered ones too, and overlapping ones as one region (rules/masking.py).
        masks = [
            Decision(d.finding, Action.MASK, None, d.mask or default_mask(d.finding.kind))
            for d in (*result.decisions, *result.covered) if d.finding.category in ("pii", "secret")
        ]
        recorded = masking.rewrite(name, masks, None)
        if not remember:
            return recorded
        if len(self._names) >= NAMES_KEPT:
            self._names.clear()
        self._names[name] = recorded
        return recorded

    def reload(self) -> str | None:
        """Recompile from the same files; on any error keep the old policy and return the reason.
        Blocking (big word lists take a while): call it from a worker thread."""
        with self._lock:
            try:
                policy = compile_policy(self.paths, request_pii=self.request_pii,
                                        extra_detectors=self._extra, filters=self._filters)
            except Exception as exc:  # a bad rule file must never take the live policy down
                log.error("rule reload refused; the previous rules stay live", extra={"reason": str(exc)})
                return str(exc)
            warm(policy)
            self.policy = policy  # one reference swap: every scan sees the old or the new policy
            log.info("rules reloaded", extra={"policy_version": policy.version})
            return None


# RE2 builds its automata lazily: the first texts after a compile are several times slower. A new policy
# scans a few representative texts before it goes live so the first real requests do not pay for that.
_WARM_TEXTS = (
    "我的手机号是13812345678，身份证110105199003071234，邮箱 someone@example.com。",
    "Please call +86 138 1234 5678 or mail a.b@example.org; card 6222 0212 3456 7890 123.",
    "How do I reset my password? 请帮我总结这篇文章的要点，谢谢。",
)


def warm(policy: Policy) -> None:
    for text in _WARM_TEXTS:
        policy.request.scan(text)
        policy.response.scan(text)
        if policy.whole_response is not policy.response:
            policy.whole_response.scan(text)


__all__ = ["Guard", "Inspection", "Policy", "compile_policy", "inspect", "warm"]
