"""The attack categories as `warden serve` meets them (issue 23): each text of labelled JSONL sets (the
format of models/data/eval/) sent as a user turn through the request guard of the default configuration
(builtin packs, base64/hex decoding, the semantic stage and fusion), counted as flagged when the request is
blocked or a decision names prompt_injection or self_harm. `warden models eval` reads the semantic model's
categories only; this reads the product, word lists and role defaults included.

Run: .venv/bin/python -m bench.eval_attacks models/data/eval/semantic_eval18.jsonl [more.jsonl ...]
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

from proxy.guard.engine import Guard, inspect
from proxy.guard.extract import TextField
from proxy.guard.semantic import fusion_filters, load_detectors
from rules.pseudonym import PseudonymVault
from rules.roles import Role

ATTACKS = frozenset({"prompt_injection", "self_harm"})


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sets", nargs="+", type=Path)
    p.add_argument("--no-semantic", action="store_true", help="word lists, patterns and decoding only")
    args = p.parse_args()
    detectors = [] if args.no_semantic else load_detectors()
    policy = Guard.load([], extra_detectors=detectors, filters=fusion_filters(detectors)).policy
    flagged: collections.Counter[tuple[str, str]] = collections.Counter()
    total: collections.Counter[tuple[str, str]] = collections.Counter()
    for path in args.sets:
        for line in path.read_text("utf-8").splitlines():
            row = json.loads(line)
            field = TextField(("messages", 0, "content"), row["text"], Role.USER)
            seen = inspect(policy.request, [field], PseudonymVault(), policy.roles)
            hit = seen.blocked or any(d.finding.category in ATTACKS for d in seen.decisions)
            group = ("positive" if row["label"] else row["type"], row["topic"] or "-")
            total[group] += 1
            flagged[group] += hit
    print(f"{'group':<16}{'topic':<18}{'n':>5}  flagged")
    for group in sorted(total):
        print(f"{group[0]:<16}{group[1]:<18}{total[group]:>5}  {100 * flagged[group] / total[group]:5.1f}%")


if __name__ == "__main__":
    main()
