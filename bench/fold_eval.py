"""Train on an evaluation set that has been read: append its texts to the exemplar files.

A set read to make a choice is a development set from then on (bench/README.md), and development sets are
trained on: they were written blind, by other hands than the exemplars, in the mix the model is judged on.
Each text goes to the end of its list, under a comment naming the set: positives under their category
(`label`), hard negatives under their `topic`, plain benign texts in benign.yaml. The files' own comments
and order are kept (text edits, not a YAML round trip). Then move the set from `models.evaluate.HELD_OUT_SETS`
to `DEVELOPMENT_SETS`, have a new held-out set written blind, and run `warden models train`.

    .venv/bin/python -m bench.fold_eval models/data/eval/semantic_eval7.jsonl [--data models/data]
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path

import yaml

from models import categories, evaluate

_TOP = re.compile(r"^([a-z_]+):")
_LANG = re.compile(r"^  (zh|en):\s*$")

Key = tuple[str, str, str]  # file relative to the data directory, list ("positives", ...), language


def destination(item: evaluate.Item) -> Key:
    if item.label is not None:
        return f"categories/{item.label}.yaml", "positives", item.lang
    if item.type == "hard_negative":
        if item.topic is None:
            raise ValueError(f"hard negative without a topic: {item.text!r}")
        return f"categories/{item.topic}.yaml", "hard_negatives", item.lang
    return "benign.yaml", "benign", item.lang


def list_ends(lines: Sequence[str]) -> dict[tuple[str, str], int]:
    """(list, language) -> index of the line after its last item, for block lists of one-line items."""
    top = lang = None
    ends: dict[tuple[str, str], int] = {}
    for i, line in enumerate(lines):
        if m := _TOP.match(line):
            top, lang = m.group(1), None
        elif m := _LANG.match(line):
            lang = m.group(1)
        elif top and lang and line.startswith("  - "):
            ends[(top, lang)] = i + 1
    return ends


def item_line(text: str) -> str:
    dumped = yaml.safe_dump([text], allow_unicode=True, width=1 << 30).rstrip("\n")
    if "\n" in dumped:  # a text of several lines (an e-mail to answer): one double-quoted line, "\n" escaped
        dumped = yaml.safe_dump([text], allow_unicode=True, width=1 << 30, default_style='"').rstrip("\n")
    if "\n" in dumped or yaml.safe_load(dumped) != [text]:
        raise ValueError(f"text does not fit one YAML line: {text!r}")
    return "  " + dumped


def fold(data_dir: Path, path: Path) -> int:
    """Append the set's texts to the exemplar files under `data_dir`; returns how many were added."""
    items = evaluate.load_items(path)
    training = {e.text for e in categories.exemplars(categories.load_categories(data_dir / "categories"),
                                                     categories.load_benign(data_dir / "benign.yaml"))}
    if already := [it.text for it in items if it.text in training]:
        raise ValueError(f"{path.name}: {len(already)} texts are exemplars already")
    by_key: dict[Key, list[str]] = {}
    for it in items:
        by_key.setdefault(destination(it), []).append(it.text)
    # Named as every earlier set is in the exemplar files, by its first home (bench/data/; now models/data/eval/).
    comment = f"  # development set bench/data/{path.name} (read during development, then trained on)"
    for name in sorted({k[0] for k in by_key}):
        file = data_dir / name
        lines = file.read_text("utf-8").split("\n")
        ends = list_ends(lines)
        inserts = []
        for (fname, top, lang), texts in by_key.items():
            if fname == name:
                if (top, lang) not in ends:
                    raise ValueError(f"{file}: no block list {top}.{lang} to append to")
                inserts.append((ends[(top, lang)], [comment, *map(item_line, texts)]))
        for at, block in sorted(inserts, reverse=True):
            lines[at:at] = block
        file.write_text("\n".join(lines), "utf-8")
    return len(items)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", type=Path, nargs="+", help="evaluation sets (JSONL) to train on")
    ap.add_argument("--data", type=Path, default=categories.data_dir(), help="exemplar directory")
    args = ap.parse_args(argv)
    for path in args.sets:
        print(f"{path}: {fold(args.data, path)} texts added to {args.data}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
