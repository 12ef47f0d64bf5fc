"""The semantic detector: a two-stage cascade over text windows, plugged into the scanner as a Detector.

Windows: the text is cut at sentence ends (。！？!?.; and newlines) and consecutive sentences are packed into
windows of at most WINDOW_TOKENS pieces; a sentence longer than that is cut by characters. Each sentence of
a packed window that holds several is judged alone as well (padding must not hide a harmful sentence:
`split_windows`). Each window carries its raw [start, end) offsets, which become the finding's offsets.

Stage 1 (every window): the gate over the window's piece unigrams and bigrams (models/gate.py); a window
scoring below its language's bound, made mostly of pieces the gate has seen, is benign, decided in 5-25 us.
Stage 2 (the rest): the encoder (e5-small's export.LAYERS layers) on the window and its heads; a category
fires when its score reaches the language's threshold.
Stage 2 exits early when the head on the pooled states after export.EXIT_LAYER layers finds the window
clearly benign (the bound is chosen on the training exemplars by cross-validation, train.py): the other
layers then never run. Reported scores are rescaled so that the threshold is 0.5 (monotone, in [0, 1]):
`score >= 0.5` means "the model says this window has the intent", whatever the language's raw threshold.
Near the spans a `Cue` marks (the attack heads: a text addressing an automated reader, rules/addressed.py; a text
naming self-harm in stock words, models/self_harm_words.py), the windows are judged at full depth and its categories
fire from the cue's level (at most 0.5), the score rescaled again so that the level reads 0.5.

`context_scores(text, start, end)` is the hook of rules.fusion: the stage-2 scores of the windows covering a
span (computed on demand even when stage 1 decided the window), so a keyword hit can be cleared in a
benign context. Results are cached per text (small LRU), so detect() followed by fusion on the same text
runs the encoder once. Thread-safe: the runtime is shared, the cache is behind a lock.
"""

from __future__ import annotations

import itertools
import re
import sys
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from models import build
from models.categories import Category, Exemplar, data_dir, language, load_categories
from models.errors import BuildError, ModelsError
from models.fold import fold as fold_text
from models.lru import Lru
from models.runtime import MAX_TOKENS, Runtime
from models.tokenizer import Tokenizer
from models.train import Heads
from rules.findings import Finding

KIND = "semantic"
WINDOW_TOKENS = MAX_TOKENS - 8  # room for "query:" and the specials
_SENTENCE_END = re.compile(r"[。！？!?；;\n]+|\.(?=\s)")
_CACHE_SIZE = 256
# Per language, a text of at most this many packed windows that no window of sends on is scored whole by the gate as
# well, and its packed windows go on when the whole does: the gate's bound keeps a share of its positives scored whole
# (each is one training row, `training_rows`), and a Chinese statement of 80-110 characters packs into two windows,
# neither of which carries enough of it. Session 37, over eval17-76 and 1,599 unseen plain texts (each text's gate
# decision with the rule and without it, and the texts it changes judged through the request guard both ways):
# the rule changed the attack gate's decision on 23 Chinese texts (8 positives) and 31 English ones (1 positive), and
# the product's verdict on 6 Chinese self-harm statements, all now flagged, and 2 English look-alikes ("my feet are
# dying"), flagged too; so English keeps its windows' scores. The builtin gate decided no text differently, and
# `bench/semantic.py`'s mix sent no more windows on. Every head set's gate reads it (builtin, attack, a user's): each is
# fitted on whole positives the same way.
WHOLE_PACKED: Mapping[str, int] = {"zh": 2}


def heads_path() -> Path:
    return data_dir() / "heads.json"


@dataclass(frozen=True, slots=True)
class Window:
    start: int
    end: int
    lang: str
    ids: tuple[int, ...]
    alone: bool = False  # a sentence of a packed window, judged on its own as well


@dataclass(slots=True)
class _WindowResult:
    window: Window
    first: float  # stage-1 gate score
    second: dict[str, float] | None  # stage-2 scores rescaled (0.5 = threshold), None if not run
    exited: bool = False  # stage 2 stopped after the early-exit graph (clearly benign)


