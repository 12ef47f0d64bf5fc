"""`warden models build|train|eval`: build the model into the cache, train the heads, evaluate."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from models.categories import Category, Exemplar
    from rules.findings import Finding

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 64


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="warden models", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="write the ONNX graphs and tokenizer into the cache")
    b.add_argument("--force", action="store_true", help="rebuild even when a verified build exists")
    b.add_argument("--verify", action="store_true", help="recompute output hashes against the manifest")
    t = sub.add_parser("train", help="train heads and thresholds from models/data/categories/*.yaml, or your "
                       "own categories from --categories DIR")
    t.add_argument("--out", type=Path, help="where to write heads.json (default: the package's models/data; "
                   "required with --categories)")
    t.add_argument("--gate-recall", type=float, default=None,
                   help="with --categories: share of your positives (cross-validated) the first stage passes on to "
                        "the encoder (default 0.95, models.user_heads.GATE_RECALL; higher costs more encoder runs)")
    t.add_argument("--categories", type=Path, metavar="DIR",
                   help="your own categories: DIR/*.yaml in the format of models/data/categories; writes a user "
                        "heads file for `warden serve --heads FILE`, beside the builtin heads (models/user_heads.py)")
    t.add_argument("--attack", action="store_true",
                   help="train the attack categories' heads (models/data/attack_categories, prompt_injection and "
                        "self_harm) into models/data/attack_heads.json with the --categories recipe "
                        "(models/attack_heads.py)")
    t.add_argument("--stance", action="store_true",
                   help="train the injection stance (models/stance.py: does a long text carry out a prompt "
                        "injection or talk about one?) into rules/builtin/attack_stance.json, read by "
                        "rules/discussed.py; seconds, no encoder")
    t.add_argument("--distress", action="store_true",
                   help="train the distress model (models/distress.py: does a short Chinese text state self-harm "
                        "intent or means?) into rules/builtin/distress.json, read by rules/distress.py; a minute, "
                        "no encoder")
    t.add_argument("--hold-out", action="append", default=[], metavar="SET",
                   help="with --attack, --stance or --distress, repeatable: leave this development set out of "
                        "training (a name of models.attack_heads.TRAINED_SETS, models.stance.STANCE_SETS or "
                        "models.distress.DISTRESS_SETS, such as semantic_eval31), to "
                        "read it as unseen with `python -m bench.eval_attacks` against heads written with --out "
                        "(a stance: `python -m bench.eval_stance`)")
    t.add_argument("--memory", action="store_true",
                   help="with --categories: keep a nearest-exemplar memory beside the heads (models/memory.py, as the "
                        "attack heads do): each window's score moves toward its nearest exemplar's class; the file "
                        "grows by ~0.5 MB per 1,000 training rows")
    t.add_argument("--lexical", action="store_true",
                   help="with --categories: stack the heads with per-category word-piece tables (models/lexical.py, "
                        "as the attack heads do): stock phrases that a window's mean washes out still count")
    t.add_argument("--target-fpr", type=float, default=None,
                   help="cross-validated false-positive rate the thresholds aim at (default: 0.04, "
                   "models.train.TARGET_FPR; with --categories 0.02, models.user_heads.TARGET_FPR; with --attack "
                   "0.015, models.attack_heads.TARGET_FPR)")
    e = sub.add_parser("eval", help="accuracy, precision, recall, FPR: lexical, semantic, fused")
    e.add_argument("--data", type=Path, action="append",
                   help="labeled JSONL, repeatable: the rows pool them (default: the held-out sets, "
                        "models.evaluate.HELD_OUT_SETS)")
    e.add_argument("--heads", type=Path, metavar="FILE",
                   help="also load your own categories' heads (`warden models train --categories DIR --out FILE`)")
    e.add_argument("--no-attack", dest="attack", action="store_false",
                   help="leave out the attack categories' heads (prompt_injection, self_harm)")
    e.add_argument("--clear-below", type=float, default=None, help="fusion: clear keyword hits below this")
    e.add_argument("--errors", action="store_true", help="list misclassified texts of the fused row")
    e.add_argument("--by-category", action="store_true",
                   help="fused row per label (recall) and per negative type and topic (false positives)")
    e.add_argument("--lexical", choices=("scanner", "keywords"), default="scanner",
                   help="lexical row: rules.scanner's builtin packs (default) or the category keyword lists")
    return p


def main(argv: list[str]) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_USAGE
    from models.errors import ModelsError

    try:
        if args.command == "build":
            return _build(args)
        if args.command == "train":
            return _train(args)
        return _eval(args)
    except ModelsError as exc:
        print(f"warden models: {exc}", file=sys.stderr)
        return EXIT_FAIL


def _build(args: argparse.Namespace) -> int:
    from models import build

    built = build.ensure(progress=build.stderr_progress, force=args.force)
    if args.verify:
        build.verify(built)
    print(built.directory)
    return EXIT_OK


def _train(args: argparse.Namespace) -> int:
    if args.stance:
        return _train_stance(args)
    if args.distress:
        return _train_distress(args)
    if args.attack:
        from models import attack_heads, user_heads

        if args.categories is not None:
            print("warden models: --attack trains models/data/attack_categories; --categories DIR is your own",
                  file=sys.stderr)
            return EXIT_USAGE
        if args.hold_out and args.out is None:
            print("warden models: --hold-out needs --out FILE (the package's heads are trained on every set)",
                  file=sys.stderr)
            return EXIT_USAGE
        try:
            more = attack_heads.development_exemplars(args.hold_out)
            gate_more = attack_heads.gate_exemplars(args.hold_out)
        except ValueError as e:
            print(f"warden models: --hold-out: {e}", file=sys.stderr)
            return EXIT_USAGE
        args.categories = attack_heads.categories_dir()
        args.out = args.out or attack_heads.heads_path()
        if args.target_fpr is None:
            args.target_fpr = attack_heads.TARGET_FPR
        return _train_user(args, reserved=user_heads.builtin_names(attack=False), rank=attack_heads.RANK,
                           memory=(attack_heads.MEMORY_RANK, attack_heads.MEMORY_BETA),
                           plain=attack_heads.plain_texts(), fold=attack_heads.FOLD, lexical=attack_heads.LEXICAL,
                           hard_negative_sentences=attack_heads.HARD_NEGATIVE_SENTENCES, more=more,
                           gate_more=gate_more, short_gate_recall=attack_heads.SHORT_GATE_RECALL)
    if args.hold_out:
        print("warden models: --hold-out is for --attack (your own categories train on your files alone)",
              file=sys.stderr)
        return EXIT_USAGE
    if args.categories is not None:
        from models import memory

        return _train_user(args, memory=(memory.RANK, memory.BETA) if args.memory else None, lexical=args.lexical)
    if args.memory or args.lexical:
        print("warden models: --memory and --lexical are for --categories DIR (the attack heads have both already)",
              file=sys.stderr)
        return EXIT_USAGE
    from models import build, categories, runtime, semantic, train

    built = build.ensure(progress=build.stderr_progress)
    rt = runtime.Runtime(built, threads=2)
    cats = categories.load_categories()
    examples = categories.exemplars(cats, _topic_benign(cats))
    print(f"warden models: encoding {len(examples)} exemplars", file=sys.stderr)
    f = semantic.training_features(rt, examples)
    heads = train.train(cats, f.rows, f.ids, f.encoder, vocab_size=rt.tokenizer.vocab_size,
                        early_raw=f.encoder[:, runtime.EARLY_COLUMNS], build_key=built.directory.name, groups=f.groups,
                        target_fpr=train.TARGET_FPR if args.target_fpr is None else args.target_fpr)
    out: Path = args.out or semantic.heads_path()
    out.write_text(heads.to_json(), "utf-8")
    print(f"categories {', '.join(heads.categories)}; thresholds {heads.thresholds}; "
          f"gate passes {dict(heads.gate.passes)} ({len(heads.gate.grams)} grams); "
          f"early exit below {heads.early_exit}", file=sys.stderr)
    print(out)
    return EXIT_OK


def _train_stance(args: argparse.Namespace) -> int:
    from models import stance
    from rules.stance import Stance, stance_path

    def said(fitted: Stance) -> str:
        return (f"stance: {len(fitted.features)} n-grams; about the attack at {dict(fitted.thresholds)} from "
                f"{fitted.min_chars} characters")

    return _train_lexical(args, "the injection stance", "stance", stance_path(),
                          lambda out: said(stance.train(out, hold_out=args.hold_out)))


def _train_distress(args: argparse.Namespace) -> int:
    from models import distress
    from rules.distress import Distress, distress_path

    def said(fitted: Distress) -> str:
        return (f"distress: {len(fitted.features)} n-grams; states intent at {fitted.threshold} up to "
                f"{fitted.max_chars} characters")

    return _train_lexical(args, "the distress model", "model", distress_path(),
                          lambda out: said(distress.train(out, hold_out=args.hold_out)))


def _train_lexical(args: argparse.Namespace, what: str, short: str, shipped: Path,
                   train: Callable[[Path], str]) -> int:
    """`warden models train --stance` or `--distress`: a lexical model alone, into the package's file or --out (which
    --hold-out needs); `train` writes it and says what it wrote."""
    if args.attack or args.categories is not None or (args.stance and args.distress):
        print(f"warden models: {'--stance' if args.stance else '--distress'} trains {what} alone", file=sys.stderr)
        return EXIT_USAGE
    if args.hold_out and args.out is None:
        print(f"warden models: --hold-out needs --out FILE (the package's {short} is trained on every set)",
              file=sys.stderr)
        return EXIT_USAGE
    out: Path = args.out or shipped
    try:
        said = train(out)
    except ValueError as e:
        print(f"warden models: --hold-out: {e}", file=sys.stderr)
        return EXIT_USAGE
    print(said, file=sys.stderr)
    print(out)
    return EXIT_OK


def _topic_benign(cats: Sequence[Category]) -> dict[str, tuple[str, ...]]:
    """The topic heads' plain texts: benign.yaml and the attack sets' plain chat (models.attack_heads
    `development_plain`), which the topic heads trained on benign.yaml alone had flagged."""
    from models import attack_heads, categories

    return categories.with_exemplars(cats, categories.load_benign(), attack_heads.development_plain())[1]


def _train_user(args: argparse.Namespace, reserved: set[str] | None = None, rank: int | None = None,
                memory: tuple[int, float] | None = None, plain: Mapping[str, Sequence[str]] | None = None,
                fold: bool = False, lexical: bool = False, hard_negative_sentences: bool = False,
                more: Sequence[Exemplar] = (), gate_more: Sequence[Exemplar] | None = None,
                short_gate_recall: float | None = None) -> int:
    import time

    from models import build, runtime, user_heads

    if args.out is None:
        print("warden models: train --categories DIR needs --out FILE (the package's heads are not replaced)",
              file=sys.stderr)
        return EXIT_USAGE
    if not args.categories.is_dir():
        print(f"warden models: {args.categories}: not a directory of category files (*.yaml)", file=sys.stderr)
        return EXIT_USAGE
    t0 = time.perf_counter()
    built = build.ensure(progress=build.stderr_progress)
    rt = runtime.Runtime(built, threads=2)
    user, rep = user_heads.train_user(
        args.categories, rt, target_fpr=user_heads.TARGET_FPR if args.target_fpr is None else args.target_fpr,
        gate_recall=user_heads.GATE_RECALL if args.gate_recall is None else args.gate_recall, reserved=reserved,
        rank=user_heads.RANK if rank is None else rank, cache_dir=user_heads.feature_cache_dir(),
        memory_rank=None if memory is None else memory[0], memory_beta=0.0 if memory is None else memory[1],
        plain=plain, fold=fold, lexical=lexical, hard_negative_sentences=hard_negative_sentences, more=more,
        gate_more=gate_more, short_gate_recall=short_gate_recall, progress=user_heads.stderr_progress)
    args.out.write_text(user.to_json(), "utf-8")
    h = user.heads
    print(f"warden models: categories {', '.join(h.categories)} (levels {h.levels}); {rep.exemplars} exemplars "
          f"and {rep.benign} benign texts{' (benign features cached)' if rep.benign_cached else ''}; encode "
          f"{rep.seconds_encode:.1f} s, fit {rep.seconds_fit:.1f} s, total {time.perf_counter() - t0:.1f} s",
          file=sys.stderr)
    print(f"warden models: thresholds {h.thresholds}; the user gate passes {rep.positives_to_encoder:.1%} of the "
          f"positives and {rep.benign_to_encoder:.1%} of the benign windows on to the encoder (cross-validated)",
          file=sys.stderr)
    print(args.out)
    return EXIT_OK


def _eval(args: argparse.Namespace) -> int:
    from models import categories, evaluate, semantic
    from rules.fusion import Fusion  # lazy: only this command needs rules' filters

    paths: list[Path] = args.data or evaluate.default_eval_paths()
    items = [it for path in paths for it in evaluate.load_items(path)]
    cats = categories.load_categories()
    training = {e.text for e in categories.exemplars(cats, _topic_benign(cats))}
    leaked = [it.text for it in items if it.text in training]
    if leaked:
        print(f"warden models: {len(leaked)} evaluation texts are also training exemplars", file=sys.stderr)
        return EXIT_FAIL
    from models import attack_heads, user_heads

    detector = semantic.load_default()
    extra: list[user_heads.UserSemanticDetector] = []
    if args.attack:
        extra.append(attack_heads.load_detector(detector))
    if args.heads is not None:
        extra.append(user_heads.load_detector(args.heads, detector, extra))
    for d in extra:
        own = [it.text for it in items if user_heads.text_digest(it.text) in d.user.exemplar_digests]
        if own:
            print(f"warden models: {len(own)} evaluation texts are training exemplars of {d.path}", file=sys.stderr)
            return EXIT_FAIL
    detectors: list[semantic.SemanticDetector] = [detector, *extra]
    scanner = evaluate.scanner_detector() if args.lexical == "scanner" else None
    name, lexical = scanner if scanner else ("keyword baseline", evaluate.keyword_detector(cats))
    if args.clear_below is not None:
        for each in detectors:
            each.clear_below = args.clear_below  # the detectors' memory floors follow fusion's level
    fusions = [Fusion(d, clear_below=d.clear_below) for d in detectors]

    def fusion(text: str, findings: Sequence[Finding]) -> Sequence[Finding]:
        for f in fusions:
            findings = f(text, findings)
        return findings

    def detect(text: str) -> Sequence[Finding]:
        return [f for d in detectors for f in d.detect(text)]

    def judged(category: str) -> bool:
        return any(d.semantic_category(category) is not None for d in detectors)

    for it in items[:3]:  # warm up sessions so the first row's timing is fair
        detect(it.text)
    rows = evaluate.evaluate(items, lexical, detect, fusion, judged)
    print(f"{', '.join(map(str, paths))}: {len(items)} texts; lexical = {name}"
          + "".join(f"; heads {d.path} ({', '.join(d.categories)})" for d in extra))
    print(evaluate.HEADER)
    for r in rows:
        print(r.row())
    if args.errors or args.by_category:
        preds: list[bool] = []
        for it in items:
            findings = fusion(it.text, [*lexical(it.text), *detect(it.text)])
            preds.append(any(judged(f.category) for f in findings))
        if args.by_category:
            print(evaluate.BY_GROUP_HEADER)
            for line in evaluate.by_group(items, preds):
                print(line)
        for d in extra:
            passed = [user_heads.needs_encoder(d, it.text) for it in items]
            pos = [p for p, it in zip(passed, items, strict=True) if it.label is not None]
            neg = [p for p, it in zip(passed, items, strict=True) if it.label is None]
            print(f"gate of {d.path.name}: {sum(pos)}/{len(pos)} positives and {sum(neg)}/{len(neg)} negatives "
                  "reach its encoder stage")
        if args.errors:
            for it, pred in zip(items, preds, strict=True):
                if pred != (it.label is not None):
                    print(f"{'FP' if pred else 'FN'} {it.type:<20} {it.label or '-':<11} {it.text}")
    return EXIT_OK
