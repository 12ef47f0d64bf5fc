"""Your own categories: heads trained from a user's category files, served beside the builtin heads.

`warden models train --categories DIR --out FILE` reads DIR/*.yaml (the format of models/data/categories,
models/categories.py) and trains, over the frozen encoder of the current build, a complete set of heads for
those categories alone: a first-stage gate, the second stage's heads and thresholds, the early exit (the
`train.train` recipe), with the package's plain benign texts (models/data/benign.yaml) as every category's
plain negatives. FILE is heads JSON (train.Heads) with a `user` section: the format marker, the categories'
lexical categories and source files, and SHA-256 digests of the training texts (`warden models eval --heads`
refuses to score its own exemplars).

Served (`warden serve --heads FILE`), the user heads run as a second SemanticDetector sharing the builtin
detector's runtime: categories are added, never replaced. A user category named like a builtin semantic
category is refused, both when training and when loading, since two heads answering for one name would make
neither's threshold mean anything; a builtin category's action is changed in rule files instead.

Why a gate of their own: the builtin gate was fitted to pass the builtin categories' texts and clears the rest
before any encoder runs; a user category's positives ("should I double my metformin dose") look benign to it,
so the builtin gate would decide them at stage 1. The user gate (the same recipe, `fit_gate`, on the user
positives against the user hard negatives and the benign texts, and against those negatives' sentences as the
detector also judges them alone, its bound at GATE_RECALL of the cross-validated positives) passes them; a window
goes on when either gate passes it.

Training is fast because the encoder is frozen: the benign texts' features are computed once per build and
cached beside it (`<model cache>/features/`), and the heads are fitted on the features' top RANK principal
directions (train.principal_basis). Deterministic: no randomness anywhere (Newton's method, fixed folds).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from models import build, gate, runtime, semantic, train
from models.categories import (
    LANGS,
    Category,
    Exemplar,
    data_dir,
    exemplars,
    load_benign,
    load_categories,
    with_exemplars,
)
from models.errors import ModelsError
from models.gate import Gate
from models.runtime import Runtime
from models.tokenizer import Tokenizer
from models.train import Heads

FORMAT = "warden-user-heads/1"
# The false-positive target of the user heads' thresholds (train.TARGET_FPR, 0.04, is the builtin heads'). With
# few positives, the plain benign texts score far below them and 0.04 put the raw thresholds at 0.020 / 0.009
# (zh / en): on the two test categories, two of 20 held-out positives then fired both categories, and 28 of
# 1,120 builtin exemplars (drugs, weapons, ...) fired one; at 0.02 (0.044 / 0.175): none and 15, one
# medical positive fewer (19 of 20 found; tests/data/user_categories_eval.jsonl). 0.01 changed little more.
TARGET_FPR = 0.02
# The user gate's bound keeps this share of the cross-validated positives. With 20 positives per language (the
# test categories), cross-validated: 90% kept let 9% / 8.5% (zh / en) of the benign rows on to the encoder, 95%
# 12% / 8.6%, 98% (the builtin gate's) 30% / 50%. A few dozen positives cannot place a 98% bound; more
# positives move it. Adding the builtin categories' exemplars as negatives (tokenized only) passed fewer of
# the builtin topics' texts but more benign ones (15% / 17% at 95%): not done.
GATE_RECALL = 0.95
# Principal directions the heads are fitted on (of runtime.FEATURES = 1536; train.principal_basis). On the two
# test categories (tests/data/user_categories, 140 exemplars and the 2,304 benign texts), fitting took 600 s on
# every dimension, 59 s at 256, 25 s at 128, 15 s at 64 (a loaded two-core box), with the same verdicts on
# tests/data/user_categories_eval.jsonl (37 of 38 at every rank).
RANK = 128
FEATURE_CACHE_VERSION = "1"
Progress = Callable[[str], None]


class UserHeadsError(ModelsError):
    """A user heads file cannot be used; the message names the file."""

    def __init__(self, path: Path | str, message: str) -> None:
        self.path = str(path)
        super().__init__(f"{path}: {message}")


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class UserHeads:
    heads: Heads
    lexical: Mapping[str, tuple[str, ...]]  # category -> the word-list categories it judges (fusion)
    sources: Mapping[str, str]  # category -> the file it came from (its name)
    exemplar_digests: frozenset[str]  # text_digest of every training text (positives, hard negatives, benign)
    sha256: str = ""  # of the file it was loaded from
    fold: bool = False  # trained on text read through models/fold.py: served the same way

    @property
    def categories(self) -> tuple[str, ...]:
        return self.heads.categories

    def to_json(self) -> str:
        obj = json.loads(self.heads.to_json())
        obj["user"] = {"format": FORMAT, "lexical_categories": {k: list(v) for k, v in self.lexical.items()},
                       "sources": dict(self.sources), "exemplars": sorted(self.exemplar_digests)}
        if self.fold:  # absent when off: files written before it stay byte for byte what they were
            obj["user"]["fold"] = True
        return json.dumps(obj, sort_keys=True, separators=(",", ":")) + "\n"

    def category_values(self) -> list[Category]:
        """The categories as SemanticDetector takes them (for the lexical map: exemplars are not kept)."""
        empty = {lang: () for lang in LANGS}
        return [Category(c, self.heads.levels[c], "", self.lexical.get(c, (c,)), empty, empty, empty,
                         self.sources.get(c, "")) for c in self.categories]


# -- training ------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class TrainReport:
    categories: tuple[str, ...]
    exemplars: int  # user exemplars (positives and hard negatives)
    benign: int  # plain benign exemplars
    benign_cached: bool  # their features came from the cache
    seconds_encode: float
    seconds_fit: float
    positives_to_encoder: float  # share of the user positives the user gate passes on, cross-validated
    benign_to_encoder: float  # share of the benign exemplars' windows it passes on, cross-validated


def builtin_names(*, attack: bool = True) -> set[str]:
    """The builtin semantic categories: the package's category files and the shipped heads, and with `attack`
    those of the attack head set too (models/attack_heads.py)."""
    dirs, heads = [data_dir() / "categories"], [semantic.heads_path()]
    if attack:
        dirs.append(data_dir() / "attack_categories")
        heads.append(data_dir() / "attack_heads.json")
    # the `category:` line of each file: parsing the builtin files whole (thousands of exemplars) took seconds
    names = {m.group(1) for d in dirs for p in sorted(d.glob("*.yaml"))
             for m in [re.search(r"^category:\s*['\"]?(\w+)", p.read_text("utf-8"), re.MULTILINE)] if m}
    for path in heads:
        if path.is_file():
            names.update(json.loads(path.read_text("utf-8")).get("categories", []))
    return names


def _atomic_save(path: Path, array: npt.NDArray[np.float32]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.save(f, array)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def encode_cached(rt: Runtime, ids: Sequence[Sequence[int]], *, cache_dir: Path | None) -> tuple[
        npt.NDArray[np.float32], bool]:
    """Encoder features of `ids`, from `cache_dir` when the same rows were encoded by the same build."""
    if cache_dir is None:
        return rt.encode_ids(ids), False
    build_key = rt.built.directory.name
    key = hashlib.sha256(json.dumps([FEATURE_CACHE_VERSION, build_key, [list(r) for r in ids]])
                         .encode()).hexdigest()[:24]
    path = cache_dir / f"{build_key}-{key}.npy"
    if path.is_file():
        try:
            cached = np.load(path, allow_pickle=False)
            if cached.shape == (len(ids), runtime.FEATURES):
                return cached.astype(np.float32), True
        except (OSError, ValueError):
            pass  # a torn or foreign file: encode again and replace it
    out = rt.encode_ids(ids)
    _atomic_save(path, out)
    for stale in cache_dir.glob(f"{build_key}-*.npy"):  # one set per build: the benign texts changed
        if stale != path:
            stale.unlink(missing_ok=True)
    return out, False


def feature_cache_dir() -> Path:
    return build.cache_root() / "features"


def train_user(directory: Path, rt: Runtime, *, target_fpr: float = TARGET_FPR, gate_recall: float = GATE_RECALL,
               short_gate_recall: float | None = None,
               rank: int = RANK, memory_rank: int | None = None, memory_beta: float = 0.0,
               reserved: set[str] | None = None, cache_dir: Path | None = None,
               plain: Mapping[str, Sequence[str]] | None = None, fold: bool = False, lexical: bool = False,
               hard_negative_sentences: bool = False, more: Sequence[Exemplar] = (),
               gate_more: Sequence[Exemplar] | None = None,
               progress: Progress | None = None) -> tuple[UserHeads, TrainReport]:
    """Heads for the categories in `directory` (CategoryFileError on a bad file; UserHeadsError on a name in
    `reserved`, by default the builtin categories). `memory_rank`, `memory_beta`: a nearest-exemplar memory
    (train.train; the attack heads keep one, models/attack_heads.py). `plain`: the plain negatives of every
    category, {lang: texts}; by default the package's benign.yaml. `fold`: train on text read through
    models/fold.py (the file says so, and its detector reads windows the same way). `lexical`: stack the heads with
    per-category gram tables (models/lexical.py; the attack heads do). `hard_negative_sentences`: each hard negative's
    lone sentences as rows of its exemplar too (semantic.training_rows; the attack heads do). `more`: labelled texts
    trained on beside the files' (categories.with_exemplars; the attack heads' read development sets).
    `short_gate_recall`: the gate's bound for short texts judged whole (fit_gate; the attack heads have one).
    `gate_more`: labelled texts the gate is fitted on instead of `more` (the heads still train on `more`): what the
    gate passes on is what the encoder costs, so the attack gate keeps the sets it was fitted on while the heads learn
    from every read set (models/attack_heads.py GATE_SETS). None: the gate fits the heads' rows."""
    cats = load_categories(directory)
    reserved = builtin_names() if reserved is None else reserved
    for c in cats:
        if c.name in reserved:
            raise UserHeadsError(c.source, f"category {c.name!r} is a builtin category: user categories add to "
                                 "the builtin ones and may not replace them; pick another name (a builtin "
                                 "category's action is set in rule files)")
    own_cats, own_benign = cats, load_benign() if plain is None else plain
    cats, benign = with_exemplars(own_cats, own_benign, more)
    examples = exemplars(cats, benign)
    trained = _TrainingRows.of(rt.tokenizer, examples, fold=fold, hard_negative_sentences=hard_negative_sentences)
    rows, ids = trained.rows, trained.ids
    is_benign = np.array([e.topic is None for e in rows])
    n_user = int((~is_benign).sum())  # exemplars() puts the benign texts last
    if progress:
        progress(f"encoding {n_user} rows of {len(cats)} categories (benign rows: {len(rows) - n_user})")
    t0 = time.perf_counter()
    user_x = rt.encode_ids(ids[:n_user])
    benign_x, cached = encode_cached(rt, ids[n_user:], cache_dir=cache_dir)
    encoder = np.vstack([user_x, benign_x]).astype(np.float64)
    t1 = time.perf_counter()
    heads = train.train(cats, rows, ids, encoder, vocab_size=rt.tokenizer.vocab_size,
                        early_raw=encoder[:, runtime.EARLY_COLUMNS], build_key=rt.built.directory.name,
                        groups=trained.groups, target_fpr=target_fpr, rank=rank, memory_rank=memory_rank,
                        memory_beta=memory_beta, lexical=lexical, extra_negatives=trained.extra_ids,
                        extra_folds=trained.extra_folds)
    # the gate's own rows, built as a training on `gate_more` would build them (its folds too)
    gated = trained if gate_more is None else _TrainingRows.of(
        rt.tokenizer, exemplars(*with_exemplars(own_cats, own_benign, gate_more)), fold=fold,
        hard_negative_sentences=hard_negative_sentences)
    user_gate, cv_gate = fit_gate(gated.ids + gated.extra_ids,
                                  [e.label is not None for e in gated.rows] + [False] * len(gated.extra_ids),
                                  [e.lang for e in gated.rows] + gated.extra_langs, gated.folds + gated.extra_folds,
                                  rt.tokenizer.vocab_size, recall=gate_recall, short_recall=short_gate_recall)
    heads = dataclasses.replace(heads, gate=user_gate)
    t2 = time.perf_counter()
    first = heads.gate
    # what the gate passes on, over the rows it was fitted on
    pos = [i for i, e in enumerate(gated.rows) if e.label is not None]
    ben = [i for i, e in enumerate(gated.rows) if e.topic is None]
    rows_of = Counter(gated.groups)
    whole = [rows_of[g] == 1 for g in gated.groups]  # an exemplar judged as one window (every positive is)
    report = TrainReport(
        categories=heads.categories, exemplars=sum(1 for e in examples if e.topic is not None),
        benign=sum(1 for e in examples if e.topic is None), benign_cached=cached,
        seconds_encode=t1 - t0, seconds_fit=t2 - t1,
        positives_to_encoder=_share([_passes(first, gated.ids[i], gated.rows[i].lang, cv_gate[i], whole[i])
                                     for i in pos]),
        benign_to_encoder=_share([_passes(first, gated.ids[i], gated.rows[i].lang, cv_gate[i], whole[i])
                                  for i in ben]),
    )
    user = UserHeads(heads, {c.name: c.lexical_categories for c in cats},
                     {c.name: Path(c.source).name for c in cats}, frozenset(text_digest(e.text) for e in examples),
                     fold=fold)
    return user, report