def rescale(raw: float, threshold: float) -> float:
    """Map [0, threshold) to [0, 0.5) and [threshold, 1] to [0.5, 1], linearly."""
    if raw < threshold:
        return 0.5 * raw / threshold if threshold > 0 else 0.5
    return 0.5 + 0.5 * (raw - threshold) / (1.0 - threshold) if threshold < 1 else 1.0


# Below this many letters/digits/hanzi a text is not judged: a bare "ok" scored 0.57 for drugs (a one-word
# answer blocked), while the shortest text of the held-out evaluation set has 6.
MIN_JUDGED_CHARS = 4


# Categories in a detector's `needs_context` (the attack heads' self_harm): in a text holding more than CROWDED
# sentences judged alone, such a sentence fires the category only when some packed window of the text gives it at
# least SUPPORT (rescaled: 0.5 is the threshold). Every sentence of a long text is one more chance for an ordinary
# line, out of context, to score high: blind eval23 (session 15) was the first set with many long plain texts, and
# 4 of its 9 plain texts over 1,000 characters were flagged self_harm on one sentence alone (an e-mail's "I don't
# want it to sound like I'm blaming anyone." 0.98) in texts no packed window of which scored 0.1. On the development
# sets (eval14-15, eval17-23, dev23; the attack heads alone), long plain texts (500 characters or more) flagged fell
# from 6 to 1 of 103, and none of 620 self-harm positives was lost. Only for categories whose writer does not hide
# the intent: padding a harmful request with plain sentences is an evasion for the topics and injection (an exam
# fraud request packed among 60 plain sentences scores 0.99 alone, 0.055 in its packed window, and is caught only
# alone), but a person in distress does not pad, and a post that states a plan leans that way elsewhere too.
# SUPPORT was 0.1 until session 16's lexical stack (models/lexical.py) lifted the packed window around a worried
# line of a plain e-mail to 0.109 (tests/models/test_attack_heads.py), and round 7's exemplars to 0.229. Over the 406
# crowded texts of eval17-24, dev23 and bench/data/long_plain.jsonl (lexical stack, round 6), 0.1 through 0.3 caught
# the same 6 of 8 self-harm positives, and 0.2 flagged 3 of 197 long plain texts instead of 4; over the 463 of
# eval17-25, dev23 and long_plain (round 7), 0.2 through 0.4 caught the same 8 of 10 (0.45: 7), and 0.4 flagged 2
# long plain texts instead of 3. A packed window at 0.4 is a fifth below the decision level: the text leans that way.
# The rule for every text, not only crowded ones (session 17, round 7's heads, eleven development sets): a lone
# sentence of a short disposal question ("I don't want them sitting in the house with teenagers around." 0.75) fires
# where the whole question scores 0.29, but requiring SUPPORT 0.1-0.4 there cut self-harm hard negatives 3.2% ->
# 2.7-2.1% and cost 1.6-3.6 points of self-harm recall (14-31 of 860): short distress is carried by a sentence as
# often. Not kept.
# Session 22, session 20's attack heads on an AMD host (AVX-512 VNNI, no AMX): over the 783 crowded texts of eval17-39
# and long_plain, SUPPORT 0.3 through 0.6, or none at all (1.01), caught the same 16 of 17 self-harm positives and
# flagged the same 7 of 766 negatives: every one of them is decided by a packed window at or over 0.5, and no text has
# a packed window in [0.3, 0.5) under a lone sentence over 0.5. The landlord e-mail of tests/models/test_attack_heads.py
# does (0.43 there under 0.81), and was flagged at 0.4; it had passed on the hosts where 0.4 was chosen (0.33):
# rounding noise of the int8 encoder differs by host (bench/encoder_conformance.py). 0.5: in a crowded text, self-harm
# fires where a packed window decides it.
CROWDED = 8
SUPPORT = 0.5


