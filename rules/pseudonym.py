"""Reversible pseudonyms: a per-request (or per-conversation) vault mapping values to `<KIND_N>` placeholders.

The same value always gets the same placeholder within a vault, across all messages of a request; the model's
answer is restored through the vault (also incrementally, for streams). Placeholders a client sends back in a
later turn are `learn`ed: a known one keeps its value, an unknown one reserves its number so that no new value
is ever given a placeholder the conversation already uses for something else.
Values are keyed by a canonical form (NFKC, separators and invisible characters removed, case folded), so
`138 1234 5678` and `13812345678` share one placeholder; phone numbers by their digits alone, a mobile
number's country code dropped, so `+86 (138) 1234 5678` and `138.1234.5678` share it too. Restore gives back
the first raw form seen.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable

from rules.normalize import INVISIBLE

PLACEHOLDER_RE = re.compile(r"<([A-Z][A-Z0-9_]{0,40})_([1-9][0-9]{0,8})>")
# The longest text that can still be the start of a placeholder: "<" + kind + "_" + digits (no ">").
_PARTIAL_RE = re.compile(r"<(?:[A-Z][A-Z0-9_]{0,41}(?:[0-9]{0,9})?)?\Z")
MAX_PLACEHOLDER = 1 + 41 + 1 + 9 + 1

# Spaces, hyphens and dashes (U+2010-U+2015: values are written with them, rules/pii.py) and characters that
# render as nothing (normalization removes them before detection, so a value may contain them).
_SEPARATORS = str.maketrans("", "", " -\t\u3000\u2010\u2011\u2012\u2013\u2014\u2015" + INVISIBLE)
_NOT_DIGIT = re.compile("[^0-9]")


def _mobile(value: str) -> str:
    """A mobile number's 11 digits: +86, 0086 and (+86) are one country code (GB/T 15120 / ITU-T E.164)."""
    digits = _NOT_DIGIT.sub("", value)
    if len(digits) == 13 and digits.startswith("86"):
        return digits[2:]
    if len(digits) == 15 and digits.startswith("0086"):
        return digits[4:]
    return digits


# Kinds written with parentheses and dots around their digits ("(0755) 82345678", "138.1234.5678"): keyed by
# their digits. Only these: dots and parentheses are part of other values (e-mail addresses).
_BY_KIND: dict[str, Callable[[str], str]] = {
    "CN_MOBILE": _mobile,
    "CN_LANDLINE": lambda value: _NOT_DIGIT.sub("", value),
}


def canonical(value: str, kind: str = "") -> str:
    """The key of `value` among the values of `kind` (a placeholder kind, e.g. "CN_MOBILE")."""
    folded = unicodedata.normalize("NFKC", value).translate(_SEPARATORS).casefold()
    by_kind = _BY_KIND.get(kind)
    return folded if by_kind is None else by_kind(folded)


class PseudonymVault:
    """value <-> placeholder for one request or conversation. Thread-safe (the stream restorer may run in a
    different thread than the request inspection)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_key: dict[tuple[str, str], str] = {}
        self._values: dict[str, str] = {}  # placeholder -> raw value
        self._counters: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._values)

    def pseudonymize(self, kind: str, value: str) -> str:
        kind = re.sub(r"[^A-Z0-9_]", "_", kind.upper()) or "VALUE"
        key = (kind, canonical(value, kind))
        with self._lock:
            existing = self._by_key.get(key)
            if existing is not None:
                return existing
            n = self._counters.get(kind, 0) + 1
            self._counters[kind] = n
            placeholder = f"<{kind}_{n}>"
            self._by_key[key] = placeholder
            self._values[placeholder] = value
            return placeholder

    def value_of(self, placeholder: str) -> str | None:
        return self._values.get(placeholder)

    def restore(self, text: str) -> str:
        """Replace every known placeholder by its value; unknown ones stay as they are."""
        if "<" not in text:
            return text
        return PLACEHOLDER_RE.sub(lambda m: self._values.get(m.group(), m.group()), text)

    def learn(self, text: str) -> None:
        """Note placeholders a client sent back: known ones keep mapping to their values; unknown ones
        reserve their number for their kind."""
        with self._lock:
            for m in PLACEHOLDER_RE.finditer(text):
                kind, n = m.group(1), int(m.group(2))
                if n > self._counters.get(kind, 0):
                    self._counters[kind] = n

    def stream_restorer(self) -> StreamRestorer:
        return StreamRestorer(self)


class StreamRestorer:
    """Restores placeholders in streamed text, holding back only a suffix that may start a placeholder."""

    def __init__(self, vault: PseudonymVault) -> None:
        self._vault = vault
        self._pending = ""

    @property
    def holding(self) -> bool:
        """Whether a suffix that may start a placeholder is held back."""
        return bool(self._pending)

    def feed(self, delta: str) -> str:
        text = self._pending + delta
        cut = text.rfind("<")
        if cut >= 0 and len(text) - cut <= MAX_PLACEHOLDER and _PARTIAL_RE.match(text, cut):
            self._pending = text[cut:]
            text = text[:cut]
        else:
            self._pending = ""
        return self._vault.restore(text)

    def flush(self) -> str:
        text, self._pending = self._pending, ""
        return self._vault.restore(text)
