"""A model-free signature (rules/extraction.py `requests`, rules/persona.py `personas`, ...) read over everything
labelled here: where it finds something, by group, and what a change to it finds that another revision's does not.

Every signature docstring cites such counts ("eval17-78 68 -> 86 of 5,041 positives, none of 7,460 look-alikes nor
19,375 plain texts"); each session rewrote the script that made them. The groups:

- `positive` / `positive_self_harm`: the read attack sets' injection and self-harm positives;
- `look_alike_<topic>`: their hard negatives, by the category they resemble;
- `plain`: their plain rows, bench/data's long plain texts, decode_eval's ordinary prompts and the PII corpus;
- `yaml_injection` / `yaml_other`: every string of 30+ characters in models/data's YAML files (prompt_injection's
  exemplars, positives and look-alikes alike; all others).

`--against REV` loads the module as it was at git revision REV and lists the rows the two versions disagree on;
`--product` also judges each row only the working version finds through the request guard of the default
configuration with REV's version in its place (set on the imported module, where the detectors look the function up
when the guard is built): the rows the change newly flags.

Run: .venv/bin/python -m bench.eval_signature rules.persona:personas [--against HEAD] [--product] [-v]
     [--sets 17-78]
"""

from __future__ import annotations

import argparse
import collections
import importlib
import subprocess
import types
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench import eval_attacks
from models import evaluate

ROOT = Path(__file__).resolve().parent.parent
PLAIN_FILES = ("bench/data/long_plain.jsonl", "bench/data/decode_eval.jsonl", "bench/data/pii_corpus.jsonl")
MIN_YAML_CHARS = 30

Finder = Callable[[str], Sequence[tuple[int, int]]]


@dataclass(frozen=True, slots=True)
class Row:
    source: str  # a set or file name
    group: str
    text: str


def group_of(row: dict[str, object]) -> str:
    """The group of a labelled row of models/data/eval."""
    if row.get("label") == "prompt_injection":
        return "positive"
    if row.get("label"):
        return f"positive_{row['label']}"
    if row.get("type") == "hard_negative":
        return f"look_alike_{row.get('topic')}"
    return "plain"


def set_rows(names: Iterable[str]) -> Iterator[Row]:
    for name in names:
        for row in eval_attacks.read_set(evaluate.data_path(name)):
            yield Row(name, group_of(row), str(row["text"]))


def plain_rows(paths: Iterable[Path]) -> Iterator[Row]:
    """The ordinary texts of plain corpora, as bench/eval_attacks.py's `--plain` reads them."""
    for path in paths:
        yield from (Row(path.name, "plain", str(row["text"])) for row in eval_attacks.read_plain(path))


def _strings(node: object) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _strings(key)
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def yaml_rows(directory: Path) -> Iterator[Row]:
    for path in sorted(directory.rglob("*.yaml")):
        group = "yaml_injection" if "prompt_injection" in path.name else "yaml_other"
        for doc in yaml.safe_load_all(path.read_text("utf-8")):
            for text in _strings(doc):
                if len(text) >= MIN_YAML_CHARS:
                    yield Row(path.name, group, text)


def counts(finder: Finder, rows: Sequence[Row]) -> tuple[collections.Counter[str], collections.Counter[str]]:
    """Per group, rows found and rows in all."""
    found: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    for row in rows:
        total[row.group] += 1
        found[row.group] += bool(finder(row.text))
    return found, total


def module_at(module: str, revision: str, root: Path = ROOT) -> types.ModuleType:
    """`module` (dotted, under `root`) as it was at git `revision`, loaded apart from the imported one."""
    path = module.replace(".", "/") + ".py"
    source = subprocess.run(["git", "-C", str(root), "show", f"{revision}:{path}"], check=True,
                            capture_output=True, text=True).stdout
    loaded = types.ModuleType(f"{module}@{revision}")
    loaded.__file__ = str(root / path)
    # the repository's own code at another revision, run as its import would run it
    exec(compile(source, f"{revision}:{path}", "exec"), loaded.__dict__)
    return loaded


def _sets(spec: str) -> list[str]:
    lo, _, hi = spec.partition("-")
    wanted = set(range(int(lo), int(hi or lo) + 1))
    return [n for n in evaluate.ATTACK_SETS
            if int(n.removeprefix("semantic_eval").removesuffix(".jsonl")) in wanted]


def _table(found: collections.Counter[str], total: collections.Counter[str],
           before: collections.Counter[str] | None) -> str:
    lines = [f"{'group':<28} {'found':>14} {'rows':>7}"]
    for group in sorted(total):
        was = f"{before[group]} -> " if before is not None else ""
        lines.append(f"{group:<28} {was + str(found[group]):>14} {total[group]:>7}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("target", help="module:function returning the [start, end) spans it finds in a text")
    p.add_argument("--sets", default=None, help="range of attack set numbers (default: every set in ATTACK_SETS "
                   "but unread blind sets, models.evaluate.unread)")
    p.add_argument("--against", metavar="REV", help="compare with the module at this git revision")
    p.add_argument("--product", action="store_true", help="with --against: judge the rows only this version finds "
                   "through the request guard with REV's version in its place")
    p.add_argument("-v", "--verbose", action="store_true", help="print the rows found outside the positives")
    args = p.parse_args(argv)
    module_name, _, function = args.target.partition(":")
    module = importlib.import_module(module_name)
    finder: Finder = getattr(module, function)
    names = [n for n in (_sets(args.sets) if args.sets else evaluate.ATTACK_SETS) if not evaluate.unread(n)]
    if blind := [n for n in evaluate.ATTACK_SETS if evaluate.unread(n)]:
        print(f"left out, unread blind sets: {', '.join(blind)}")
    rows = [*set_rows(names), *plain_rows(ROOT / f for f in PLAIN_FILES), *yaml_rows(ROOT / "models" / "data")]
    found, total = counts(finder, rows)
    old: Finder | None = None
    before = None
    if args.against:
        old = getattr(module_at(module_name, args.against), function)
        before, _ = counts(old, rows)
    print(_table(found, total, before))
    if args.verbose:
        for row in rows:
            if not row.group.startswith("positive") and finder(row.text):
                print(f"  found: {row.source} {row.group} {row.text[:100]!r}")
    if old is None:
        return
    gained = [r for r in rows if finder(r.text) and not old(r.text)]
    lost = [r for r in rows if old(r.text) and not finder(r.text)]
    for tag, changed in (("only now", gained), ("only before", lost)):
        for row in changed:
            print(f"  {tag}: {row.source} {row.group} {row.text[:100]!r}")
    if args.product and gained:
        setattr(module, function, old)  # the guard loaded below builds its detectors from the old version
        from proxy.guard.semantic import load_detectors

        judge = eval_attacks.guard_judge(load_detectors())
        newly = [r for r in gained if not judge(r.text).flagged]
        print(f"newly flagged by the product: {len(newly)} of the {len(gained)} rows only this version finds")
        for row in newly:
            print(f"  newly flagged: {row.source} {row.group} {row.text[:100]!r}")


if __name__ == "__main__":
    main()