def split_windows(tok: Tokenizer, text: str, *, sentences: bool = True, fold: bool = False) -> list[Window]:
    """The windows the detector judges: whole sentences packed up to WINDOW_TOKENS pieces; a longer
    sentence is cut by characters. With `sentences`, each sentence of a packed window that holds several
    (and at least MIN_JUDGED_CHARS letters or digits) is also a window of its own, after the packed ones:
    benign sentences packed around a harmful one dilute it. Left-one-development-set-out, one or two short
    plain sentences put before each harmful text of eval1-9 cut the gate's recall from 99.9% / 99.6% (zh /
    en) to 82% / 92% and 75% / 88%; the encoder, on eval7-9 (trained on), from 99.6% to 77-86% / 73-79%.
    Training cuts negative exemplars into their packed windows only (`training_rows`). With `fold`, each window's
    text is read through models/fold.py (evasive spellings undone) before it is tokenized; windows are cut, and
    keep their offsets, on the raw text."""
    pieces: list[tuple[int, int]] = []  # sentence spans
    pos = 0
    for m in _SENTENCE_END.finditer(text):
        if m.end() > pos:
            pieces.append((pos, m.end()))
        pos = m.end()
    if pos < len(text):
        pieces.append((pos, len(text)))
    spans = [(a, b) for a, b in pieces if text[a:b].strip()]
    read = fold_text if fold else _same
    encoded = tok.encode_batch([read(text[a:b]) for a, b in spans])
    out: list[Window] = []
    alone: list[Window] = []  # the sentences of packed windows that hold several
    cur: list[tuple[int, int, list[int]]] = []  # the sentences packed so far

    def flush() -> None:
        out.append(_window(text, cur[0][0], cur[-1][1], [i for _, _, ids in cur for i in ids]))
        if sentences and len(cur) > 1:
            alone.extend(_window(text, a, b, ids, alone=True) for a, b, ids in cur
                         if sum(map(str.isalnum, text[a:b])) >= MIN_JUDGED_CHARS)
        cur.clear()

    for (a, b), ids in zip(spans, encoded, strict=True):
        if len(ids) > WINDOW_TOKENS:
            if cur:
                flush()
            out += _split_long(tok, text, a, b, len(ids), read)
            continue
        if cur and sum(len(c[2]) for c in cur) + len(ids) > WINDOW_TOKENS:
            flush()
        cur.append((a, b, ids))
    if cur:
        flush()
    out += alone
    return out


def training_rows(tok: Tokenizer, examples: Sequence[Exemplar], *, fold: bool = False,
                  hard_negative_sentences: bool = False) -> tuple[list[Exemplar], list[int], list[list[int]]]:
    """The feature rows `train.train` takes: (exemplar per row, exemplar index per row, content ids per row).
    A negative exemplar longer than one window gives one row per window, as the detector will judge it (a
    long benign message was judged by windows its first 56 tokens never showed the heads); every other
    exemplar one row, its whole text (positives: which window holds the intent is not known). With
    `hard_negative_sentences`, a hard negative (a topic, no label) also gives a row for each sentence the detector
    judges alone (`split_windows`), after its packed rows: "I don't want to overdo it." ends a dose question and
    scores as intent on its own. `fold`: as the detector that will serve the heads reads its windows."""
    rows: list[Exemplar] = []
    groups: list[int] = []
    ids: list[list[int]] = []
    whole = tok.encode_batch([fold_text(e.text) if fold else e.text for e in examples])
    for i, (e, text_ids) in enumerate(zip(examples, whole, strict=True)):
        sentences = hard_negative_sentences and e.topic is not None
        wins = split_windows(tok, e.text, sentences=sentences, fold=fold) if e.label is None else []
        packed = [list(w.ids) for w in wins if not w.alone]
        parts = packed if len(packed) > 1 else [text_ids]
        parts += [list(w.ids) for w in wins if w.alone]  # only with `sentences`
        rows += [e] * len(parts)
        groups += [i] * len(parts)
        ids += parts
    return rows, groups, ids


@dataclass(frozen=True, slots=True)
class TrainingFeatures:
    """What `train.train` takes, for `warden models train` and the training tests alike."""

    rows: list[Exemplar]  # the exemplar of each row
    groups: list[int]  # its index among the exemplars
    ids: list[list[int]]  # content piece ids of each row: the gate's input
    encoder: npt.NDArray[np.float64]  # [rows, FEATURES]: second-stage features


def training_features(rt: Runtime, examples: Sequence[Exemplar]) -> TrainingFeatures:
    rows, groups, ids = training_rows(rt.tokenizer, examples)
    return TrainingFeatures(rows, groups, ids, rt.encode_ids(ids).astype(np.float64))


