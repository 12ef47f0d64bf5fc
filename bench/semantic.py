"""Semantic stage cost on one core: first stage per KB, second stage per window, cascade on a realistic mix.

Times are CPU time of the calling thread (time.thread_time), medians of repeated calls.

Run: .venv/bin/python bench/semantic.py [--mix-positives 0.05]
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

from models import build, categories, runtime, semantic
from models.train import Heads

EVAL = Path(__file__).resolve().parent / "data" / "semantic_eval.jsonl"


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn, reps: int) -> list[float]:  # type: ignore[no-untyped-def]
    """CPU milliseconds of this thread per call: the machine is shared, so wall time measures the
    neighbours too (onnxruntime runs on the calling thread with intra_op_num_threads=1)."""
    out = []
    for _ in range(reps):
        t0 = time.thread_time()
        fn()
        out.append((time.thread_time() - t0) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mix-positives", type=float, default=0.05, help="share of harmful prompts in the mix")
    ap.add_argument("--prompts", type=int, default=400)
    args = ap.parse_args()
    rss0 = rss_mib()
    built = build.ensure(progress=build.stderr_progress)
    rt = runtime.Runtime(built, threads=1)
    heads = Heads.load(semantic.heads_path())
    det = semantic.SemanticDetector(rt, heads, categories.load_categories())
    rss1 = rss_mib()
    items = [json.loads(line) for line in EVAL.read_text("utf-8").splitlines() if line.strip()]
    benign = [it["text"] for it in items if it["type"] == "benign"]
    harmful = [it["text"] for it in items if it["label"]]

    rows: list[tuple[str, str]] = []
    # first stage: tokenize + static vector + heads on ~1 KB of text (UTF-8 bytes), per language
    for lang in ("zh", "en"):
        pool = [t for it in items for t in [it["text"]] if it["lang"] == lang]
        text = ""
        i = 0
        while len(text.encode()) < 1024:
            text += pool[i % len(pool)] + ("。" if lang == "zh" else ". ")
            i += 1

        def first(text: str = text) -> None:
            for w in det.windows(text):
                heads.static.scores(rt.static_vector(w.ids)[None, :])

        ms = timed(first, 200)
        rows.append((f"first stage, 1 KB {lang} ({len(text)} chars)", f"p50 {statistics.median(ms):.3f} ms"))
    # second stage: one window, and 512 tokens as windows (how the detector cuts a long text)
    ids = rt.tokenizer.encode("".join(benign))[: runtime.MAX_TOKENS - 8]
    n_win = 512 // runtime.MAX_TOKENS
    ms = timed(lambda: rt.encode_ids([ids]), 20)
    rows.append((f"second stage, one window ({runtime.MAX_TOKENS} tokens)", f"p50 {statistics.median(ms):.1f} ms"))
    ms = timed(lambda: rt.encode_ids([ids] * n_win), 9)
    rows.append((f"second stage, 512 tokens ({n_win} windows)", f"p50 {statistics.median(ms):.1f} ms"))
    long_ids = rt.tokenizer.encode(" ".join(benign * 4))[:510]
    seq = [[rt.tokenizer.bos, *long_ids, rt.tokenizer.eos]]
    import numpy as np

    arr = np.array(seq, dtype=np.int64)
    ms = timed(lambda: rt._session.run(["embedding"], {"input_ids": arr, "attention_mask": np.ones_like(arr)}), 5)
    rows.append(("encoder, one 512-token window (for reference)", f"p50 {statistics.median(ms):.1f} ms"))
    # cascade on a realistic mix: mostly benign prompts, a few harmful ones; a fresh detector (empty cache)
    rng = random.Random(7)
    n_harm = round(args.prompts * args.mix_positives)
    mix = [rng.choice(harmful) for _ in range(n_harm)] + [rng.choice(benign) for _ in range(args.prompts - n_harm)]
    rng.shuffle(mix)
    det2 = semantic.SemanticDetector(rt, heads, categories.load_categories())
    second = 0
    t0 = time.thread_time()
    for text in mix:
        det2.detect(text)
        det2._cache.clear()  # every prompt pays full price, repeated texts included
    total = (time.thread_time() - t0) * 1000
    for text in mix:
        second += sum(1 for _, _, s in det2.scores(text) if s is not None)
        det2._cache.clear()
    rows.append((f"cascade, {len(mix)} prompts ({args.mix_positives:.0%} harmful)", f"mean {total / len(mix):.2f} ms"))
    rows.append(("  windows sent to the second stage", f"{second / len(mix):.1%} of prompts"))
    rows.append(("RSS before / after loading", f"{rss0:.0f} / {rss1:.0f} MiB (peak {rss_mib():.0f})"))
    width = max(len(a) for a, _ in rows)
    for a, b in rows:
        print(f"{a:<{width}}  {b}")


if __name__ == "__main__":
    main()
