"""Decoding normalisation (rules/decode.py): false positives on ordinary prompts with base64/hex runs, encoded
injections caught, and the added cost per text (issue 23).

    .venv/bin/python -m bench.eval_decode [--data bench/data/decode_eval.jsonl] [--texts 1500] [--rounds 6]

Two request scanners from the same builtin packs, one with decoding (the default) and one with
`normalize: {decode: false}`. On the set (bench/decode_corpus.py writes it):

* benign texts: how many have a `decoded` finding (flagged) and how many are treated differently at all
  (action or rewritten text differs from the scanner without decoding: changed); target 0 and 0. Also how
  many had a run that decoded to text (JWT claims, Kubernetes secrets): scanned, and clean.
* injection texts: how many are blocked by a `decoded` finding, against the scanner without decoding.

Cost: ~1 KB prompts, texts per CPU-second (time.process_time) with and without decoding, on ordinary mixed
zh/en prompts (bench.scan's texts: prose and labeled PII lines, no runs made on purpose) and on ~1 KB prompts
built around the set's benign texts (every one carries runs). The two scanners take turns in rounds (ABBA) so
the shared machine's drift weighs on both; the pooled rates and the per-text difference are printed.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from rules import masking
from rules.decode import DECODED_KIND, Decoder
from rules.findings import Action, Detector, FindingFilter
from rules.pseudonym import PseudonymVault
from rules.scanner import Scanner

DATA = Path(__file__).parent / "data" / "decode_eval.jsonl"


def scanners(semantic: bool = False) -> tuple[Scanner, Scanner]:
    """(with decoding, without): the proxy's request scanners (proxy/guard/engine.py), lexical unless
    `semantic` (then decoded texts are judged by the model too, and fusion runs, as in `warden serve`)."""
    from proxy.guard.engine import compile_policy

    detectors: list[Detector] = []
    filters: list[FindingFilter] = []
    if semantic:
        from proxy.guard.semantic import fusion_filters, load_detectors

        detectors = load_detectors()
        filters = fusion_filters(detectors)
    with tempfile.TemporaryDirectory() as tmp:
        off = Path(tmp) / "decode-off.yaml"
        off.write_text("version: 1\nnormalize: {decode: false}\n", "utf-8")
        return (compile_policy([], extra_detectors=detectors, filters=filters).request,
                compile_policy([off], extra_detectors=detectors, filters=filters).request)


def rewritten(scanner: Scanner, text: str) -> tuple[Action, str]:
    result = scanner.scan(text)
    return result.action, masking.apply(text, result, PseudonymVault()) if result.findings else text


def quality(rows: Sequence[dict[str, str]], on: Scanner, off: Scanner) -> None:
    decoder = Decoder(on.rules.decode)
    per_kind: dict[tuple[str, str], Counter[str]] = {}
    for row in rows:
        text = row["text"]
        c = per_kind.setdefault((row["label"], row["kind"]), Counter())
        c["texts"] += 1
        result = on.scan(text)
        decoded_hit = any(f.kind == DECODED_KIND for f in result.findings)
        if row["label"] == "benign":
            c["flagged"] += decoded_hit
            c["changed"] += rewritten(on, text) != rewritten(off, text)
            c["decoded_to_text"] += bool(decoder.decoded_texts(text))
            if decoded_hit:
                print(f"  FLAGGED {row['id']}: {sorted({f.rule for f in result.findings if f.kind == DECODED_KIND})}")
        else:
            c["caught"] += decoded_hit and result.action is Action.BLOCK
            c["caught_without"] += off.scan(text).action is Action.BLOCK
            c["blocked"] += result.action is Action.BLOCK
    print("\nbenign prompts with base64/hex runs (target: flagged 0, changed 0)")
    print(f"{'kind':<14}{'texts':>7}{'flagged':>9}{'changed':>9}{'decoded to text':>17}")
    totals: Counter[str] = Counter()
    for (label, kind), c in per_kind.items():
        if label == "benign":
            totals.update(c)
            print(f"{kind:<14}{c['texts']:>7}{c['flagged']:>9}{c['changed']:>9}{c['decoded_to_text']:>17}")
    print(f"{'all':<14}{totals['texts']:>7}{totals['flagged']:>9}{totals['changed']:>9}"
          f"{totals['decoded_to_text']:>17}")
    print("\nencoded injection phrases in a user's text (blocked by a decoded finding; without decoding; blocked at"
          " all: mathematical letters are read by the base view's NFKC)")
    print(f"{'encoding':<14}{'texts':>7}{'caught':>8}{'without':>9}{'blocked':>9}")
    totals = Counter()
    for (label, kind), c in per_kind.items():
        if label == "injection":
            totals.update(c)
            print(f"{kind:<14}{c['texts']:>7}{c['caught']:>8}{c['caught_without']:>9}{c['blocked']:>9}")
    print(f"{'all':<14}{totals['texts']:>7}{totals['caught']:>8}{totals['caught_without']:>9}{totals['blocked']:>9}")


def padded(rows: Sequence[dict[str, str]], prose: Sequence[str], seed: int = 7) -> list[str]:
    """~1 KB prompts around each benign text (texts over 1 KB, data URLs and PEM blocks, stay as they are)."""
    rng = random.Random(seed)
    out = []
    for row in rows:
        if row["label"] != "benign":
            continue
        text = row["text"]
        while len(text.encode()) < 1000:
            p = rng.choice(prose)
            text = p[: max(40, 1000 - len(text.encode()))] + "\n" + text if rng.random() < 0.5 else text + "\n" + p
        out.append(text)
    return out


def rate(scan: Callable[[str], object], texts: Sequence[str]) -> tuple[float, int]:
    started = time.process_time()
    for t in texts:
        scan(t)
    return time.process_time() - started, len(texts)


def cost(name: str, texts: Sequence[str], on: Scanner, off: Scanner, rounds: int) -> None:
    for t in texts[:200]:  # RE2 builds its automata lazily
        on.scan(t)
        off.scan(t)
    spent = {"on": [0.0, 0], "off": [0.0, 0]}
    per_round = []
    for r in range(rounds):
        order = [("on", on), ("off", off)] if r % 2 == 0 else [("off", off), ("on", on)]
        got = {}
        for key, scanner in order:
            s, n = rate(scanner.scan, texts)
            spent[key][0] += s
            spent[key][1] += n
            got[key] = s / n
        per_round.append(got["on"] / got["off"])
    on_rate = spent["on"][1] / spent["on"][0]
    off_rate = spent["off"][1] / spent["off"][0]
    added_us = (spent["on"][0] / spent["on"][1] - spent["off"][0] / spent["off"][1]) * 1e6
    mean_kb = sum(len(t.encode()) for t in texts) / len(texts) / 1024
    print(f"{name:<34}{len(texts):>6}{mean_kb:>8.2f}{off_rate:>12.0f}{on_rate:>12.0f}{added_us:>10.1f}"
          f"   {min(per_round):.2f}-{max(per_round):.2f}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--texts", type=int, default=1500, help="ordinary ~1 KB prompts for the cost rows")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--semantic", action="store_true", help="only the set's readings, with the semantic "
                        "stage on (decoded texts judged by the model too; fusion as in warden serve)")
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.data.read_text("utf-8").splitlines() if line.strip()]
    on, off = scanners(args.semantic)
    print(f"decoding: {on.rules.decode.describe()}" + (", semantic stage on" if args.semantic else ""))
    quality(rows, on, off)
    if args.semantic:
        return 0
    from bench.scan import texts as scan_texts

    ordinary, _ = scan_texts(args.texts, 0, words=["代考"])
    prose = [line for t in ordinary[:300] for line in t.split("\n") if len(line) > 80]
    with_runs = padded(rows, prose)
    print("\ncost per ~1 KB prompt: texts per CPU-second without and with decoding (ABBA rounds)")
    print(f"{'texts':<34}{'n':>6}{'KB':>8}{'without/s':>12}{'with/s':>12}{'+us/text':>10}   with/without time")
    cost("ordinary prompts (bench.scan)", ordinary, on, off, args.rounds)
    cost("prompts with runs (the set)", with_runs * max(1, 1500 // max(1, len(with_runs))), on, off, args.rounds)
    conversation(args.rounds)
    return 0


def conversation(rounds: int, n: int = 400) -> None:
    """The request inspection of bench/overhead.py's 8-message conversation (proxy/guard/engine.inspect: every
    field scanned; with role policy and decoding, and without either, as before issue 23)."""
    from bench.overhead import MULTI_TURN_BODY
    from proxy.guard.engine import compile_policy, inspect
    from proxy.guard.extract import request_texts
    from proxy.state import Route

    with tempfile.TemporaryDirectory() as tmp:
        off_path = Path(tmp) / "decode-off.yaml"
        off_path.write_text("version: 1\nnormalize: {decode: false}\n", "utf-8")
        before, after = compile_policy([off_path]), compile_policy([])
    fields = request_texts(Route.CHAT, json.loads(MULTI_TURN_BODY))
    runs = {"before": lambda: inspect(before.request, fields, PseudonymVault()),
            "after": lambda: inspect(after.request, fields, PseudonymVault(), after.roles)}
    spent = {k: 0.0 for k in runs}
    for r in range(rounds * 2):
        for key in (list(runs) if r % 2 == 0 else list(runs)[::-1]):
            started = time.process_time()
            for _ in range(n):
                runs[key]()
            spent[key] += time.process_time() - started
    per = {k: v / (rounds * 2 * n) * 1e6 for k, v in spent.items()}
    chars = sum(len(f.text) for f in fields)
    print(f"\n8-message conversation ({len(fields)} fields, {chars} characters), request inspection per body: "
          f"{per['before']:.0f} us without roles and decoding, {per['after']:.0f} us with "
          f"({per['after'] - per['before']:+.0f} us)")


if __name__ == "__main__":
    raise SystemExit(main())
