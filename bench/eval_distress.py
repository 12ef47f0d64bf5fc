"""The distress model (rules/distress.py, models/distress.py) read unseen: cross-validated by blocks of development
sets, through the product.

For each block, a model is fitted on every other development set and the exemplars (models/distress.py `fit`), and
each of the block's texts of at most its `max_chars` characters is judged twice: by the request guard of the default
configuration without the distress finding (before: its other decisions), and with the block's own model as well
(after: before, or the model states intent at the threshold). No filter touches a `distress` finding, so that is the
product's verdict with the block's model. Counted per group: self-harm positives, self-harm look-alikes, injection
positives and look-alikes, plain chat. `--plain FILE` reads other JSONL corpora (no model was fitted on them), and
`--topic` the topic categories' development sets (models.evaluate.DEVELOPMENT_SETS: drugs, exam fraud, fraud, gambling,
weapons; never the held-out sets), with the model fitted on every development set, as the shipped file is.

Run: .venv/bin/python -m bench.eval_distress [--blocks 61-67,68-74,75-79] [--zh 0.6,0.7,0.8] [--plain FILE ...]
     [--topic] [--min-df N] [--show T]
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.eval_attacks import ATTACKS, read_plain
from bench.eval_stance import blocks, set_number
from models import distress, evaluate
from proxy.guard.engine import Guard, inspect
from proxy.guard.extract import TextField
from proxy.guard.semantic import fusion_filters, load_detectors
from rules.distress import KIND, Distress
from rules.findings import Action
from rules.pseudonym import PseudonymVault
from rules.roles import Role

DEFAULT_BLOCKS = "61-67,68-74,75-79"
GROUPS = ("self_harm +", "self_harm -", "injection +", "injection -", "plain")


def _other_decisions() -> Callable[[str], bool]:
    """The request guard's verdict on a user turn, its `distress` findings set aside."""
    detectors = load_detectors()
    policy = Guard.load([], extra_detectors=detectors, filters=fusion_filters(detectors)).policy
    vault = PseudonymVault()

    def flagged(text: str) -> bool:
        seen = inspect(policy.request, [TextField(("messages", 0, "content"), text, Role.USER)], vault, policy.roles)
        return any(d.finding.kind != KIND and (d.finding.category in ATTACKS or d.action is Action.BLOCK)
                   for d in seen.decisions)

    return flagged


def _group(item: evaluate.Item) -> str:
    if item.label:
        return "self_harm +" if item.label == "self_harm" else "injection +"
    if item.topic == "self_harm":
        return "self_harm -"
    return "injection -" if item.topic else "plain"


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--blocks", default=DEFAULT_BLOCKS, help="ranges of development set numbers, comma-separated")
    p.add_argument("--zh", default=None, help="Chinese thresholds to read, comma-separated (default models.distress)")
    p.add_argument("--plain", type=Path, action="append", default=[], help="a JSONL corpus read as plain chat")
    p.add_argument("--topic", action="store_true", help="read the topic categories' development sets too")
    p.add_argument("--min-df", type=int, default=distress.MIN_DF, help="n-grams seen in fewer rows are left out")
    p.add_argument("--show", type=float, default=None, help="print the texts that change verdict at this threshold")
    args = p.parse_args(argv)
    levels = [float(v) for v in args.zh.split(",")] if args.zh else [distress.THRESHOLD]
    before = _other_decisions()
    exemplars = distress.exemplar_rows()
    # (threshold, group) -> [texts, flagged before, flagged after]
    counts: dict[tuple[float, str], list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    for lo, hi in blocks(args.blocks):
        inside = [n for n in distress.DISTRESS_SETS if lo <= set_number(n) <= hi]
        outside = [n for n in distress.DISTRESS_SETS if n not in inside]
        fitted: Distress = distress.fit([*distress.development_rows(outside), *exemplars], min_df=args.min_df)
        for name in inside:
            for item in evaluate.load_items(evaluate.data_path(name)):
                if len(item.text.strip()) > fitted.max_chars:
                    continue
                was = before(item.text)
                for level in levels:
                    model = dataclasses.replace(fitted, threshold=level)
                    now = was or model.states_intent(item.text)
                    c = counts[(level, _group(item))]
                    c[0] += 1
                    c[1] += was
                    c[2] += now
                    if args.show == level and now != was:
                        print(f"  {name} {_group(item)}: {item.text[:80]!r}")
    print(f"blocks {args.blocks}, texts of at most {distress.MAX_CHARS} characters: flagged before -> after")
    print(f"{'zh level':<9}" + "".join(f"{g:>22}" for g in GROUPS))
    for level in levels:
        cells = [counts[(level, g)] for g in GROUPS]
        print(f"{level:<9}" + "".join(f"{f'{c[1]} -> {c[2]} of {c[0]}':>22}" for c in cells))
    if args.plain or args.topic:
        whole = distress.fit([*distress.development_rows(), *exemplars], min_df=args.min_df)
        for path in args.plain:
            texts = [str(r["text"]) for r in read_plain(path)]
            for level in levels:
                model = dataclasses.replace(whole, threshold=level)
                hits = [t for t in texts if model.states_intent(t)]
                print(f"{path} at {level}: {len(hits)} of {len(texts)} stated intent")
                if args.show == level:
                    for t in hits:
                        print(f"  {t[:80]!r}")
        if args.topic:
            items = [it for name in evaluate.DEVELOPMENT_SETS for it in evaluate.load_items(evaluate.data_path(name))]
            for level in levels:
                model = dataclasses.replace(whole, threshold=level)
                by_label = collections.Counter(it.label or f"{it.topic or 'plain'} -" for it in items
                                               if model.states_intent(it.text))
                print(f"topic development sets at {level}: {sum(by_label.values())} of {len(items)} stated intent "
                      f"{dict(sorted(by_label.items()))}")


if __name__ == "__main__":
    main()
