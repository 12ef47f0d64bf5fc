"""An answer read as one JSON document the way a client's json.loads reads it: JSON whitespace around it,
nothing else; the violation gives offsets, never the text."""

from __future__ import annotations

import pytest

from rules.schema import parse_document


@pytest.mark.parametrize(("text", "value"), [
    ('{"a": 1}', {"a": 1}), ('\n  {"a": [1, 2.5, true, null]}\r\n\t', {"a": [1, 2.5, True, None]}),
    ("1.0", 1.0), ('"\\ud83d\\ude00"', "😀"), ("-0", 0),
])
def test_documents(text: str, value: object) -> None:
    document = parse_document(text)
    assert document.ok and document.value == value


@pytest.mark.parametrize(("text", "words"), [
    ("", "empty"), (" \n ", "empty"), ("Here it is: {}", "text before it (character 0)"),
    ('```json\n{"a": 1}\n```', "text before it"), ('{"a": 1} Hope this helps', "text after it (character 9)"),
    ("{} {}", "text after it"), ("NaN", "not valid JSON"), ("[Infinity]", "not valid JSON"),
    ("[-Infinity]", "not valid JSON"), ('{"a": 1', "not valid JSON"), ("\u00a0{}", "text before it"),
    ("[" * 100_000 + "]" * 100_000, "nests too deeply"), ('"a\tb"', "not valid JSON"),
    ('{"a": 1, "a": 2}', "appears twice"), ('[{"b": {"c": 1, "c": 1}}]', "appears twice"),
    ('"abc', "Unterminated string starting (character 0)"),
])
def test_not_documents(text: str, words: str) -> None:
    document = parse_document(text)
    assert not document.ok and document.violation is not None
    assert words in document.violation.detail
    assert document.violation.pointer == "" and document.violation.keyword == "json"


def test_messages_never_quote_the_text() -> None:
    for text in ["secret-4111111111111111 {}", '{"k": "secret-4111111111111111"', "{} secret-4111111111111111"]:
        violation = parse_document(text).violation
        assert violation is not None and "4111" not in violation.message() and "secret" not in violation.message()
