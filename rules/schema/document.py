"""An answer's text read as one JSON document, the way a client's `json.loads` would read it.

Whitespace around the document is allowed (models often start with a newline); anything else is not: prose
before or after, a Markdown fence, two documents, `NaN` (not JSON, RFC 8259). A text that is not a
document gets a Violation at the root with keyword `json`, in our words and with the character offset, never
quoting the text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from rules.schema.compiled import Violation

JSON_WHITESPACE = " \t\n\r"  # RFC 8259 section 2; `str.strip()` would also take U+00A0 and friends
_DECODER = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed answer: `value` when it is a JSON document, else `violation` says why not."""

    value: object = None
    violation: Violation | None = None

    @property
    def ok(self) -> bool:
        return self.violation is None


def _not_json(detail: str) -> Document:
    return Document(violation=Violation("", "json", detail))


def _no_constants(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


_STRICT = json.JSONDecoder(parse_constant=_no_constants)


def parse_document(text: str) -> Document:
    """The answer as a JSON document, or a Violation naming the first offending character's offset."""
    start = len(text) - len(text.lstrip(JSON_WHITESPACE))
    if start == len(text):
        return _not_json("the answer is empty, not a JSON document")
    try:
        value, end = _STRICT.raw_decode(text, start)
    except RecursionError:
        return _not_json("the JSON document nests too deeply")
    except ValueError as exc:
        if not isinstance(exc, json.JSONDecodeError):  # from _no_constants
            return _not_json(f"the answer is not valid JSON: {exc}")
        if exc.pos == start and text[start] not in '{["-0123456789tfn':
            return _not_json(f"the answer is not a JSON document: text before it (character {start})")
        return _not_json(f"the answer is not valid JSON: {exc.msg} at character {exc.pos}")
    rest = len(text[end:].lstrip(JSON_WHITESPACE))
    if rest:
        return _not_json(f"the answer is not a JSON document: text after it (character {len(text) - rest})")
    return Document(value=value)
