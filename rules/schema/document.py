"""An answer's text read as one JSON document, the way a client's `json.loads` would read it.

Whitespace around the document is allowed (models often start with a newline); anything else is not: prose
before or after, a Markdown fence, two documents, `NaN` (not JSON, RFC 8259), and a property name repeated in
one object. RFC 8259 section 4 says names SHOULD be unique and that parsers then disagree on which value wins
(Python and JavaScript keep the last, others the first); I-JSON (RFC 7493 section 2.3) says MUST. A document
whose meaning depends on the client's parser cannot be certified to fit a schema, and refusing it is what
lets the stream checker judge a member's value as soon as it ends (rules/schema/incremental.py
`unique_keys`). A text that is not a document gets a Violation at the root with keyword `json`, in our words
and with the character offset, never quoting the text.
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


class RepeatedName(ValueError):
    pass


def _unique_members(pairs: list[tuple[str, object]]) -> dict[str, object]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise RepeatedName("a property name appears twice in one object")
    return obj


_STRICT = json.JSONDecoder(parse_constant=_no_constants, object_pairs_hook=_unique_members)


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
        if isinstance(exc, RepeatedName):
            return _not_json(f"the answer is not I-JSON (RFC 7493): {exc}")
        if not isinstance(exc, json.JSONDecodeError):  # from _no_constants
            return _not_json(f"the answer is not valid JSON: {exc}")
        if exc.pos == start and text[start] not in '{["-0123456789tfn':
            return _not_json(f"the answer is not a JSON document: text before it (character {start})")
        reason = exc.msg.removesuffix(" at")  # json's "Unterminated string starting at"
        return _not_json(f"the answer is not valid JSON: {reason} (character {exc.pos})")
    rest = len(text[end:].lstrip(JSON_WHITESPACE))
    if rest:
        return _not_json(f"the answer is not a JSON document: text after it (character {len(text) - rest})")
    return Document(value=value)
