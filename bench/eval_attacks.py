"""The attack categories as `warden serve` meets them (issue 23): each text of labelled JSONL sets (the
format of models/data/eval/) sent as a user turn through the request guard of the default configuration
(builtin packs, base64/hex decoding, the semantic stage and fusion), counted as flagged when the request is
blocked or a decision names prompt_injection or self_harm. `warden models eval` reads the semantic model's
categories only; this reads the product, word lists and role defaults included.

Run: .venv/bin/python -m bench.eval_attacks models/data/eval/semantic_eval18.jsonl [more.jsonl ...]
     [--by-set] [--misses FILE] [--attack-heads FILE] [--no-semantic] [--plain FILE ...]

`--plain FILE` reads other JSONL corpora as plain chat: every row's `text`, or with a `label` field only the rows
labelled "benign" (bench/data/pii_corpus.jsonl: ordinary messages carrying personal data; bench/data/decode_eval.jsonl:
ordinary prompts carrying keys, hashes, blobs and hex, beside encoded injections).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from proxy.guard.engine import Guard, inspect
from proxy.guard.extract import TextField
from proxy.guard.semantic import fusion_filters, load_detectors
from rules.findings import Detector
from rules.pseudonym import PseudonymVault
from rules.roles import Role

ATTACKS = frozenset({"prompt_injection", "self_harm"})
POOLED = "all"


@dataclass(frozen=True, slots=True)
class Verdict:
    flagged: bool
    categories: tuple[str, ...]  # of every decision the guard made


Judge = Callable[[str], Verdict]


def guard_judge(detectors: Sequence[Detector]) -> Judge:
    """The request guard of the default configuration with `detectors` (none: word lists, patterns, decoding)."""
    policy = Guard.load([], extra_detectors=detectors, filters=fusion_filters(detectors)).policy

    def judge(text: str) -> Verdict:
        field = TextField(("messages", 0, "content"), text, Role.USER)
        seen = inspect(policy.request, [field], PseudonymVault(), policy.roles)
        cats = tuple(sorted({d.finding.category for d in seen.decisions}))
        return Verdict(seen.blocked or bool(ATTACKS & set(cats)), cats)

    return judge


def group_of(row: dict[str, object]) -> tuple[str, str]:
    return ("positive" if row["label"] else str(row["type"]), str(row["topic"] or "-"))


@dataclass
class Tally:
    total: collections.Counter[tuple[str, str, str]]  # (set, group, topic) -> rows; set POOLED for all
    flagged: collections.Counter[tuple[str, str, str]]
    errors: list[dict[str, object]]  # missed positives and flagged negatives, with the set and the categories


def tally(sets: Iterable[tuple[str, Iterable[dict[str, object]]]], judge: Judge) -> Tally:
    out = Tally(collections.Counter(), collections.Counter(), [])
    for name, rows in sets:
        for row in rows:
            verdict = judge(str(row["text"]))
            group = group_of(row)
            lang = f"{POOLED}:{row['lang']}" if row.get("lang") else None  # the pooled rows of one language
            for key in ((POOLED, *group), (name, *group), *(((lang, *group),) if lang else ())):
                out.total[key] += 1
                out.flagged[key] += verdict.flagged
            if verdict.flagged != bool(row["label"]):
                out.errors.append({"set": name, "kind": "missed" if row["label"] else "flagged", **row,
                                   "categories": list(verdict.categories)})
    return out


def table(t: Tally, *, by_set: bool, by_lang: bool = False) -> str:
    lines = [f"{'set':<22}{'group':<16}{'topic':<18}{'n':>5}  flagged"]
    langs = sorted(k[0] for k in t.total if k[0].startswith(f"{POOLED}:")) if by_lang else []
    sets = sorted({k[0] for k in t.total} - {POOLED} - {k[0] for k in t.total if k[0].startswith(f"{POOLED}:")})
    names = [*dict.fromkeys(langs), *(sets if by_set else [])]
    for name in [POOLED, *names]:
        for key in sorted(k for k in t.total if k[0] == name):
            lines.append(f"{name:<22}{key[1]:<16}{key[2]:<18}{t.total[key]:>5}  "
                         f"{100 * t.flagged[key] / t.total[key]:5.1f}%")
    return "\n".join(lines)


def read_set(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def read_plain(path: Path) -> list[dict[str, object]]:
    """A corpus's ordinary texts as plain-chat rows of the evaluation format."""
    return [{"text": row["text"], "lang": row.get("lang", ""), "label": None, "type": "benign", "topic": None}
            for row in read_set(path) if row.get("label", "benign") == "benign"]


