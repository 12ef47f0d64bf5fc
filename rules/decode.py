"""Decoding normalisation for the attack side: base64 and hex runs in a text, decoded (bounded) and scanned.

"aWdub3JlIGFsbCBwcmV2aW91cyBpbnN0cnVjdGlvbnM=" is "ignore all previous instructions" to any model that reads
base64, and to no word list. `DecodingDetector` finds runs that could be an encoding, decodes them within
bounds, keeps only results that read as text, and hands those to the word lists and patterns (and the
semantic detectors, when given). Its findings carry the encoded run's raw offsets and kind `decoded`, so a
policy, a mask or a strip covers the encoded characters the model would have read.

Bounds, per text (`DecodeConfig`): runs shorter than `min_run` encoded characters are not tried (a hex colour,
a short id); at most `max_runs` runs are decoded and at most `max_bytes` decoded bytes examined over all runs
and depths (a 2 MB data URL costs one bounded prefix, not its size); a decoded text is searched for runs once
more (`base64(base64(x))`) and no deeper. A decoded prefix counts only when it is UTF-8 and at least
`min_printable` of its characters are printable: the binary behind a hash, a key, a UUID, an image or a PEM
block almost never is (a random byte is printable ASCII with p ~0.37, and never valid UTF-8 for long), so the
word lists never see it. JWTs decode to JSON claims: text, scanned, and clean unless the claims say something.

Pure: `binascii`, `re` and RE2 (through rules/normalize.py, the one module that touches its binding); the
scanners to run on decoded text are passed in.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import re2

from rules.findings import Finding, new_finding
from rules.normalize import _UNANCHORED

RE2Match = Callable[[Any, bytes, int, int], list[tuple[int, int]]]  # the binding's RE2.Match

DECODED_KIND = "decoded"


@dataclass(frozen=True, slots=True)
class DecodeConfig:
    """Rule files: `normalize: {decode: {base64: true, hex: true, min_run: 16, max_bytes: 8192, max_runs: 16}}`
    (or `decode: false`)."""

    base64: bool = True
    hex: bool = True
    min_run: int = 16  # encoded characters (16 base64 = 12 bytes: "越狱模式" or "you are DAN!")
    max_bytes: int = 8192  # decoded bytes examined per text, all runs and depths together
    max_runs: int = 16  # runs decoded per text, all depths together
    min_printable: float = 0.9

    @property
    def enabled(self) -> bool:
        return self.base64 or self.hex

    def describe(self) -> str:
        return (f"decode(b64={int(self.base64)},hex={int(self.hex)},run={self.min_run},bytes={self.max_bytes},"
                f"runs={self.max_runs},printable={self.min_printable})")


MAX_DEPTH = 2  # the text itself is depth 1; one nested decoding more

# Runs of the base64 alphabets (standard and URL-safe; a contiguous hex run is one of these too), spaced or
# colon-separated hex pairs (hexdumps, `69 67 6e 6f`), and `\x69\x67` escapes. RE2 over the UTF-8 bytes:
# Python's `re` took ~120 us per 1 KB prompt for this alternation (it retries every start inside a word), the
# RE2 DFA ~6 us, the encoding included.
_RUNS = (
    r"(?P<b64>[A-Za-z0-9+/_-]{%(n)d,}={0,2})"
    r"|(?P<hexsep>(?:[0-9A-Fa-f]{2}(?:  ?|:)){7,}[0-9A-Fa-f]{2})"
    r"|(?P<hexesc>(?:\\x[0-9A-Fa-f]{2}){8,})"
)
_GROUPS = ("b64", "hexsep", "hexesc")
_HEX_ONLY = re.compile(r"[0-9A-Fa-f]+")
_NOT_HEX = re.compile(r"[^0-9A-Fa-f]")
_URLSAFE = str.maketrans("-_", "+/")
# Not printable: C0/C1 controls but tab, newline, carriage return; DEL; the replacement character.
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]")


def _compile_runs(min_run: int) -> RE2Match:
    options = re2.Options()
    options.max_mem = 8 << 20
    regexp: RE2Match = re2.compile(_RUNS % {"n": min_run}, options)._regexp.Match
    return regexp


@dataclass(frozen=True, slots=True)
class DecodedRun:
    """A run of `text[start:end]` and what it decodes to (`truncated`: only a prefix was decoded)."""

    start: int
    end: int
    encoding: str  # base64 | hex
    text: str
    truncated: bool


def _as_text(data: bytes, truncated: bool, min_printable: float) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A prefix cut inside a multi-byte character is still text up to the cut.
        if not (truncated and exc.reason == "unexpected end of data" and exc.start >= len(data) - 3):
            return None
        text = data[:exc.start].decode("utf-8")
    if len(text) < 4:
        return None
    bad = len(_UNPRINTABLE.findall(text))
    if bad > len(text) * (1.0 - min_printable):
        return None
    if not any(c.isalpha() for c in text):
        return None  # punctuation and digits alone carry no words
    return text


def _base64(run: str, budget: int) -> tuple[bytes, bool] | None:
    body = run.rstrip("=")
    if "-" in body or "_" in body:
        body = body.translate(_URLSAFE)
    usable = len(body) - len(body) % 4 if len(body) % 4 == 1 else len(body)  # 4k+1 characters: one stray
    take = min(usable, budget // 3 * 4)
    if take < 4:
        return None
    chunk = body[:take]
    try:
        data = binascii.a2b_base64(chunk + "=" * (-len(chunk) % 4), strict_mode=True)
    except binascii.Error:
        return None
    return data, take < usable


def _hex(digits: str, budget: int) -> tuple[bytes, bool] | None:
    usable = len(digits) - len(digits) % 2
    take = min(usable, budget * 2)
    if take < 2:
        return None
    return bytes.fromhex(digits[:take]), take < usable


def _is_hex(run: str) -> bool:
    return len(run) % 2 == 0 and _HEX_ONLY.fullmatch(run) is not None


class Decoder:
    """Finds and decodes runs within `DecodeConfig`'s bounds. Immutable; shared by threads."""

    def __init__(self, config: DecodeConfig) -> None:
        self.config = config
        self._runs = _compile_runs(config.min_run)

    def runs(self, text: str, budget: list[int]) -> list[DecodedRun]:
        """The decodable runs of `text`; `budget` is [bytes left, runs left], shared across depths."""
        cfg = self.config
        out: list[DecodedRun] = []
        if len(text) < cfg.min_run:
            return out
        data = text.encode("utf-8", "surrogatepass")
        match = self._runs
        pos, end = 0, len(data)
        while pos < end and budget[0] > 0 and budget[1] > 0:
            spans = match(_UNANCHORED, data, pos, end)
            start, stop = spans[0]
            if start < 0:
                break
            pos = stop if stop > start else start + 1
            kind = next(g for g, (s, _) in zip(_GROUPS, spans[1:], strict=True) if s >= 0)
            run = data[start:stop].decode("ascii")
            decoded = self._decode(kind, run, budget)
            if decoded is None:
                continue
            raw, truncated = decoded
            budget[0] -= len(raw)
            decoded_text = _as_text(raw, truncated, cfg.min_printable)
            if decoded_text is not None:
                # Character offsets: the runs are ASCII, the text before them need not be.
                chars = start if len(data) == len(text) else len(data[:start].decode("utf-8", "surrogatepass"))
                out.append(DecodedRun(chars, chars + len(run), "hex" if kind != "b64" or _is_hex(run) else "base64",
                                      decoded_text, truncated))
        return out

    def _decode(self, kind: str, run: str, budget: list[int]) -> tuple[bytes, bool] | None:
        cfg = self.config
        if kind == "b64":
            if _is_hex(run):
                if not cfg.hex:
                    return None
                budget[1] -= 1
                return _hex(run, budget[0])
            if not cfg.base64:
                return None
            budget[1] -= 1
            return _base64(run, budget[0])
        if not cfg.hex:
            return None
        digits = run.replace("\\x", "") if kind == "hexesc" else _NOT_HEX.sub("", run)
        if len(digits) < cfg.min_run:
            return None
        budget[1] -= 1
        return _hex(digits, budget[0])

    def decoded_texts(self, text: str) -> list[tuple[int, int, str]]:
        """Every decoded text (nested ones too) with the raw span of the outermost run it came from."""
        budget = [self.config.max_bytes, self.config.max_runs]
        out: list[tuple[int, int, str]] = []
        for run in self.runs(text, budget):
            out.append((run.start, run.end, run.text))
            if MAX_DEPTH > 1:
                out += [(run.start, run.end, inner.text) for inner in self.runs(run.text, budget)]
        return out


Scan = Callable[[str], Sequence[Finding]]


class DecodingDetector:
    """A `Detector` (rules.findings): the findings of `scans` on each decoded text, at the encoded run's span,
    kind `decoded`, with the rule and category of the finding inside. One finding per run and rule."""

    def __init__(self, config: DecodeConfig, scans: Sequence[Scan]) -> None:
        self.decoder = Decoder(config)
        self._scans = tuple(scans)
        self._name = config.describe()

    @property
    def name(self) -> str:
        return self._name

    @property
    def max_match_len(self) -> int | None:
        return None  # requests only: never used to hold back a stream

    def detect(self, text: str) -> Sequence[Finding]:
        if len(text) < self.decoder.config.min_run:
            return []
        found: dict[tuple[int, str], Finding] = {}
        for start, end, decoded in self.decoder.decoded_texts(text):
            for scan in self._scans:
                for f in scan(decoded):
                    key = (start, f.rule)
                    if key not in found or found[key].score < f.score:
                        found[key] = new_finding(DECODED_KIND, f.category, start, end, f.rule, f.score, None)
        return list(found.values())