@dataclasses.dataclass(frozen=True, slots=True)
class _TrainingRows:
    """The rows of one training: whole texts and packed windows (semantic.training_rows) with their exemplar groups
    and folds, and the gate-only sentence rows (`sentence_rows`)."""

    rows: list[Exemplar]
    groups: list[int]
    ids: list[list[int]]
    folds: list[int]
    extra_ids: list[list[int]]
    extra_langs: list[str]
    extra_folds: list[int]

    @classmethod
    def of(cls, tok: Tokenizer, examples: Sequence[Exemplar], *, fold: bool,
           hard_negative_sentences: bool) -> _TrainingRows:
        rows, groups, ids = semantic.training_rows(tok, examples, fold=fold,
                                                   hard_negative_sentences=hard_negative_sentences)
        folds = list(train.folds_of(len(rows), np.asarray(groups, dtype=np.int64)))
        extra_ids, extra_langs, extra_folds = sentence_rows(tok, examples, groups, folds, fold=fold)
        return cls(list(rows), list(groups), list(ids), folds, extra_ids, extra_langs, extra_folds)


def sentence_rows(tok: Tokenizer, examples: Sequence[Exemplar], groups: Sequence[int], folds: Sequence[int], *,
                  fold: bool = False) -> tuple[list[list[int]], list[str], list[int]]:
    """Gate-only negative rows: the sentences the detector also judges alone (semantic.split_windows) in every
    negative exemplar, each in its exemplar's fold; with their languages and folds.

    The heads are trained on whole texts and packed windows, but the gate judges each sentence of a packed window
    on its own too, and a short sentence out of context ("Nobody showed and nobody called.") scores higher than
    the text it came from. Fitted on those sentences as well, the attack gate (session 13, the development sets'
    plain texts over 300 characters, never trained on) sent 10 of 103 long plain prompts on to the encoder instead
    of 17, short ones 1.0% instead of 1.3%, and passed the same development positives (812 of 821 against 812)."""
    fold_of = dict(zip(groups, folds, strict=True))
    ids: list[list[int]] = []
    langs: list[str] = []
    out_folds: list[int] = []
    for i, e in enumerate(examples):
        if e.label is not None or i not in fold_of:
            continue
        alone = [w for w in semantic.split_windows(tok, e.text, fold=fold) if w.alone]
        ids += [list(w.ids) for w in alone]
        langs += [e.lang] * len(alone)
        out_folds += [fold_of[i]] * len(alone)
    return ids, langs, out_folds


