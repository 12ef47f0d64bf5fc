"""Reversible pseudonyms: a per-request (or per-conversation) vault mapping values to `<KIND_N>` placeholders.

The same value always gets the same placeholder within a vault, across all messages of a request; the model's
answer is restored through the vault (also incrementally, for streams). Placeholders a client sends back in a
later turn are `learn`ed: a known one keeps its value, an unknown one reserves its number so that no new value
is ever given a placeholder the conversation already uses for something else.
Values are keyed by a canonical form (NFKC, separators removed, case folded), so `138 1234 5678` and
`13812345678` share one placeholder; restore gives back the first raw form seen.
"""

from __future__ import annotations

import re
import threading
import unicodedata

PLACEHOLDER_RE = re.compile(r"<([A-Z][A-Z0-9_]{0,40})_([1-9][0-9]{0,8})>")
# The longest text that can still be the start of a placeholder: "<" + kind + "_" + digits (no ">").
_PARTIAL_RE = re.compile(r"<(?:[A-Z][A-Z0-9_]{0,41}(?:[0-9]{0,9})?)?\Z")
MAX_PLACEHOLDER = 1 + 41 + 1 + 9 + 1

_SEPARATORS = str.maketrans("", "", " -\t\u3000")


def canonical(value: str) -> str:
    return unicodedata.normalize("NFKC", value).translate(_SEPARATORS).casefold()


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
        key = (kind, canonical(value))
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
