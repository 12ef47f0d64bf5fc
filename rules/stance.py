"""The injection stance: a small lexical classifier that says how much a text reads like one *about* prompt injection
(a lesson, a notice, an incident write-up, a policy, a story that quotes the attack) rather than one that carries it
out. rules/discussed.py filters findings with it; models/stance.py trains it into rules/builtin/attack_stance.json
(`warden models train --stance`).

It reads a text's frame: NFKC, lower case, quotations replaced by a placeholder (what a text quotes is the attack, its
frame is what the writer says about it) and the attack's stock phrases taken out; then English words and word pairs
and Chinese characters and character pairs, TF-IDF with sublinear counts, L2-normalised, and a logistic regression.
Pure Python and one JSON file: no model runtime, no other rules module.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

FORMAT = 2

# Quotations: what the text quotes is the attack, its frame is what the writer says about it (the quote's inside is
# left out, a placeholder keeps its place).
_QUOTED = re.compile(r"“[^”]{0,600}”|\"[^\"\n]{0,600}\"|「[^」]{0,600}」|『[^』]{0,600}』|‘[^’]{0,600}’"
                     r"|'[^'\n]{15,600}'")
# The attack's stock phrases say nothing of the stance: attacks and write-ups about them both hold them, and the
# development sets' look-alikes hold them more often than their positives, which the stance must not learn.
_STOCK = re.compile(r"ignore\s+(?:all\s+)?(?:your\s+|the\s+)?(?:previous|prior|above)?\s?"
                    r"(?:instructions|directions|prompt|rules)|disregard|\bdan\b|developer\s+mode|jailbr\w*"
                    r"|system\s+prompt|ignore|忽略|开发者模式|越狱|系统提示|无视")
_WORD = re.compile(r"[a-z]{2,}")
_HAN = re.compile(r"[\u4e00-\u9fff]+")
_SPACE = re.compile(r"\s+")
_LATIN = re.compile(r"[A-Za-z]")


LANGUAGES = ("en", "zh")


def language(text: str) -> str:
    """"zh" when at least a fifth of the letters are Chinese characters, else "en" (as models.categories.language)."""
    if text.isascii():
        return "en"
    han = sum(map(len, _HAN.findall(text)))
    latin = len(_LATIN.findall(text))
    return "zh" if han and han * 5 >= han + latin else "en"


def frame(text: str) -> str:
    """What the stance reads: NFKC, lower case, quotations as a placeholder, the attack's stock phrases out."""
    t = unicodedata.normalize("NFKC", text).lower()
    t = _QUOTED.sub(" qq ", t)
    t = _STOCK.sub(" ", t)
    return _SPACE.sub(" ", t)


def grams(text: str) -> Counter[str]:
    """The n-grams of a text's frame (`ngrams`)."""
    return ngrams(frame(text))


def ngrams(read: str) -> Counter[str]:
    """The n-grams of a text as read (NFKC, lower case): English words and word pairs ("w:"), Chinese characters and
    character pairs ("c:", over the text's Chinese characters run together). rules/distress.py reads them too."""
    words = _WORD.findall(read)
    han = "".join(_HAN.findall(read))
    out: Counter[str] = Counter()
    out.update("w:" + w for w in words)
    out.update(f"w:{a} {b}" for a, b in itertools.pairwise(words))
    out.update("c:" + c for c in han)
    out.update("c:" + han[i:i + 2] for i in range(len(han) - 1))
    return out


def logistic(counts: Counter[str], features: Mapping[str, tuple[float, float]], bias: float,
             unseen_idf: float) -> float:
    """A fitted n-gram model's probability for a text's `counts`: TF-IDF with sublinear counts, L2 normalised (an
    n-gram not in `features` counts toward the norm at `unseen_idf` and weighs nothing), then the logistic."""
    if not counts:
        return 0.0
    z = 0.0
    norm = 0.0
    for g, n in counts.items():
        idf, weight = features.get(g, (unseen_idf, 0.0))
        v = (1.0 + math.log(n)) * idf
        norm += v * v
        z += v * weight
    z = bias + (z / math.sqrt(norm) if norm > 0 else 0.0)
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


def features_json(features: Mapping[str, tuple[float, float]]) -> dict[str, list[float]]:
    """A fitted model's n-grams as its file holds them, sorted and rounded (the same fit writes the same bytes)."""
    return {g: [round(i, 5), round(w, 6)] for g, (i, w) in sorted(features.items())}


def features_read(held: Mapping[str, Sequence[float]]) -> dict[str, tuple[float, float]]:
    """`features_json` read back: gram -> (idf, weight)."""
    return {str(g): (float(v[0]), float(v[1])) for g, v in held.items()}


@dataclass(frozen=True, slots=True)
class Stance:
    """A fitted stance: per n-gram its inverse document frequency and weight (TF-IDF with sublinear counts, L2
    normalised; an n-gram not in `features` counts toward the norm at `unseen_idf` and weighs nothing)."""

    features: Mapping[str, tuple[float, float]]  # gram -> (idf, weight)
    bias: float
    unseen_idf: float
    thresholds: Mapping[str, float]  # per language ("en", "zh": `language`): a probability at or over it reads as
    #                                  about the attack
    min_chars: int  # shorter texts are not judged

    def probability(self, text: str) -> float:
        """P(the text is about the attack, not the attack), from its frame."""
        return logistic(grams(text), self.features, self.bias, self.unseen_idf)

    def about_the_attack(self, text: str) -> bool:
        return len(text) >= self.min_chars and self.probability(text) >= self.thresholds[language(text)]

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "bias": round(self.bias, 6), "unseen_idf": round(self.unseen_idf, 5),
                           "thresholds": dict(sorted(self.thresholds.items())), "min_chars": self.min_chars,
                           "features": features_json(self.features)},
                          ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def load(cls, path: Path) -> Stance:
        obj = json.loads(path.read_text(encoding="utf-8"))
        if (not isinstance(obj, dict) or obj.get("format") != FORMAT or not isinstance(obj.get("features"), dict)
                or not isinstance(obj.get("thresholds"), dict) or set(obj["thresholds"]) != set(LANGUAGES)):
            raise ValueError(f"{path}: not a stance file of format {FORMAT} (`warden models train --stance`)")
        thresholds = {str(k): float(v) for k, v in obj["thresholds"].items()}
        return cls(features_read(obj["features"]), float(obj["bias"]), float(obj["unseen_idf"]), thresholds,
                   int(obj["min_chars"]))


def stance_path() -> Path:
    return Path(str(resources.files("rules").joinpath("builtin", "attack_stance.json")))


@functools.cache
def default_stance() -> Stance:
    """The builtin stance (rules/builtin/attack_stance.json), read once."""
    return Stance.load(stance_path())


__all__ = ["FORMAT", "LANGUAGES", "Stance", "default_stance", "features_json", "features_read", "frame", "grams",
           "language", "logistic", "ngrams", "stance_path"]
