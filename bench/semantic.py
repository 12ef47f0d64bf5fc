"""Semantic stage cost on one core: first stage per KB, second stage per window, cascade on a realistic mix.

Times are CPU time of the process, every thread of it (time.process_time), medians of repeated calls: not wall time,
which measures the neighbours on a shared machine too, and not the calling thread's alone, which hid the thread pool
SentencePiece started per batch (session 25: ~0.3-1 ms per prompt).

Run: .venv/bin/python bench/semantic.py [--mix-positives 0.05] [--attack-heads CANDIDATE.json]
Prints a table. Needs the built model (`warden models build`) and trained heads (shipped).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

from models import attack_heads, build, categories, evaluate, runtime, semantic
from models.memory import ExemplarMemory
from models.train import Heads


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn, reps: int) -> list[float]:  # type: ignore[no-untyped-def]
    """CPU milliseconds of this process per call: the machine is shared, so wall time measures the
    neighbours too (onnxruntime runs on the calling thread with intra_op_num_threads=1)."""
    out = []
    for _ in range(reps):
        t0 = time.process_time()
        fn()
        out.append((time.process_time() - t0) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mix-positives", type=float, default=0.05, help="share of harmful prompts in the mix")
    ap.add_argument("--prompts", type=int, default=400)
    ap.add_argument("--data", type=Path, default=evaluate.default_eval_paths()[-1],
                    help="labeled set whose texts make the mix (default: the newest held-out set)")
    ap.add_argument("--attack-heads", type=Path, action="append", default=[], metavar="FILE",
                    help="candidate attack heads (`warden models train --attack --out FILE`) measured on the same mix "
                         "after the shipped ones, in the same run (repeatable)")
    args = ap.parse_args()
    rss0 = rss_mib()
    built = build.ensure(progress=build.stderr_progress)
    rt = runtime.Runtime(built, threads=1)
    heads = Heads.load(semantic.heads_path())
    det = semantic.SemanticDetector(rt, heads, categories.load_categories())
    rss1 = rss_mib()
    items = [json.loads(line) for line in args.data.read_text("utf-8").splitlines() if line.strip()]
    benign = [it["text"] for it in items if it["type"] == "benign"]
    harmful = [it["text"] for it in items if it["label"]]

    rows: list[tuple[str, str]] = []
    # first stage: windows (tokenizing) + the gate on ~1 KB of text (UTF-8 bytes), per language
    for lang in ("zh", "en"):
        pool = [t for it in items for t in [it["text"]] if it["lang"] == lang]
        text = ""
        i = 0
        while len(text.encode()) < 1024:
            text += pool[i % len(pool)] + ("。" if lang == "zh" else ". ")
            i += 1

        def first(text: str = text) -> None:
            det.first_stage(text)  # what the detector runs on every text: windows and their gate scores

        ms = timed(first, 200)
        rows.append((f"first stage, 1 KB {lang} ({len(text)} chars)", f"p50 {statistics.median(ms):.3f} ms"))
    # second stage: one window, and 512 tokens as windows (how the detector cuts a long text); the early-exit
    # graph alone is the cost of a window that exits, both graphs the worst case (every window uncertain)
    ids = rt.tokenizer.encode("".join(benign))[: runtime.MAX_TOKENS - 8]
    n_win = 512 // runtime.MAX_TOKENS
    ms = timed(lambda: rt.encode_ids([ids]), 20)
    rows.append((f"second stage, one window ({runtime.MAX_TOKENS} tokens), both graphs",
                 f"p50 {statistics.median(ms):.1f} ms"))
    early_ms = statistics.median(timed(lambda: [rt.run_early(ids) for _ in range(n_win)], 9))  # uncached
    worst_ms = statistics.median(timed(lambda: rt.encode_ids([ids] * n_win), 9))
    rows.append((f"second stage, 512 tokens ({n_win} windows), all exit early", f"p50 {early_ms:.1f} ms"))
    rows.append((f"second stage, 512 tokens ({n_win} windows), none exits (worst)", f"p50 {worst_ms:.1f} ms"))
    # mean per 512 tokens = cost of the early graph + the late graph on the share that does not exit,
    # with the exit share measured on real stage-2 windows (the set's texts; the realistic mix below)
    def exit_share(texts: list[str]) -> tuple[float, int]:
        d = semantic.SemanticDetector(rt, heads, categories.load_categories())
        n = ex = 0
        for text in texts:
            for r in d._analyse(text):
                n += r.second is not None
                ex += r.exited
        return ex / max(1, n), n

    def projected(share: float) -> float:
        return early_ms + (1 - share) * (worst_ms - early_ms)

    share, n = exit_share([it["text"] for it in items])
    rows.append((f"second stage, 512 tokens, {args.data.name}'s texts ({n} windows, {share:.0%} exit)",
                 f"mean {projected(share):.1f} ms"))
    # cascade on a realistic mix: mostly benign prompts, a few harmful ones; a fresh detector (empty cache)
    rng = random.Random(7)
    n_harm = round(args.prompts * args.mix_positives)
    mix = [rng.choice(harmful) for _ in range(n_harm)] + [rng.choice(benign) for _ in range(args.prompts - n_harm)]
    rng.shuffle(mix)
    det2 = semantic.SemanticDetector(rt, heads, categories.load_categories())
    attack = attack_heads.load_detector(det2)

    def cascade(dets: list[semantic.SemanticDetector]) -> tuple[float, list[float]]:
        """Mean CPU ms per prompt through `dets` (as the scanner runs them, one after the other) and, per
        detector, the share of prompts with a window it sent to the second stage."""
        t0 = time.process_time()
        for text in mix:
            for d in dets:
                d.detect(text)
            for d in dets:
                d._cache.clear()  # every prompt pays full price, repeated texts included
            rt.forget()
        total = (time.process_time() - t0) * 1000
        sent = [0.0] * len(dets)
        for text in mix:
            for i, d in enumerate(dets):
                went = any(s is not None for _, _, s in d.scores(text))
                sent[i] += went
                d._cache.clear()
            rt.forget()
        return total / len(mix), [x / len(mix) for x in sent]

    def work(dets: list[semantic.SemanticDetector]) -> tuple[float, float, float]:
        """Per prompt through `dets`, as `cascade` runs them: encoder windows through the early graph, through the late
        graph, and the attack heads' memory products. Counts, not times: what a change saves, whatever the host's
        neighbours are doing (the times above move 30-50% with them)."""
        calls = {"early": 0, "late": 0, "memory": 0}
        real_early, real_late = rt.run_early, rt.run_late
        real_margins = ExemplarMemory.margins

        def early(ids):  # type: ignore[no-untyped-def]
            calls["early"] += 1
            return real_early(ids)

        def late(e):  # type: ignore[no-untyped-def]
            calls["late"] += 1
            return real_late(e)

        def margins(self, x):  # type: ignore[no-untyped-def]
            calls["memory"] += len(x)
            return real_margins(self, x)

        rt.run_early, rt.run_late = early, late  # type: ignore[method-assign]
        ExemplarMemory.margins = margins  # type: ignore[method-assign]
        try:
            for text in mix:
                for d in dets:
                    d.detect(text)
                for d in dets:
                    d._cache.clear()
                rt.forget()
        finally:
            rt.run_early, rt.run_late = real_early, real_late  # type: ignore[method-assign]
            ExemplarMemory.margins = real_margins  # type: ignore[method-assign]
        return calls["early"] / len(mix), calls["late"] / len(mix), calls["memory"] / len(mix)

    plain_ms, (plain_sent,) = cascade([det2])
    both_ms, (both_builtin, both_attack) = cascade([det2, attack])
    rows.append((f"cascade, {len(mix)} prompts ({args.mix_positives:.0%} harmful)", f"mean {plain_ms:.2f} ms"))
    rows.append(("  prompts with a window sent to the second stage", f"{plain_sent:.1%}"))
    rows.append(("cascade with the attack heads (models/attack_heads.py)", f"mean {both_ms:.2f} ms "
                 f"({both_ms / plain_ms:.2f}x)"))
    rows.append(("  prompts with a window sent on: builtin gate / attack gate",
                 f"{both_builtin:.1%} / {both_attack:.1%}"))
    n_early, n_late, n_memory = work([det2, attack])
    rows.append(("  per prompt: windows through the early / late graph, memory products",
                 f"{n_early:.3f} / {n_late:.3f} / {n_memory:.3f}"))
    for candidate in args.attack_heads:
        other = attack_heads.load_detector(det2, candidate)
        cand_ms, (_, cand_attack) = cascade([det2, other])
        rows.append((f"cascade with {candidate.name}'s attack heads", f"mean {cand_ms:.2f} ms "
                     f"({cand_ms / plain_ms:.2f}x), its gate sends {cand_attack:.1%} on"))
    share, n = exit_share(mix)
    rows.append((f"second stage, 512 tokens, the mix's windows ({n} windows, {share:.0%} exit)",
                 f"mean {projected(share):.1f} ms"))
    rows.append(("RSS before / after loading", f"{rss0:.0f} / {rss1:.0f} MiB (peak {rss_mib():.0f})"))
    width = max(len(a) for a, _ in rows)
    for a, b in rows:
        print(f"{a:<{width}}  {b}")


if __name__ == "__main__":
    main()
