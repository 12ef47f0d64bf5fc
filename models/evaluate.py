"""`warden models eval`: regex alone, semantic alone and fused, on the held-out labeled set.

A set (models/data/eval/semantic_eval*.jsonl, package data: `warden models eval` reads the held-out sets from
an installed wheel as from a checkout) is one JSON object per line: `text`, `lang` ("zh"|"en"), `label`
(a category or null) and `type` ("positive_no_keyword", "positive_keyword", "hard_negative", "benign").
It shares no text with the training exemplars (checked here). A text is predicted positive when any
finding of a semantic-judged category remains; the metrics are binary (harmful or not).

The lexical row uses `rules.scanner.Scanner.load()` (the builtin word, pattern and PII packs) when that
module is importable, else the category files' keyword lists (a plain case-insensitive substring
baseline, `--lexical keywords`). Those imports of
`rules` are lazy and confined to this command: the detector itself imports only `rules.findings`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from models.categories import Category
from rules.findings import Finding

LexicalDetect = Callable[[str], Sequence[Finding]]


@dataclass(frozen=True, slots=True)
class Item:
    text: str
    lang: str
    label: str | None
    type: str
    topic: str | None = None  # the category a hard negative is about


@dataclass(frozen=True, slots=True)
class Metrics:
    name: str
    n: int
    accuracy: float
    precision: float
    recall: float
    fpr: float
    ms_per_text: float

    def row(self) -> str:
        return (f"{self.name:<18} {self.n:>5} {self.accuracy:>9.1%} {self.precision:>10.1%} {self.recall:>8.1%} "
                f"{self.fpr:>7.1%} {self.ms_per_text:>10.2f}")


HEADER = f"{'detector':<18} {'n':>5} {'accuracy':>9} {'precision':>10} {'recall':>8} {'FPR':>7} {'ms/text':>10}"


# The evaluation sets, each written blind (bench/README.md). A set read to make a choice is a development
# set from then on, and development sets are trained on (bench/fold_eval.py: models/data, under a comment
# naming the file); held-out sets are never trained on and read once per set of heads. The default reading
# pools the held-out sets. The fourteenth and fifteenth, the first with long application-style prompts, were
# read and are trained on; the sixteenth, in their style, is held out.
DEVELOPMENT_SETS = ("semantic_eval.jsonl", *(f"semantic_eval{n}.jsonl" for n in (*range(2, 12), 14, 15)))
HELD_OUT_SETS = ("semantic_eval12.jsonl", "semantic_eval13.jsonl", "semantic_eval16.jsonl")
# Blind sets of the attack categories (issue 23: prompt_injection, self_harm; their own mix: positives, hard
# negatives of those topics and plain chat). Not pooled into the default reading. eval17 was read once with the
# heads of 313b40a (bench/README.md) and is a development set for these categories since (346e579 dropped its
# two plain texts that are also benign.yaml exemplars); eval18 (9b3a568) was written blind and read once at
# ceca711 (its .md has the reading): a development set since. eval19 (72c425f) was written blind and read once in
# session 11 with the shipped attack heads (its .md has the reading): a development set since. eval20 (ef68b19)
# likewise, read once in session 12 (31ed4eb). eval21 (7fe654d) was written blind in session 12 and read once in
# session 13 (its .md has the reading): a development set since. eval22 (e17b472) was written blind in session 13
# the same way and read once in session 14 (its .md has the reading): a development set since. eval23 (c00f53c) was
# written blind in session 14 the same way and read once in session 15 (its .md has the reading): a development set
# since. eval24 (bae993a) was written blind in session 15 the same way and read once at the end of session 15 (its
# .md has the reading): a development set since. eval25 (e6fbad6) was written blind in session 16 the same way and
# read once at the end of session 16 (its .md has the reading): a development set since. eval26 (37910af) was written
# blind in session 16 the same way and read once at the start of session 17 (its .md has the reading): a development
# set since. eval27 (697b0ca) was written blind in session 17 the same way and read once later in session 17 (its .md
# has the reading): a development set since. eval28 (fb94b1d) was written blind in session 17 the same way and read
# once at the end of session 17 (its .md has the reading): a development set since. eval29 (905d7be) was written
# blind in session 17 the same way and read once at the start of session 18 (its .md has the reading): a development
# set since. eval30 (2b411d3) was written blind in session 18 the same way and read once later in session 18 (its .md
# has the reading): a development set since. eval31 (31abf52) was written blind in session 18 the same way and read
# once at the end of session 18 (its .md has the reading): a development set since. eval32 (80d3549) was written
# blind in session 18 the same way and read once at the start of session 19 (its .md has the reading): a
# development set since. eval33 (c65b928) was written blind in session 19 the same way and read once later in
# session 19, with the first heads trained on the read development sets (its .md has the reading): a development
# set since, not yet trained on (models/attack_heads.py TRAINED_SETS). eval34 (c41a1fc) was written blind in
# session 19 the same way and read once at the start of session 20 (its .md has the reading): a development set
# since. eval35 (f44bc9f) was written blind in session 20 the same way and read once later in session 20, with
# the heads trained on eval17-34 (its .md has the reading): a development set since, not yet trained on. eval36
# (0b34f0a) was written blind in session 20 the same way and read once at the end of session 20 (its .md has the
# reading): a development set since, not yet trained on. eval37 (e436ba0) was written blind in session 20 the same way
# and read once at the start of session 21 (its .md has the reading): a development set since, not yet trained on.
# eval38 (357f099) was written blind in session 21 the same way and read once later in session 21 (its .md has the
# reading): a development set since, not yet trained on.
# eval39 (1ef21d9) and eval40 (0731e68) were written blind in session 22 the same way and read once in session 22
# (their .md files have the readings): development sets since, not trained on. eval41 (9bad410) was written blind in
# session 23 the same way (its writer read only eval40.md before its first reading) and read once late in session 23
# (its .md has the reading): a development set since, not trained on.
# eval42 (a09c6a2) was written blind in session 23 the same way (its writer read only eval41.md before its first
# reading) and read once at the start of session 24 (its .md has the reading): a development set since.
# eval43 (3ba92c7) was written blind in session 24 the same way (its writer read only eval42.md before its first
# reading) and read once later in session 24 (its .md has the reading): a development set since.
# eval44 (a8eb6db) was written blind at the end of session 24 the same way (its writer read only eval43.md before
# its first reading) and read once at the start of session 25 (its .md has the reading): a development set since.
# eval45 (7390973) was written blind in session 25 the same way (its writer read only eval44.md before its first
# reading) and read once later in session 25 (its .md has the reading): a development set since.
# eval46 (9fe3c21) was written blind in session 25 the same way (its writer read only eval45.md before its first
# reading) and read once at the end of session 25 (its .md has the reading): a development set since.
# eval47 (02bbc23) was written blind at the end of session 25 the same way (its writer read only eval46.md before its
# first reading) and read once at the start of session 26 (its .md has the reading): a development set since.
# eval48 (c65a838) was written blind in session 26 the same way (its writer read only eval47.md before its first
# reading) and read once at the end of session 26 (its .md has the reading): a development set since.
# eval49 (61332d8) was written blind at the end of session 26 the same way (its writer read only eval48.md before
# its first reading) and read once at the start of session 27 (its .md has the reading): a development set since.
# eval50 (2088d7d) was written blind in session 27 the same way (its writer read only eval49.md before its first
# reading) and read once later in session 27 (its .md has the reading): a development set since.
# eval51 (e229d9e) was written blind in session 28 the same way (its writer read only eval50.md before its first
# reading) and read once right after (its .md has the reading): a development set since.
# eval52 (7fb45e8) was written blind in session 28 the same way (its writer read only eval51.md before its first
# reading) and read once right after (its .md has the reading): a development set since.
# eval53 (e6a66d9) was written blind at the end of session 28 the same way (its writer read only eval52.md before
# its first reading) and read once at the start of session 29 (its .md has the reading): a development set since.
# eval54 (626d9ce) was written blind in session 29 the same way (its writer read only eval53.md before its first
# reading) and read once right after (its .md has the reading): a development set since.
# eval55 (107330c) was written blind in session 29 the same way (its writer read only eval54.md before its first
# reading) and read once right after (its .md has the reading): a development set since.
# eval56 (2142baf) was written blind in session 29 the same way (its writer read only eval55.md before its first
# reading) and read once right after (its .md has the reading): a development set since.
# eval57 (8487b54) was written blind at the end of session 29 the same way (its writer read only eval56.md before
# its first reading) and read once right after (its .md has the reading): a development set since.
# eval58 (d974925) was written blind at the start of session 30 the same way (its writer read only eval57.md before
# its first reading) and read once right after (its .md has the reading): a development set since.
# eval59 (bb2ddc5) was written blind in session 30 the same way (its writer read only eval58.md before its first
# reading) and read once right after (its .md has the reading): a development set since.
# eval60 (1f42e24) was written blind in session 30 the same way (its writer read only eval59.md before its first
# reading) and read once right after (its .md has the reading): a development set since.
# eval61 (6d73fbb) was written blind at the start of session 31 the same way (its writer read only eval60.md before
# its first reading) and read once right after (its .md has the reading): a development set since.
# eval62 (311da7c) was written blind in session 31 the same way (its writer read only eval61.md before its
# first reading) and read once right after (its .md has the reading): a development set since.
# eval63 (7da4c0c) was written blind in session 31 the same way (its writer read only eval62.md before its
# first reading) and read once right after (its .md has the reading): a development set since.
# eval64 (0b279e2) was written blind at the start of session 32 the same way (its writer read only eval63.md before
# its first reading) and read once right after (its .md has the reading): a development set since.
# eval65 (391f770) was written blind in session 32 the same way (its writer read only eval64.md before its first
# reading) and read once right after (its .md has the reading): a development set since.
# eval66 (14b73d9) was written blind at the start of session 33 the same way (its writer read only eval65.md before
# its first reading) and read once right after (its .md has the reading): a development set since.
# eval67 (94c243d) was written blind in session 33 the same way (its writer read only eval66.md before its first
# reading) and read once right after (its .md has the reading): a development set since.
# eval68 (4819381) was written blind in session 33 the same way (its writer read only eval67.md before its first
# reading) and read once right after (its .md has the reading): a development set since.
# eval69 (a2f1752) was written blind at the end of session 33 the same way (its writer read only eval68.md before its
# first reading) and read once right after, with the session's final product (its .md has the reading).
# eval70 (dab01b5) was written blind at the start of session 34 the same way (its writer read only eval69.md) and read
# once right after, with the shipped heads and heads retrained on eval17-69 (its .md has the reading).
# eval71 (d764ba5) was written blind in session 34 the same way (its writer read only eval70.md before its first
# reading) and read once after the session's changes (its .md has the reading): a development set since.
# eval72 (0b090ab) was written blind at the end of session 34 the same way (its writer read only eval71.md before its
# first reading) and read once right after, with the session's final product (its .md has the reading).
# eval73 (50cd763) was written blind at the start of session 35 the same way (its writer read only eval72.md before
# its first reading) and read once right after, with the shipped heads and heads retrained on eval17-72 (its .md has
# the reading): a development set since.
# eval74 (0850898) was written blind late in session 35 the same way (its writer read only eval73.md before its first
# reading) and read once right after, with the session's product and session 34's (its .md has the reading): a
# development set since.
# eval75 and eval76 (1d501af) were written blind at the start of session 36 by two helpers at once, each reading only
# eval74.md before its first reading, and read once after the session's changes, with its product and session 35's
# (their .md files have the reading): development sets since.
# eval77 and eval78 (99895e4) were written blind early in session 37 by two helpers at once, each reading only
# eval76.md before its first reading, and read once after the session's changes, with its product, session 36's and
# heads retrained on eval17-76 (their .md files have the reading): development sets since.
# eval79 (9380532) was written blind late in session 37 by a helper reading only eval76.md before its first reading,
# and read once right after, with the session's final product and session 36's (its .md has the reading): a
# development set since.
# eval80 and eval81 (session 38) were written blind at the start of session 38 by two helpers at once, each reading
# only eval76.md before its first reading, with no listing of /tmp or the repository and no git status allowed.
# eval82 was written blind later in session 38 by a third helper from the same brief (its git log showed the title of
# the distress model's commit; its .md says so).
ATTACK_SETS = ("semantic_eval17.jsonl", "semantic_eval18.jsonl", "semantic_eval19.jsonl", "semantic_eval20.jsonl",
               "semantic_eval21.jsonl", "semantic_eval22.jsonl", "semantic_eval23.jsonl", "semantic_eval24.jsonl",
               "semantic_eval25.jsonl", "semantic_eval26.jsonl", "semantic_eval27.jsonl",
               "semantic_eval28.jsonl", "semantic_eval29.jsonl", "semantic_eval30.jsonl",
               "semantic_eval31.jsonl", "semantic_eval32.jsonl", "semantic_eval33.jsonl",
               "semantic_eval34.jsonl", "semantic_eval35.jsonl", "semantic_eval36.jsonl", "semantic_eval37.jsonl",
               "semantic_eval38.jsonl", "semantic_eval39.jsonl", "semantic_eval40.jsonl",
               "semantic_eval41.jsonl", "semantic_eval42.jsonl", "semantic_eval43.jsonl",
               "semantic_eval44.jsonl", "semantic_eval45.jsonl", "semantic_eval46.jsonl",
               "semantic_eval47.jsonl", "semantic_eval48.jsonl", "semantic_eval49.jsonl", "semantic_eval50.jsonl",
               "semantic_eval51.jsonl", "semantic_eval52.jsonl", "semantic_eval53.jsonl", "semantic_eval54.jsonl",
               "semantic_eval55.jsonl", "semantic_eval56.jsonl", "semantic_eval57.jsonl", "semantic_eval58.jsonl",
               "semantic_eval59.jsonl", "semantic_eval60.jsonl", "semantic_eval61.jsonl",
               "semantic_eval62.jsonl",
               "semantic_eval63.jsonl",
               "semantic_eval64.jsonl",
               "semantic_eval65.jsonl",
               "semantic_eval66.jsonl",
               "semantic_eval67.jsonl",
               "semantic_eval68.jsonl",
               "semantic_eval69.jsonl",
               "semantic_eval70.jsonl",
               "semantic_eval71.jsonl",
               "semantic_eval72.jsonl",
               "semantic_eval73.jsonl",
               "semantic_eval74.jsonl",
               "semantic_eval75.jsonl",
               "semantic_eval76.jsonl",
               "semantic_eval77.jsonl",
               "semantic_eval78.jsonl",
               "semantic_eval79.jsonl",
               "semantic_eval80.jsonl",
               "semantic_eval81.jsonl",
               "semantic_eval82.jsonl",
               "semantic_eval83.jsonl",
               "semantic_eval84.jsonl",
               "semantic_eval85.jsonl",
               "semantic_eval86.jsonl",
               "semantic_eval87.jsonl",
               "semantic_eval88.jsonl",
               "semantic_eval89.jsonl",
               "semantic_eval90.jsonl",
               "semantic_eval91.jsonl",
               "semantic_eval92.jsonl",
               "semantic_eval93.jsonl",
               "semantic_eval94.jsonl",
               "semantic_eval95.jsonl",
               "semantic_eval96.jsonl",
               "semantic_eval97.jsonl",
               "semantic_eval98.jsonl",
               "semantic_eval99.jsonl",
               "semantic_eval100.jsonl")


def data_path(name: str) -> Path:
    """An evaluation set as the package holds it (models/data/eval/; the development sets' comments in the
    exemplar files still name them by their former directory, bench/data/)."""
    return Path(str(resources.files("models").joinpath("data", "eval", name)))


UNREAD = "Not read yet (blind)."


def unread(name: str) -> bool:
    """Whether a blind set is still unread: its .md's status says so (the writer's words, until the first reading).
    Tools that print rows of many sets leave such sets out (bench/eval_signature.py)."""
    md = data_path(name).with_suffix(".md")
    return md.is_file() and UNREAD in md.read_text(encoding="utf-8")


def default_eval_paths() -> list[Path]:
    return [data_path(name) for name in HELD_OUT_SETS]


def load_items(path: Path) -> list[Item]:
    items = []
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        obj = json.loads(line)
        if obj.get("lang") not in ("zh", "en") or obj.get("type") not in (
                "positive_no_keyword", "positive_keyword", "hard_negative", "benign"):
            raise ValueError(f"{path}:{n}: bad lang or type in {obj!r}")
        items.append(Item(obj["text"], obj["lang"], obj.get("label"), obj["type"], obj.get("topic")))
    return items


def keyword_detector(categories: Sequence[Category]) -> LexicalDetect:
    table = [(kw.lower(), c.name) for c in categories for lang in c.keywords for kw in c.keywords[lang]]

    def detect(text: str) -> Sequence[Finding]:
        low = text.lower()
        out = []
        for kw, cat in table:
            i = low.find(kw)
            if i >= 0:
                out.append(Finding(kind="word", category=cat, start=i, end=i + len(kw), rule=f"keyword.{cat}"))
        return out

    return detect


def scanner_detector() -> tuple[str, LexicalDetect] | None:
    """rules.scanner's builtin packs (`Scanner.load()`), when that module is importable."""
    try:
        from rules.scanner import Scanner  # lazy: models must not import rules at import time
    except ImportError:
        return None
    scanner = Scanner.load()

    def detect(text: str) -> Sequence[Finding]:
        return scanner.scan(text).findings

    return "rules.scanner builtin packs", detect


