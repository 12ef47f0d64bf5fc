"""Training of the distress model (rules/distress.py): does a short Chinese text state self-harm intent or means?

Rows, Chinese only (rules.stance.language: the model reads nothing else):
- label 1: the self-harm positives of the read development sets (DISTRESS_SETS) and the self-harm exemplars
  (models/data/attack_categories/self_harm.yaml);
- label 0: every other row of those sets (injection positives, look-alikes, plain chat); the self-harm exemplars'
  hard negatives; the attack heads' plain texts and long first-person writing (benign.yaml's everyday requests,
  documents.yaml, hard_times.yaml, life_writing.yaml); the topic categories' exemplars (models/data/categories: a
  request for pills "to take myself" at a party is the drugs head's, not this).
Features: rules.distress.grams (Chinese characters and character pairs), TF-IDF with sublinear counts and smoothed
idf, rows L2-normalised; logistic regression, classes weighted to balance (models.stance.fit_ngrams: the same rows
give the same file).

Readings: see THRESHOLD.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from models import evaluate
from models.categories import LANGS, data_dir, load_benign, load_category
from models.stance import STEPS, C, fit_ngrams
from rules.distress import CATEGORY, Distress, grams
from rules.stance import language

DISTRESS_SETS = tuple(f"semantic_eval{n}.jsonl" for n in range(17, 98))
# Chosen on the block cross-validation of session 38 (`python -m bench.eval_distress --zh 0.65,0.7,0.75,0.8 --min-df
# N`: blocks eval61-67, 68-74, 75-79, each read with a model fitted on every other development set; the sets after
# the attack heads' training sets). The product's verdict on the blocks' texts of at most 120 characters, before ->
# after (the same at MIN_DF 2 and 5 but one look-alike at 0.75):
#
#     level  self-harm positives  self-harm look-alikes  injection +/-, plain (2,069)
#     0.65   719 -> 747 of 763    3 -> 7 of 545          unchanged
#     0.7    719 -> 743           3 -> 5                 unchanged
#     0.75   719 -> 740           3 -> 4                 unchanged
#     0.8    719 -> 736           3 -> 3                 unchanged
#
# The two look-alikes at 0.7: a squirrel that frightened someone half to death (吓死我了) and a decluttering plan
# (东西都送人, 断舍离). Fitted on every set, the model finds no text of bench/data/long_plain.jsonl, decode_eval.jsonl
# or every tenth pii_corpus.jsonl text (1,869) at 0.65-0.8, and none of the 4,420 rows of the topic development sets
# eval1-11, 14 and 15 (`--topic`; never trained on here).
THRESHOLD = 0.7
MAX_CHARS = 120
# n-grams seen in fewer rows are left out of the file: at 5, 52,561 n-grams instead of 124,159 at 2 over eval17-79
# (the file and the process's memory less than half), the same reading at 0.7
MIN_DF = 5


@dataclass(frozen=True, slots=True)
class Row:
    text: str
    states: bool  # a self-harm positive
    group: str  # the development set it came from, or the exemplars' file


def development_rows(sets: Iterable[str] = DISTRESS_SETS) -> list[Row]:
    """Every Chinese row of the read development sets: its self-harm positives 1, the rest 0."""
    return [Row(item.text, item.label == CATEGORY, name)
            for name in sets for item in evaluate.load_items(evaluate.data_path(name)) if language(item.text) == "zh"]


def exemplar_rows() -> list[Row]:
    """The Chinese self-harm exemplars, attack heads' plain texts and topic categories' exemplars."""
    from models.attack_heads import categories_dir, documents_path, hard_times_path, life_writing_path

    out: list[Row] = []
    own = load_category(categories_dir() / f"{CATEGORY}.yaml")
    for lang in LANGS:
        out += [Row(t, True, "self_harm.yaml") for t in own.positives.get(lang, ())]
        out += [Row(t, False, "self_harm.yaml") for t in own.hard_negatives.get(lang, ())]
    for path in (None, documents_path(), hard_times_path(), life_writing_path()):
        for lang, texts in load_benign(path).items():
            out += [Row(t, False, f"plain.{lang}") for t in texts]
    for path in sorted((data_dir() / "categories").glob("*.yaml")):
        cat = load_category(path)
        for lang in LANGS:
            out += [Row(t, False, path.name) for t in (*cat.positives.get(lang, ()), *cat.hard_negatives.get(lang, ()))]
    return [r for r in out if language(r.text) == "zh"]


def fit(rows: Sequence[Row], *, threshold: float = THRESHOLD, max_chars: int = MAX_CHARS, c: float = C,
        min_df: int = MIN_DF, steps: int = STEPS) -> Distress:
    """A model fitted on `rows` (at least one of each label)."""
    if not any(r.states for r in rows) or all(r.states for r in rows):
        raise ValueError("the distress model needs rows of both labels")
    features, bias, unseen_idf = fit_ngrams([grams(r.text) for r in rows], [r.states for r in rows], c=c,
                                            min_df=min_df, steps=steps)
    return Distress(features, bias, unseen_idf, threshold, max_chars)


def train(out: Path, *, hold_out: Sequence[str] = ()) -> Distress:
    """Fit the model on DISTRESS_SETS (but `hold_out`) and the exemplars, and write it to `out`."""
    left = {h if h.endswith(".jsonl") else f"{h}.jsonl" for h in hold_out}
    unknown = left - set(DISTRESS_SETS)
    if unknown:
        raise ValueError(f"not a distress development set: {', '.join(sorted(unknown))} "
                         "(models.distress.DISTRESS_SETS)")
    model = fit([*development_rows(n for n in DISTRESS_SETS if n not in left), *exemplar_rows()])
    out.write_text(model.to_json() + "\n", encoding="utf-8")
    return model


__all__ = ["DISTRESS_SETS", "MAX_CHARS", "MIN_DF", "THRESHOLD", "Row", "development_rows", "exemplar_rows", "fit",
           "train"]
