"""Precision and recall of the PII detectors per kind over the labeled corpus (bench/pii_corpus.py).

    .venv/bin/python -m bench.eval_pii                  # rules.scanner in-process, then Presidio
    .venv/bin/python -m bench.eval_pii --engine cli     # through `warden scan --jsonl`
    .venv/bin/python -m bench.eval_pii --engine oracle  # the labels themselves: checks the evaluator
    options: --corpus FILE (default bench/data/pii_corpus.jsonl), --no-presidio, --examples N,
             --benign (ordinary chat of the semantic sets: how many texts a mask would change)

A finding is a true positive under *exact* matching when kind, start and end equal a label's (raw-text
offsets); under *overlap* matching when it shares at least one character with a label of the same kind.
Findings on decoys (non-PII lookalikes) are counted per decoy reason; those on checksum-failing numbers must
be 0. Target: exact precision and recall >= 0.99 for every checksummed kind. Texts without any PII label
that get a finding are counted: that is how often a mask changes an ordinary prompt. It is a report: exit 0
always.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench import pii_corpus
from bench.pii_corpus import CHECKSUMMED_KINDS, KINDS, Item

TARGET = 0.99
# Finding kinds of rules/ that we score as one of the corpus kinds.
KIND_ALIASES = {"credit_card": "bank_card", "jwt": "secret", "api_key": "secret", "aws_access_key": "secret",
                "github_token": "secret", "private_key": "secret"}


@dataclass(frozen=True, slots=True)
class Span:
    kind: str
    start: int
    end: int

    def overlaps(self, other: Span) -> bool:
        return self.start < other.end and other.start < self.end


Predictor = Callable[[Item], Sequence[Span]]


@dataclass(slots=True)
class KindStats:
    support: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tp_overlap: int = 0  # labels overlapped by a finding of the same kind
    fp_overlap: int = 0  # findings overlapping no label of their kind
    fn_overlap: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / self.support if self.support else 1.0

    @property
    def precision_overlap(self) -> float:
        found = self.tp + self.fp
        return (found - self.fp_overlap) / found if found else 1.0

    @property
    def recall_overlap(self) -> float:
        return self.tp_overlap / self.support if self.support else 1.0


@dataclass(slots=True)
class Report:
    kinds: dict[str, KindStats] = field(default_factory=lambda: defaultdict(KindStats))
    decoys: Counter[str] = field(default_factory=Counter)
    decoy_hits: Counter[str] = field(default_factory=Counter)
    decoy_hit_kinds: Counter[tuple[str, str]] = field(default_factory=Counter)
    checksum_hits: int = 0
    confusions: Counter[tuple[str, str]] = field(default_factory=Counter)  # (found kind, labeled kind)
    variant_support: Counter[tuple[str, str]] = field(default_factory=Counter)
    variant_misses: Counter[tuple[str, str]] = field(default_factory=Counter)  # exact misses
    fn_examples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    fp_examples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    decoy_examples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    items: int = 0
    chars: int = 0
    # Texts without any PII label (clean texts and decoys) on which something was found: what a mask would
    # change in ordinary prompts. Clean texts alone too.
    unlabelled: int = 0
    unlabelled_changed: int = 0
    clean: int = 0
    clean_changed: int = 0
    seconds: float = 0.0


def _show(text: str, span: Span | pii_corpus.Label | pii_corpus.Decoy) -> str:
    """The text with the span bracketed, for the examples lists (the corpus is synthetic data)."""
    lo = max(0, span.start - 12)
    shown = f"{text[lo:span.start]}[[{text[span.start:span.end]}]]{text[span.end:span.end + 12]}"
    return shown.replace("\n", " ")


def evaluate(items: Iterable[Item], predict: Predictor, label_kind: Callable[[str], str | None] = lambda k: k,
             examples: int = 5) -> Report:
    """Score `predict` on `items`. `label_kind` maps a corpus kind to the scored kind (None: not scored,
    e.g. kinds Presidio has no entity for); predictions must already use scored kinds."""
    rep = Report()
    t0 = time.process_time()
    for it in items:
        rep.items += 1
        rep.chars += len(it.text)
        found = list(predict(it))
        if not it.labels:
            rep.unlabelled += 1
            rep.unlabelled_changed += bool(found)
            if it.id.startswith("clean"):
                rep.clean += 1
                rep.clean_changed += bool(found)
        labels: list[tuple[Span, str]] = []
        other_labels: list[Span] = []
        for lab in it.labels:
            k = label_kind(lab.kind)
            if k is None:
                other_labels.append(Span(lab.kind, lab.start, lab.end))
            else:
                labels.append((Span(k, lab.start, lab.end), lab.variant))
        exact_left = Counter(s for s, _ in labels)
        matched: Counter[Span] = Counter()
        for f in found:
            st = rep.kinds[f.kind]
            if exact_left[f] > 0:
                exact_left[f] -= 1
                matched[f] += 1
                st.tp += 1
                continue
            st.fp += 1
            if not any(f.kind == s.kind and f.overlaps(s) for s, _ in labels):
                st.fp_overlap += 1
            crossed = [s.kind for s, _ in labels if s.kind != f.kind and f.overlaps(s)]
            crossed += [s.kind for s in other_labels if f.overlaps(s)]
            for k in crossed:
                rep.confusions[(f.kind, k)] += 1
            if len(rep.fp_examples[f.kind]) < examples and not any(
                    d.start < f.end and f.start < d.end for d in it.decoys):
                rep.fp_examples[f.kind].append(f"{it.id}: {_show(it.text, f)}")
        for s, variant in labels:
            st = rep.kinds[s.kind]
            st.support += 1
            rep.variant_support[(s.kind, variant)] += 1
            if matched[s] > 0:
                matched[s] -= 1
            else:
                st.fn += 1
                rep.variant_misses[(s.kind, variant)] += 1
                near = [f for f in found if f.overlaps(s)]
                if len(rep.fn_examples[s.kind]) < examples:
                    got = ", ".join(f"{f.kind}:{it.text[f.start:f.end]!r}" for f in near) or "nothing"
                    rep.fn_examples[s.kind].append(
                        f"{it.id} [{variant}]: {_show(it.text, s)}  -> found {got}")
            if any(f.kind == s.kind and f.overlaps(s) for f in found):
                st.tp_overlap += 1
            else:
                st.fn_overlap += 1
        for d in it.decoys:
            rep.decoys[d.reason] += 1
            hits = [f for f in found if d.start < f.end and f.start < d.end]
            if hits:
                rep.decoy_hits[d.reason] += 1
                rep.checksum_hits += d.checksum
                for f in hits:
                    rep.decoy_hit_kinds[(d.reason, f.kind)] += 1
                if len(rep.decoy_examples[d.reason]) < examples:
                    got = ", ".join(f"{f.kind}:{it.text[f.start:f.end]!r}" for f in hits)
                    rep.decoy_examples[d.reason].append(f"{it.id}: {_show(it.text, d)}  -> {got}")
    rep.seconds = time.process_time() - t0
    return rep


def format_report(rep: Report, title: str, kinds: Sequence[str], targets: frozenset[str],
                  examples: bool = True) -> str:
    out = [f"== {title}: {rep.items} texts, {rep.chars / 1e6:.2f} M chars, {rep.seconds:.2f} s CPU =="]
    head = (f"{'kind':<17}{'support':>8}{'TP':>6}{'FP':>6}{'FN':>6}{'prec':>8}{'recall':>8}  |"
            f"{'ovTP':>6}{'ovFP':>6}{'ovFN':>6}{'ovPrec':>8}{'ovRec':>8}  target")
    out += [head, "-" * len(head)]
    missing: list[str] = []
    extra = sorted(k for k in rep.kinds if k not in kinds)
    for k in [*kinds, *extra]:
        s = rep.kinds.get(k, KindStats())
        if k in targets:
            ok = s.precision >= TARGET and s.recall >= TARGET
            mark = "ok" if ok else "MISS"
            if not ok:
                missing.append(k)
        else:
            mark = "-"
        out.append(f"{k:<17}{s.support:>8}{s.tp:>6}{s.fp:>6}{s.fn:>6}{s.precision:>8.3f}{s.recall:>8.3f}  |"
                   f"{s.tp_overlap:>6}{s.fp_overlap:>6}{s.fn_overlap:>6}{s.precision_overlap:>8.3f}"
                   f"{s.recall_overlap:>8.3f}  {mark}")
    tot = KindStats()
    for s in rep.kinds.values():
        tot.support += s.support
        tot.tp += s.tp
        tot.fp += s.fp
        tot.fn += s.fn
        tot.tp_overlap += s.tp_overlap
        tot.fp_overlap += s.fp_overlap
        tot.fn_overlap += s.fn_overlap
    out.append(f"{'ALL':<17}{tot.support:>8}{tot.tp:>6}{tot.fp:>6}{tot.fn:>6}{tot.precision:>8.3f}"
               f"{tot.recall:>8.3f}  |{tot.tp_overlap:>6}{tot.fp_overlap:>6}{tot.fn_overlap:>6}"
               f"{tot.precision_overlap:>8.3f}{tot.recall_overlap:>8.3f}")
    out.append("")
    out.append(f"findings on checksum-failing numbers: {rep.checksum_hits} (must be 0)")
    out.append("decoys hit (texts with a finding on the decoy / decoys):  " + ",  ".join(
        f"{r} {rep.decoy_hits[r]}/{n}" for r, n in sorted(rep.decoys.items())))
    if rep.decoy_hit_kinds:
        out.append("  by found kind: " + ", ".join(f"{r}->{k} {n}" for (r, k), n in
                                                    sorted(rep.decoy_hit_kinds.items())))
    if rep.confusions:
        out.append("kind confusions (found kind on a label of another kind): " + ", ".join(
            f"{a} on {b}: {n}" for (a, b), n in rep.confusions.most_common()))
    misses = [(k, v, n) for (k, v), n in sorted(rep.variant_misses.items()) if n]
    if misses:
        out.append("exact misses by variant: " + ", ".join(
            f"{k}/{v} {n}/{rep.variant_support[(k, v)]}" for k, v, n in misses))
    if targets:
        out.append(f"kinds below target (exact P and R >= {TARGET}): {', '.join(missing) or 'none'}")
    if rep.unlabelled:
        out.append(f"texts without PII changed: {rep.unlabelled_changed}/{rep.unlabelled} "
                   f"({rep.unlabelled_changed / rep.unlabelled:.1%}; clean texts {rep.clean_changed}/{rep.clean}, "
                   "decoys the rest)")
    if examples:
        for name, ex in (("missed", rep.fn_examples), ("false positive", rep.fp_examples),
                         ("decoy hit", rep.decoy_examples)):
            for k in sorted(ex):
                for line in ex[k]:
                    out.append(f"  {name} {k}: {line}")
    return "\n".join(out)


# --- predictors --------------------------------------------------------------------------------------------


def _scored_kind(kind: str, category: str) -> str | None:
    if kind in KINDS:
        return kind
    if kind in KIND_ALIASES:
        return KIND_ALIASES[kind]
    if category == "secret":
        return "secret"
    return None


def oracle(item: Item) -> list[Span]:
    return [Span(x.kind, x.start, x.end) for x in item.labels]


def warden_library(rule_files: Sequence[Path] = ()) -> Predictor:
    from rules.scanner import Scanner

    scanner = Scanner.load(tuple(rule_files))

    def predict(item: Item) -> list[Span]:
        out = []
        for f in scanner.scan(item.text).findings:
            k = _scored_kind(f.kind, f.category)
            if k is not None:
                out.append(Span(k, f.start, f.end))
        return out

    return predict


def warden_cli(items: Sequence[Item], rule_files: Sequence[Path] = ()) -> Predictor:
    """Run `warden scan --jsonl` once over all items and answer from its output."""
    exe = shutil.which("warden", path=str(Path(sys.executable).parent)) or "warden"
    stdin = "".join(json.dumps({"id": it.id, "text": it.text}, ensure_ascii=False) + "\n" for it in items)
    rules_args = [a for f in rule_files for a in ("--rules", str(f))]
    proc = subprocess.run([exe, "scan", *rules_args, "--jsonl"], input=stdin, capture_output=True, text=True,
                          check=False)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"warden scan exited {proc.returncode}: {proc.stderr[-2000:]}")
    by_id: dict[str, list[Span]] = {}
    for line in proc.stdout.splitlines():
        if not line.strip():
            continue
        obj = json.loads(line)
        spans = []
        for f in obj.get("findings", []):
            k = _scored_kind(str(f["kind"]), str(f.get("category", "")))
            if k is not None:
                spans.append(Span(k, int(f["start"]), int(f["end"])))
        by_id[str(obj["id"])] = spans
    missing = [it.id for it in items if it.id not in by_id]
    if missing:
        raise RuntimeError(f"warden scan returned no line for {len(missing)} ids, e.g. {missing[:3]}")
    return lambda item: by_id[item.id]


PRESIDIO_LABEL_KIND = {"bank_card": "bank_card", "email": "email", "ipv4": "ipv4", "ipv6": "ipv6",
                       "us_ssn": "us_ssn", "iban": "iban", "cn_mobile": "phone", "cn_landline": "phone"}


def presidio() -> Predictor:
    from bench.presidio_engine import Presidio, pii_recognizers

    engine = Presidio(pii_recognizers())

    def predict(item: Item) -> list[Span]:
        out = []
        for h in engine.analyze(item.text):
            k = Presidio.kind_of(h, item.text)
            if k is not None:
                out.append(Span(k, h.start, h.end))
        return out

    return predict


def benign_changes(rule_files: Sequence[Path] = ()) -> str:
    """Ordinary prompts a mask would change: the semantic sets' benign and hard-negative texts (no PII is
    labeled there; any finding counts, for its kind)."""
    from rules.scanner import Scanner

    scanner = Scanner.load(tuple(rule_files))
    root = Path(__file__).resolve().parent.parent / "models" / "data" / "eval"
    texts = {json.loads(line)["text"] for f in sorted(root.glob("*.jsonl")) for line in f.open(encoding="utf-8")
             if line.strip() and json.loads(line).get("type") in ("benign", "hard_negative")}
    changed: Counter[str] = Counter()
    examples: dict[str, str] = {}
    n = 0
    for text in sorted(texts):
        kinds = {f.kind for f in scanner.scan(text).findings if f.category in ("pii", "secret")}
        n += bool(kinds)
        for k in kinds:
            changed[k] += 1
            examples.setdefault(k, text[:80])
    lines = [f"benign and hard-negative chat (semantic sets, {len(texts)} distinct texts): {n} changed "
             f"({n / max(1, len(texts)):.2%})"]
    lines += [f"  {k}: {c}, e.g. {examples[k]!r}" for k, c in changed.most_common()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="PII detection precision/recall per kind")
    ap.add_argument("--corpus", type=Path, default=pii_corpus.DEFAULT_PATH)
    ap.add_argument("--engine", choices=("library", "cli", "oracle"), default="library")
    ap.add_argument("--rules", type=Path, action="append", default=[], help="extra rule file (repeatable)")
    ap.add_argument("--no-presidio", action="store_true")
    ap.add_argument("--examples", type=int, default=5, help="examples of misses/FPs printed per kind")
    ap.add_argument("--benign", action="store_true",
                    help="also: how many benign and hard-negative chat texts of the semantic evaluation sets "
                         "(models/data/eval) the library engine changes, per PII kind")
    args = ap.parse_args(argv)
    items = pii_corpus.load(args.corpus) if args.corpus.exists() else pii_corpus.generate()
    n_labels = Counter(x.kind for it in items for x in it.labels)
    print(f"corpus: {len(items)} texts, {sum(n_labels.values())} labels, "
          f"{sum(len(it.decoys) for it in items)} decoys ({args.corpus})")

    predict: Predictor | None
    title = f"warden ({args.engine})"
    try:
        if args.engine == "oracle":
            predict = oracle
        elif args.engine == "cli":
            predict = warden_cli(items, args.rules)
        else:
            predict = warden_library(args.rules)
    except Exception as exc:  # a report: say why the engine is missing and go on with Presidio
        print(f"warden engine unavailable: {type(exc).__name__}: {exc}")
        predict = None
    if predict is not None:
        rep = evaluate(items, predict, examples=args.examples)
        print(format_report(rep, title, KINDS, CHECKSUMMED_KINDS, examples=args.examples > 0))
    if args.benign and args.engine == "library":
        print(benign_changes(args.rules))
    if not args.no_presidio:
        print()
        rep = evaluate(items, presidio(), label_kind=PRESIDIO_LABEL_KIND.get, examples=args.examples)
        kinds = ("bank_card", "email", "ipv4", "ipv6", "us_ssn", "iban", "phone")
        print(format_report(rep, "Presidio 2.2 pattern recognizers (CREDIT_CARD, EMAIL_ADDRESS, IP_ADDRESS, "
                                 "US_SSN, IBAN_CODE, PHONE_NUMBER[CN+defaults]; no NLP; context only)",
                            kinds, frozenset(), examples=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