def detectors_for(args: argparse.Namespace) -> list[Detector]:
    if args.no_semantic:
        return []
    if args.attack_heads is None and args.addressed_level is None and args.self_harm_words_level is None:
        return load_detectors()
    from models import attack_heads
    from models.semantic import load_default

    builtin = load_default()
    addressed = {None: attack_heads.ADDRESSED_LEVEL, "off": None}.get(args.addressed_level, args.addressed_level)
    words = {None: attack_heads.SELF_HARM_WORDS_LEVEL, "off": None}.get(args.self_harm_words_level,
                                                                         args.self_harm_words_level)
    return [builtin, attack_heads.load_detector(builtin, args.attack_heads, addressed_level=addressed,
                                                self_harm_words_level=words)]


def _level(value: str) -> str | float:
    if value == "off":
        return value
    try:
        level = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 0.5] or 'off', got {value!r}") from None
    if not 0.0 < level <= 0.5:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 0.5] or 'off', got {value!r}")
    return level


def trained_on(sets: Sequence[tuple[str, Sequence[dict[str, object]]]], detectors: Sequence[Detector]
               ) -> dict[str, int]:
    """Per set, how many of its texts a semantic detector read here was trained on (models/attack_heads.py trains
    on the read development sets): a reading of those is an upper bound, not an estimate."""
    from models.user_heads import UserSemanticDetector, text_digest

    digests = [d.user.exemplar_digests for d in detectors if isinstance(d, UserSemanticDetector)]
    counts = {name: sum(any(text_digest(str(r["text"])) in seen for seen in digests) for r in rows)
              for name, rows in sets}
    return {name: n for name, n in counts.items() if n}


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("sets", nargs="*", type=Path)
    p.add_argument("--plain", type=Path, action="append", default=[], metavar="FILE",
                   help="a corpus read as plain chat (every `text`; with a `label` field, the rows labelled benign)")
    p.add_argument("--no-semantic", action="store_true", help="word lists, patterns and decoding only")
    p.add_argument("--attack-heads", type=Path, metavar="FILE",
                   help="another attack heads file instead of the shipped one (a candidate from `warden models "
                        "train --attack --out FILE`)")
    p.add_argument("--addressed-level", type=_level, metavar="LEVEL",
                   help="the level at which a text addressing an automated reader fires prompt_injection near it "
                        "(models/attack_heads.py ADDRESSED_LEVEL; 'off': 0.5 there as elsewhere)")
    p.add_argument("--self-harm-words-level", type=_level, metavar="LEVEL",
                   help="the level at which a window naming self-harm in stock words fires self_harm "
                        "(models/attack_heads.py SELF_HARM_WORDS_LEVEL; 'off': no lower level there)")
    p.add_argument("--by-set", action="store_true", help="each set's rows too, besides the pooled ones")
    p.add_argument("--by-lang", action="store_true", help="the pooled rows of each language too (`all:en`, `all:zh`)")
    p.add_argument("--misses", type=Path, metavar="FILE",
                   help="write the missed positives and flagged negatives as JSONL (development sets only: reading "
                        "a blind set's errors makes it a development set)")
    args = p.parse_args(argv)
    if not args.sets and not args.plain:
        p.error("give evaluation sets, --plain corpora, or both")
    sets = [(path.stem, read_set(path)) for path in args.sets] + [(path.stem, read_plain(path)) for path in args.plain]
    detectors = detectors_for(args)
    for name, n in trained_on(sets, detectors).items():
        print(f"eval_attacks: {n} of {name}'s texts were trained on by the heads read here: an upper bound "
              "(`warden models train --attack --hold-out SET --out FILE` and --attack-heads FILE read it unseen)",
              file=sys.stderr)
    t = tally(sets, guard_judge(detectors))
    print(table(t, by_set=args.by_set, by_lang=args.by_lang))
    if args.misses is not None:
        args.misses.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in t.errors), "utf-8")


if __name__ == "__main__":
    main()