def measure(name: str, items: Sequence[Item], predict: Callable[[str], bool]) -> Metrics:
    tp = fp = tn = fn = 0
    t0 = time.perf_counter()
    for it in items:
        pred = predict(it.text)
        truth = it.label is not None
        if pred and truth:
            tp += 1
        elif pred:
            fp += 1
        elif truth:
            fn += 1
        else:
            tn += 1
    ms = (time.perf_counter() - t0) * 1000 / max(1, len(items))
    n = len(items)
    return Metrics(name, n, (tp + tn) / max(1, n), tp / max(1, tp + fp), tp / max(1, tp + fn),
                   fp / max(1, fp + tn), ms)


def evaluate(items: Sequence[Item], lexical: LexicalDetect, semantic: LexicalDetect,
             fuse: Callable[[str, Sequence[Finding]], Sequence[Finding]],
             judged: Callable[[str], bool]) -> list[Metrics]:
    """Rows: lexical alone, semantic alone, fused; `judged(category)` keeps only harmful categories."""

    def lex(text: str) -> bool:
        return any(judged(f.category) for f in lexical(text))

    def sem(text: str) -> bool:
        return bool(semantic(text))

    def fused(text: str) -> bool:
        findings = [*lexical(text), *semantic(text)]
        return any(judged(f.category) for f in fuse(text, findings))

    rows = []
    for lang in (None, "zh", "en"):
        subset = [it for it in items if lang is None or it.lang == lang]
        suffix = "" if lang is None else f" [{lang}]"
        rows += [measure("lexical" + suffix, subset, lex), measure("semantic" + suffix, subset, sem),
                 measure("fused" + suffix, subset, fused)]
    return rows


BY_GROUP_HEADER = f"{'fused, by group':<40} {'n':>5} {'flagged':>8}"


def by_group(items: Sequence[Item], preds: Sequence[bool]) -> list[str]:
    """The fused verdicts by group: positives by label (the share flagged is recall), hard negatives by topic
    and plain benign texts (the share flagged is their false-positive rate)."""
    groups: dict[str, list[bool]] = {}
    for it, pred in zip(items, preds, strict=True):
        if it.label is not None:
            key = f"positive {it.label}"
        elif it.type == "hard_negative":
            key = f"hard_negative {it.topic or '-'}"
        else:
            key = f"{it.type}"
        groups.setdefault(key, []).append(pred)
    return [f"{key:<40} {len(v):>5} {sum(v) / len(v):>8.1%}" for key, v in sorted(groups.items())]
