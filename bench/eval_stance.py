"""The injection stance (rules/stance.py, models/stance.py; its filter rules/discussed.py) read unseen:
cross-validated by blocks of development sets, through the product.

For each block, a stance is fitted on every other block and the exemplars (models/stance.py `fit`), and each of the
block's prompt-injection positives and look-alikes of at least the stance's `min_chars` is sent through the request
guard of the default configuration twice: with the filters as shipped but the stance's (before), and with the
block's own stance (after). A positive flagged before and not after is lost; a look-alike flagged before and not
after is cleared. Shorter texts are never changed by the filter and are not read.

Run: .venv/bin/python -m bench.eval_stance [--blocks 17-30,31-44,45-60,61-67,68-74] [--en T] [--zh T]
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Sequence

from models import stance
from proxy.guard.engine import Guard, inspect
from proxy.guard.extract import TextField
from proxy.guard.semantic import fusion_filters, load_detectors
from rules.discussed import Discussed
from rules.findings import Detector, FindingFilter
from rules.pseudonym import PseudonymVault
from rules.roles import Role
from rules.stance import Stance

ATTACKS = frozenset({"prompt_injection", "self_harm"})
DEFAULT_BLOCKS = "17-30,31-44,45-60,61-67,68-74"


def blocks(spec: str) -> list[tuple[int, int]]:
    """"17-30,31-44,70" as [(17, 30), (31, 44), (70, 70)] (bench/eval_distress.py reads its blocks so too)."""
    out = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out.append((int(lo), int(hi or lo)))
    return out


def set_number(name: str) -> int:
    return int(name.removeprefix("semantic_eval").removesuffix(".jsonl"))


def _judge(filters: Sequence[FindingFilter], detectors: Sequence[Detector]) -> Callable[[str], bool]:
    policy = Guard.load([], extra_detectors=detectors, filters=filters).policy
    vault = PseudonymVault()

    def flagged(text: str) -> bool:
        seen = inspect(policy.request, [TextField(("messages", 0, "content"), text, Role.USER)], vault, policy.roles)
        return seen.blocked or any(d.finding.category in ATTACKS for d in seen.decisions)

    return flagged


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--blocks", default=DEFAULT_BLOCKS, help="ranges of development set numbers, comma-separated")
    p.add_argument("--en", type=float, default=None, help="the stance's English threshold (default models.stance)")
    p.add_argument("--zh", type=float, default=None, help="the stance's Chinese threshold (default models.stance)")
    args = p.parse_args(argv)
    detectors = load_detectors()
    shipped = [f for f in fusion_filters(detectors) if not isinstance(f, Discussed)]
    before = _judge(shipped, detectors)
    exemplars = stance.exemplar_rows()
    print(f"{'block':<8} {'long pos':>8} {'flagged':>8} {'lost':>5} {'long neg':>8} {'flagged':>8} {'cleared':>8}")
    totals = [0] * 6
    for lo, hi in blocks(args.blocks):
        inside = [n for n in stance.STANCE_SETS if lo <= set_number(n) <= hi]
        outside = [n for n in stance.STANCE_SETS if not lo <= set_number(n) <= hi]
        fitted: Stance = stance.fit([*stance.development_rows(outside), *exemplars])
        thresholds = {**fitted.thresholds, **{k: v for k, v in (("en", args.en), ("zh", args.zh)) if v is not None}}
        fitted = dataclasses.replace(fitted, thresholds=thresholds)
        after = _judge([*shipped, Discussed(fitted)], detectors)
        counts = [0] * 6
        for row in stance.development_rows(inside):
            if len(row.text) < fitted.min_chars:
                continue
            was = before(row.text)
            now = after(row.text) if was else False
            base = 3 if row.about else 0
            counts[base] += 1
            counts[base + 1] += was
            counts[base + 2] += was and not now
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
        print(f"{lo}-{hi:<5} {counts[0]:>8} {counts[1]:>8} {counts[2]:>5} {counts[3]:>8} {counts[4]:>8} {counts[5]:>8}")
    print(f"{'all':<8} {totals[0]:>8} {totals[1]:>8} {totals[2]:>5} {totals[3]:>8} {totals[4]:>8} {totals[5]:>8}")


if __name__ == "__main__":
    main()
