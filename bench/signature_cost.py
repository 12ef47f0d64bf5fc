"""What the model-free injection signatures cost a request text, against another checkout in the same run.

The request guard runs every signature (rules/addressed.py, smuggled, persona, extraction, waiver, deputised, forged)
on each text in turn; this times them so, over the read attack sets' texts and bench/data's long plain and decode
corpora, and prints microseconds per text, each signature's and all together (best of three passes). `--against DIR`
runs the same measurement in a subprocess from another checkout (`git worktree add /tmp/x REV`, with
rules/_compact* copied in), so the two numbers come from one run on one machine; the ratio is printed last.

Run: .venv/bin/python -m bench.signature_cost [--sets 61-88] [--against /tmp/x]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAIN = ("bench/data/long_plain.jsonl", "bench/data/decode_eval.jsonl")
SIGNATURES = (("addressed", "instructions"), ("smuggled", "requests"), ("persona", "personas"),
              ("extraction", "requests"), ("waiver", "waivers"), ("deputised", "requests"), ("forged", "headers"))
PASSES = 3


def texts(root: Path, sets: str) -> list[str]:
    lo, _, hi = sets.partition("-")
    out: list[str] = []
    for n in range(int(lo), int(hi or lo) + 1):
        path = root / "models" / "data" / "eval" / f"semantic_eval{n}.jsonl"
        if path.is_file():
            out += [str(json.loads(line)["text"]) for line in path.read_text("utf-8").splitlines() if line.strip()]
    for name in PLAIN:
        out += [str(json.loads(line)["text"]) for line in (root / name).read_text("utf-8").splitlines()
                if line.strip()]
    return out


def per_text(functions: Sequence[Callable[[str], object]], corpus: Sequence[str]) -> float:
    """Microseconds per text to run `functions` on each text in turn, best of PASSES."""
    best = float("inf")
    for _ in range(PASSES):
        started = time.perf_counter()
        for text in corpus:
            for function in functions:
                function(text)
        best = min(best, time.perf_counter() - started)
    return best / max(1, len(corpus)) * 1e6


def measure(sets: str, corpus_root: Path) -> dict[str, float]:
    """Each signature's cost alone and all of them in turn, for the `rules` package this process imports."""
    import importlib

    functions = {name: getattr(importlib.import_module(f"rules.{name}"), fn) for name, fn in SIGNATURES}
    corpus = texts(corpus_root, sets)
    for function in functions.values():
        function("warm up")
    out = {name: per_text([function], corpus) for name, function in functions.items()}
    out["all"] = per_text(list(functions.values()), corpus)
    out["texts"] = float(len(corpus))
    return out


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--sets", default="61-88", help="range of attack set numbers whose texts are read")
    p.add_argument("--against", type=Path, help="another checkout, measured in a subprocess on the same texts")
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # the subprocess's own output
    p.add_argument("--corpus-root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    here = measure(args.sets, args.corpus_root)
    if args.json:
        print(json.dumps(here))
        return
    there: dict[str, float] | None = None
    if args.against is not None:
        # this script run as the other checkout's code: its `rules` imported from its directory
        code = ("import sys; sys.path.insert(0, '.'); __file__ = sys.argv[1]; sys.argv = sys.argv[1:]; "
                "exec(compile(open(__file__).read(), __file__, 'exec'))")
        done = subprocess.run([sys.executable, "-c", code, str(Path(__file__)), "--json", "--sets", args.sets,
                               "--corpus-root", str(ROOT)], cwd=args.against, check=True, capture_output=True,
                              text=True)
        there = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"{int(here['texts'])} texts (sets {args.sets} and {', '.join(PLAIN)}), microseconds per text")
    print(f"{'signature':<12}{'this checkout':>15}" + (f"{'against':>12}{'ratio':>8}" if there else ""))
    for name in [n for n, _ in SIGNATURES] + ["all"]:
        row = f"{name:<12}{here[name]:>15.1f}"
        if there:
            row += f"{there[name]:>12.1f}{here[name] / there[name]:>8.2f}"
        print(row)


if __name__ == "__main__":
    main()