def _window(text: str, start: int, end: int, ids: list[int], *, alone: bool = False) -> Window:
    return Window(start, end, language(text[start:end]), tuple(ids), alone)


def _same(text: str) -> str:
    return text


def _split_long(tok: Tokenizer, text: str, a: int, b: int, n_ids: int, read: Callable[[str], str]) -> list[Window]:
    chars = max(1, (b - a) * WINDOW_TOKENS // n_ids)
    out = []
    for s in range(a, b, chars):
        e = min(b, s + chars)
        ids = tok.encode(read(text[s:e]))[:WINDOW_TOKENS]
        out.append(_window(text, s, e, ids))
    return out


@dataclass(frozen=True, slots=True)
class Cue:
    """A decision level of its own where `find` marks a text: the windows overlapping a marked span or the `reach`
    characters after it (the instruction follows its addressee) fire `categories` from `level` (rescaled, at most
    0.5), judged at the encoder's full depth whatever the gate or the early exit decided. Their findings' scores are
    rescaled once more so that `level` reads 0.5, the scanner's decision (models/attack_heads.py ADDRESSED_LEVEL)."""
    find: Callable[[str], Sequence[tuple[int, int]]]
    level: float
    categories: frozenset[str]
    reach: int = 200

    def __post_init__(self) -> None:
        if not 0.0 < self.level <= 0.5:
            raise ValueError(f"a cue's level must be in (0, 0.5], got {self.level}")


class SemanticDetector:
    """rules.findings.Detector: kind "semantic", category, raw window offsets, score, rule semantic.<category>."""

    def __init__(self, runtime: Runtime, heads: Heads, categories: Sequence[Category] = (), *,
                 needs_context: Collection[str] = (), fold: bool = False, cues: Sequence[Cue] = ()) -> None:
        if heads.build_key != runtime.built.directory.name:
            raise ModelsError(f"heads were trained for build {heads.build_key}, the model is "
                              f"{runtime.built.directory.name}: run `warden models train`")
        if heads.gate.vocab_size != runtime.tokenizer.vocab_size:
            raise ModelsError(f"the gate was trained for {heads.gate.vocab_size} pieces, the tokenizer has "
                              f"{runtime.tokenizer.vocab_size}: run `warden models train`")
        self._rt = runtime
        self.heads = heads
        self.categories = heads.categories
        self.levels = dict(heads.levels)
        self.needs_context = frozenset(needs_context) & set(heads.categories)
        self.fold = fold  # windows read through models/fold.py, as heads trained on folded text need
        self.cues = tuple(c for c in cues if c.categories & set(heads.categories))
        self.clear_below = heads.clear_below  # for rules.fusion.Fusion(clear_below=...); sets the floors
        self._lexical: dict[str, str] = {}
        for c in categories:
            for lex in c.lexical_categories:
                self._lexical.setdefault(lex, c.name)
        self._cache: Lru[str, list[_WindowResult]] = Lru(_CACHE_SIZE)
        self._lock = threading.Lock()  # a cached result's windows are completed by context_scores

    @property
    def clear_below(self) -> float:
        """Fusion's level: a keyword hit whose context scores under it is cleared (rules.fusion.Fusion)."""
        return self._clear_below

    @clear_below.setter
    def clear_below(self, level: float) -> None:
        # an evaluation may read fusion at another level (`warden models eval --clear-below`): the floors follow
        self._clear_below = level
        self._floors = {lang: self._floor_scores(th) for lang, th in self.heads.thresholds.items()}

    def _floor_scores(self, threshold: float) -> npt.NDArray[np.float64]:
        """Per category, the raw score (before rescaling with `threshold`) under which no decision reads it: the lowest
        of the scanner's level (0.5), fusion's `clear_below`, the cues' levels and, for `needs_context`, SUPPORT. Heads
        with a memory score a window that cannot reach these without the memory (`Heads.scores` floors)."""
        levels = []
        for c in self.categories:
            level = min(0.5, self.clear_below, *(cue.level for cue in self.cues if c in cue.categories),
                        *((SUPPORT,) if c in self.needs_context else ()))
            # rescale maps [0, threshold) linearly onto [0, 0.5); one part in a million below, for rounding
            levels.append(2.0 * level * threshold * (1.0 - 1e-6))
        return np.array(levels, dtype=np.float64)

    @property
    def name(self) -> str:
        return "semantic"

    @property
    def max_match_len(self) -> int | None:
        return None

    # -- windows ------------------------------------------------------------------------------------
    def windows(self, text: str) -> list[Window]:
        return split_windows(self._rt.tokenizer, text, fold=self.fold)

    # -- scoring ------------------------------------------------------------------------------------
    def _analyse(self, text: str) -> list[_WindowResult]:
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        results = self.first_stage(text)
        self._second([r for r, go in zip(results, self.passed(results), strict=True) if go])
        self._cache.put(text, results)
        return results

    def first_stage(self, text: str) -> list[_WindowResult]:
        """Stage 1 on every window of `text`: its gate score. Windows scoring below their language's bound
        need no second stage."""
        return [_WindowResult(w, self.heads.gate.score(w.ids), None) for w in self.windows(text)]

    def passed(self, results: Sequence[_WindowResult]) -> list[bool]:
        """Per window of one text (`first_stage`'s results), whether the gate sends it on to the encoder. A text
        that is one packed window (its lone sentences aside) is judged whole: a short one may have a bound of its
        own (gate.SHORT_TOKENS). A text of a few packed windows in one language (WHOLE_PACKED) that none of them
        sends on is scored whole as well, and all of them go on when it passes."""
        packed = [r for r in results if not r.window.alone]
        whole = packed[0] if len(packed) == 1 else None
        gate = self.heads.gate
        go = [gate.needs_encoder(r.window.ids, r.window.lang, score=r.first, whole=r is whole) for r in results]
        if any(go) or len({r.window.lang for r in packed}) != 1:
            return go
        lang = packed[0].window.lang
        # scored as its positives were fitted: whole (training_rows gives a positive one row, its whole text)
        if 1 < len(packed) <= WHOLE_PACKED.get(lang, 1) and gate.needs_encoder(
                [i for r in packed for i in r.window.ids], lang):
            return [not r.window.alone for r in results]
        return go

    def _second(self, todo: Sequence[_WindowResult]) -> None:
        """Stage 2, window by window: the early-exit graph, then, unless the early head finds the window
        clearly benign (below the language's `early_exit`), the rest of the encoder and the full heads.
        An exited window's scores are the early head's, scaled into [0, clear_below): below every decision
        level, so it neither fires nor keeps a keyword hit, as the full depth would have decided.
        A window another head set has already run through the whole encoder (Runtime.cached_late) is judged by
        the full heads at once: the early exit only saves encoder time, and there is none left to save."""
        h = self.heads
        for r in todo:
            done = self._rt.cached_late(r.window.ids)  # another head set ran the whole encoder on it
            if done is not None:
                self._full(r, done)
                continue
            early = self._rt.early(r.window.ids)
            if h.early is not None and h.early_features is not None and h.early_exit is not None:
                raw6 = h.early.scores(h.early_features.apply(early.exit_features[None, :]))[0]
                bound = h.early_exit[r.window.lang]
                if float(raw6.max()) < bound:
                    top = min(0.5, self.clear_below)
                    r.second = {c: top * float(v) / bound for c, v in zip(self.categories, raw6, strict=True)}
                    r.exited = True
                    continue
            self._full(r, self._rt.late(early))

    def _full(self, r: _WindowResult, features: npt.NDArray[np.float32]) -> None:
        """The full heads on a window's full encoder features."""
        h = self.heads
        row = h.scores(features[None, :], [r.window.ids], floors=self._floors[r.window.lang])[0]
        th = h.thresholds[r.window.lang]
        r.second = {c: rescale(float(v), th) for c, v in zip(self.categories, row, strict=True)}
        r.exited = False

    def detect(self, text: str) -> Sequence[Finding]:
        if len(list(itertools.islice(filter(str.isalnum, text), MIN_JUDGED_CHARS))) < MIN_JUDGED_CHARS:
            return []  # "ok", "好的": too little text to carry an intent; the model's score there is noise
        findings = []
        results = self._analyse(text)
        lowered = self._lowered(text, results)
        unsupported = self._unsupported(results)
        for i, r in enumerate(results):
            if r.second is None:
                continue
            for cat, score in r.second.items():
                level = lowered.get((i, cat), 0.5)
                if score >= level and not (r.window.alone and cat in unsupported):
                    # rescaled once more where a cue lowered the level, so that the level reads 0.5 (identity at 0.5)
                    findings.append(Finding(kind=KIND, category=cat, start=r.window.start, end=r.window.end,
                                            rule=f"semantic.{cat}", score=round(rescale(score, level), 4)))
        return findings

    def _lowered(self, text: str, results: Sequence[_WindowResult]) -> dict[tuple[int, str], float]:
        """The decision levels the cues lower, per (window index, category); the windows concerned are judged at full
        depth first (a window the gate or the early exit decided has no score to compare with a lower level, and
        at full depth it may reach 0.5 itself)."""
        out: dict[tuple[int, str], float] = {}
        for cue in self.cues:
            spans = cue.find(text)
            if not spans:
                continue
            near = [i for i, r in enumerate(results)
                    if any(r.window.start < end + cue.reach and start < r.window.end for start, end in spans)]
            with self._lock:
                shallow = [results[i] for i in near if results[i].second is None or results[i].exited]
            self._full_depth(shallow)
            for i in near:
                for cat in cue.categories & set(self.categories):
                    out[i, cat] = min(cue.level, out.get((i, cat), 0.5))
        return out

    def _full_depth(self, todo: Sequence[_WindowResult]) -> None:
        """Stage 2 without the early exit."""
        for r in todo:
            done = self._rt.cached_late(r.window.ids)
            self._full(r, done if done is not None else self._rt.late(self._rt.early(r.window.ids)))

    def _unsupported(self, results: Sequence[_WindowResult]) -> set[str]:
        """The categories of `needs_context` that a crowded text's sentences judged alone may not fire: more than
        CROWDED such sentences, and no packed window of the text gives the category SUPPORT."""
        if not self.needs_context or sum(r.window.alone for r in results) <= CROWDED:
            return set()
        packed = [r.second or {} for r in results if not r.window.alone]
        return {c for c in self.needs_context if max(s.get(c, 0.0) for s in packed) < SUPPORT}

    def scores(self, text: str) -> list[tuple[int, int, dict[str, float] | None]]:
        """Per window: raw offsets and the rescaled stage-2 scores (None when stage 1 decided benign)."""
        return [(r.window.start, r.window.end, r.second) for r in self._analyse(text)]

    # -- rules.fusion.ContextScorer -------------------------------------------------------------------
    def semantic_category(self, lexical_category: str) -> str | None:
        """The semantic category that judges the context of a word-list category, if any."""
        if lexical_category in self.categories:
            return lexical_category
        return self._lexical.get(lexical_category)

    def context_scores(self, text: str, start: int, end: int) -> Mapping[str, float]:
        """Max rescaled stage-2 score per category over the windows overlapping [start, end)."""
        results = self._analyse(text)
        hit = [r for r in results if r.window.start < end and start < r.window.end] or results
        with self._lock:
            missing = [r for r in hit if r.second is None]
        if missing:
            self._second(missing)
        out: dict[str, float] = {}
        for r in hit:
            for cat, s in (r.second or {}).items():
                out[cat] = max(out.get(cat, 0.0), s)
        return out


def load_default(*, build_if_missing: bool = True, threads: int = 1) -> SemanticDetector:
    """The detector over the cached build and the shipped heads; builds the model first when missing
    (saying so on stderr), or raises BuildError when it is missing and `build_if_missing` is False."""
    built = build.find()
    if built is None:
        if not build_if_missing:
            raise BuildError(f"semantic model not built in {build.cache_root()}: run `warden models build`")
        print("warden: building the semantic model on first use (a few seconds, cached in "
              f"{build.cache_root()})", file=sys.stderr, flush=True)
        built = build.ensure(progress=build.stderr_progress)
    path = heads_path()
    if not path.is_file():
        raise ModelsError(f"{path} missing: run `warden models train`")
    return SemanticDetector(Runtime(built, threads=threads), Heads.load(path), load_categories())