def fit_gate(ids: Sequence[Sequence[int]], positive: Sequence[bool], langs: Sequence[str], folds: Sequence[int],
             vocab_size: int, *, recall: float = GATE_RECALL, short_recall: float | None = None,
             alpha: float = gate.ALPHA) -> tuple[Gate, npt.NDArray[np.float64]]:
    """The user gate and each row's cross-validated score: models/gate.py's naive-Bayes ratios with each class
    smoothed in proportion to its size (positives by `alpha`), its bound per language at `recall` of the
    cross-validated positives (unlike train.threshold_for_recall, not clipped at 0: with a few dozen positives
    the bound is negative, and clipped it kept 81% of them).

    With the gate's own smoothing (the same `alpha` for both classes) a few dozen positives against
    thousands of benign rows make every rare gram look harmful: a gram seen once, among the negatives only,
    scored log((0+a)/n_pos) - log((1+a)/n_neg) = +2.5 with 80 positives and 2,856 negatives, and the user gate
    passed 99% of the benign texts on to the encoder. Smoothed in proportion, a gram neither class has seen
    scores 0 whatever the class sizes, one seen only among the negatives scores below 0.

    `short_recall`: a bound of its own per language for short texts judged whole (gate.SHORT_TOKENS pieces or
    fewer), at that share of the cross-validated short positives, never above the language's bound. A positive is
    always one row, its whole text (semantic.training_rows), so its row is what the detector judges whole."""
    flat = gate._Rows.of(ids, vocab_size)  # the gate's own row layout
    pos = np.asarray(positive, dtype=bool)
    fold = np.asarray(folds, dtype=np.int64)
    lang = np.asarray(langs)
    cv = np.zeros(len(ids))
    for k in np.unique(fold):
        held = fold == k
        grams, ratios = gate.balanced_ratios(flat, pos, ~held, alpha)
        cv[held] = gate._scores(flat, grams, ratios, held)[held]
    passes = {g: _recall_bound(cv[pos & (lang == g)], recall) for g in LANGS}
    short_passes: dict[str, float] = {}
    if short_recall is not None:
        short = np.array([len(r) <= gate.SHORT_TOKENS for r in ids], dtype=bool)
        short_passes = {g: min(passes[g], _recall_bound(cv[pos & short & (lang == g)], short_recall))
                        for g in LANGS if (pos & short & (lang == g)).any()}
    grams, ratios = gate.balanced_ratios(flat, pos, np.ones(len(ids), dtype=bool), alpha)
    return Gate(vocab_size, grams, ratios, passes, short_passes), cv


def _recall_bound(scores: npt.NDArray[np.float64], recall: float) -> float:
    s = np.sort(scores)
    return float(s[int(np.floor((1.0 - recall) * len(s)))] - 1e-6) if len(s) else 0.0


def _passes(g: Gate, ids: Sequence[int], lang: str, cv_score: float, whole: bool) -> bool:
    """`Gate.needs_encoder` with the row's cross-validated score (the gate fitted without its fold)."""
    return g.needs_encoder(ids, lang, score=cv_score, whole=whole)


def _share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0


# -- loading -------------------------------------------------------------------------------------------------

def _need(path: Path, ok: bool, message: str) -> None:
    if not ok:
        raise UserHeadsError(path, message)


def load(path: Path, rt: Runtime | None = None, *, reserved: Collection[str] = ()) -> UserHeads:
    """Read and validate a user heads file: its format, shapes, and (with `rt`) that it was trained for this
    build's encoder and tokenizer; `reserved`: names it may not use (the builtin detector's categories)."""
    try:
        data = path.read_bytes()
        obj = json.loads(data)
    except (OSError, ValueError) as exc:
        raise UserHeadsError(path, f"cannot read a heads file: {exc}") from None
    _need(path, isinstance(obj, dict), "expected a JSON object (a file written by `warden models train "
          "--categories DIR --out FILE`)")
    user = obj.get("user")
    _need(path, isinstance(user, dict) and user.get("format") == FORMAT,
          f"not a user heads file (no user.format {FORMAT!r}): write one with `warden models train --categories "
          "DIR --out FILE`; the package's own heads.json is loaded without --heads")
    _need(path, obj.get("version") in train.READABLE_VERSIONS,
          f"heads version {obj.get('version')!r}, this Warden reads "
          f"{' and '.join(map(str, train.READABLE_VERSIONS))}: retrain with "
          "`warden models train --categories DIR --out FILE`")
    cats = obj.get("categories")
    _need(path, isinstance(cats, list) and bool(cats) and all(isinstance(c, str) and c.isidentifier() for c in cats)
          and len(set(cats)) == len(cats), "categories: expected a non-empty list of distinct identifiers")
    levels = obj.get("levels")
    _need(path, isinstance(levels, dict) and set(levels) == set(cats) and all(v in (1, 2, 3) for v in levels.values()),
          "levels: expected a level 1, 2 or 3 for every category")
    try:
        heads = Heads.load(path)
        width = sum(heads.features.widths)
        shapes_ok = (heads.encoder.intent.shape == (width + 1,)
                     and heads.encoder.topics.shape == (len(cats), width + 1)
                     and heads.encoder.intents.shape == (len(cats), width + 1)
                     and set(heads.thresholds) == set(LANGS) and set(heads.gate.passes) == set(LANGS)
                     and len(heads.gate.grams) == len(heads.gate.ratios))
        if heads.early is not None:
            assert heads.early_features is not None and heads.early_exit is not None
            ew = sum(heads.early_features.widths)
            shapes_ok = (shapes_ok and heads.early.topics.shape == (len(cats), ew + 1)
                         and set(heads.early_exit) == set(LANGS))
        if heads.memory is not None:
            shapes_ok = (shapes_ok and heads.memory.basis.shape[0] == width
                         and heads.memory.n_categories == len(cats))
        if heads.lexical is not None:
            shapes_ok = (shapes_ok and heads.lexical.n_categories == len(cats)
                         and heads.lexical.vocab_size == heads.gate.vocab_size)
    except (KeyError, TypeError, ValueError, AssertionError, ModelsError) as exc:
        raise UserHeadsError(path, f"malformed heads ({type(exc).__name__}: {exc})") from None
    _need(path, shapes_ok, "malformed heads: weights do not match the categories or the feature widths")
    taken = sorted(set(cats) & set(reserved))
    _need(path, not taken, f"categories {taken} are builtin categories: user categories add to the builtin ones "
          "and may not replace them (rename them and retrain)")
    if rt is not None:
        _need(path, heads.build_key == rt.built.directory.name,
              f"trained for encoder build {heads.build_key}, the built encoder is {rt.built.directory.name}: "
              "retrain with `warden models train --categories DIR --out FILE`")
        _need(path, heads.gate.vocab_size == rt.tokenizer.vocab_size and width == runtime.FEATURES,
              "trained for another tokenizer or encoder width: retrain it")
    lexical = user.get("lexical_categories", {})
    sources = user.get("sources", {})
    digests = user.get("exemplars", [])
    _need(path, isinstance(lexical, dict) and all(isinstance(v, list) and all(isinstance(x, str) for x in v)
                                                  for v in lexical.values()), "user.lexical_categories: malformed")
    _need(path, isinstance(sources, dict) and isinstance(digests, list), "user: malformed sources or exemplars")
    fold = user.get("fold", False)
    _need(path, isinstance(fold, bool), "user.fold: expected true or false")
    return UserHeads(heads, {str(k): tuple(v) for k, v in lexical.items()},
                     {str(k): str(v) for k, v in sources.items()}, frozenset(str(d) for d in digests),
                     hashlib.sha256(data).hexdigest(), fold)


class UserSemanticDetector(semantic.SemanticDetector):
    """The semantic detector over a user's heads. `default_levels`: the category files' levels, the policy of
    a category no rule file gives one (rules.scanner reads it)."""

    def __init__(self, rt: Runtime, user: UserHeads, path: Path, *, needs_context: Collection[str] = (),
                 cues: Sequence[semantic.Cue] = ()) -> None:
        super().__init__(rt, user.heads, user.category_values(), needs_context=needs_context, fold=user.fold,
                         cues=cues)
        self.user = user
        self.path = path
        self.default_levels: Mapping[str, int] = dict(user.heads.levels)

    @property
    def name(self) -> str:
        # in the scanner's policy version: another heads file is another policy
        return f"semantic-user-{self.user.sha256[:16]}"


def load_detector(path: Path, builtin: semantic.SemanticDetector,
                  others: Sequence[semantic.SemanticDetector] = ()) -> UserSemanticDetector:
    """The user heads at `path` as a detector sharing the builtin detector's runtime; `others`: the other head
    sets served (the attack heads), whose categories are reserved as well."""
    rt: Runtime = builtin._rt  # one runtime (sessions, tokenizer) per process
    user = load(path, rt, reserved={*builtin.categories, *(c for d in others for c in d.categories)})
    return UserSemanticDetector(rt, user, path)


def stderr_progress(message: str) -> None:
    print(f"warden models: {message}", file=sys.stderr, flush=True)


def needs_encoder(detector: semantic.SemanticDetector, text: str) -> bool:
    """Whether any window of `text` passes `detector`'s first stage (the share `warden models eval --heads`
    reports for the user gate)."""
    return any(detector.passed(detector.first_stage(text)))


__all__ = ["FORMAT", "TrainReport", "UserHeads", "UserHeadsError", "UserSemanticDetector", "load",
           "load_detector", "train_user"]
