"""Fuzzing text extraction (proxy/guard/extract.py): any JSON object on any route. Nothing raises, every field's path
leads to exactly its text, and `put` at that path changes that string and nothing else. Budget: tests/fuzz.py.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from proxy.guard.extract import Path, TextField, put, request_texts, response_texts
from proxy.state import Route
from tests.fuzz import fuzz

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.floats(allow_nan=False), st.text(max_size=6))
ANY = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=8)
TEXT = st.one_of(st.text(min_size=1, max_size=6), st.just(""))
PART_KEYS = ("text", "input_text", "output_text", "refusal", "type", "image_url")


def _sometimes(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The API's shape nine times in ten, any JSON value in its place otherwise (one_of would pick the simpler
    ANY far more often: hypothesis shrinks towards its first branches and small values)."""
    return st.integers(0, 9).flatmap(lambda n: ANY if n == 0 else strategy)


def _lists(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return _sometimes(st.lists(strategy, min_size=1, max_size=3))


def _object(required: dict[str, st.SearchStrategy[Any]], optional: dict[str, st.SearchStrategy[Any]]
            ) -> st.SearchStrategy[Any]:
    return _sometimes(st.fixed_dictionaries(required, optional=optional))


TEXTISH = _sometimes(TEXT)
# Parts, messages, items and tensors in the shapes the APIs use, with any value allowed in any place.
PART = _sometimes(st.one_of(st.dictionaries(st.sampled_from(PART_KEYS), TEXTISH, min_size=1, max_size=3), TEXT))
CONTENT = _sometimes(st.one_of(TEXT, st.lists(PART, min_size=1, max_size=3)))
TOOL_CALL = _object({"function": _object({"arguments": TEXTISH}, {"name": TEXT})}, {"id": TEXT})
MESSAGE = _object({"content": CONTENT}, {
    "role": TEXT, "tool_calls": _lists(TOOL_CALL), "reasoning_content": TEXTISH, "reasoning": TEXTISH,
    "refusal": TEXTISH})
ITEM = _object({}, {"content": CONTENT, "arguments": TEXTISH, "output": TEXTISH, "text": TEXTISH, "type": TEXT})
ITEMS = _sometimes(st.one_of(TEXT, st.lists(st.one_of(ITEM, TEXT), min_size=1, max_size=3)))
STRINGS = _sometimes(st.one_of(TEXT, st.lists(TEXTISH, min_size=1, max_size=3)))
TENSOR = _object({"datatype": _sometimes(st.sampled_from(["BYTES", "bytes", "FP32"])), "data": STRINGS},
                 {"name": TEXT})
CHOICE = _object({}, {"message": MESSAGE, "text": TEXTISH, "index": ANY})

# Where each route keeps its text, requests and answers together (each extractor must ignore the other's).
FIELDS: dict[Route, dict[str, st.SearchStrategy[Any]]] = {
    Route.CHAT: {"messages": _lists(MESSAGE), "choices": _lists(CHOICE)},
    Route.COMPLETIONS: {"prompt": STRINGS, "choices": _lists(CHOICE)},
    Route.EMBEDDINGS: {"input": STRINGS},
    Route.RESPONSES: {"instructions": TEXTISH, "input": ITEMS, "output": ITEMS, "output_text": TEXTISH},
    Route.KSERVE_V2: {"inputs": _lists(TENSOR), "outputs": _lists(TENSOR)},
    Route.TRITON_GENERATE: {"text_input": STRINGS, "text_output": STRINGS},
}
ALL_FIELDS = {k: v for fields in FIELDS.values() for k, v in fields.items()}
EXTRA = st.dictionaries(st.text(max_size=4), ANY, max_size=2)


@st.composite
def route_and_body(draw: st.DrawFn) -> tuple[Route, dict[str, Any]]:
    # Mostly an inspected route with its own fields; sometimes any route with any route's fields (a chat body
    # on the embeddings path, text on a route nothing is extracted from).
    if draw(st.integers(0, 3)):
        route = draw(st.sampled_from(list(FIELDS)))
        known = draw(st.fixed_dictionaries({}, optional=FIELDS[route]).filter(bool))
    else:
        route = draw(st.sampled_from(list(Route)))
        known = draw(st.fixed_dictionaries({}, optional=ALL_FIELDS))
    return route, {**draw(EXTRA), **known}


EXTRACTORS = st.sampled_from([request_texts, response_texts])


def resolve(body: Any, path: Path) -> Any:
    for part in path:
        body = body[part]
    return body


def as_parsed(body: dict[str, Any]) -> dict[str, Any]:
    """The body as the proxy has it: parsed from JSON (no shared sub-objects, floats as JSON keeps them)."""
    parsed: dict[str, Any] = json.loads(json.dumps(body))
    return parsed


@fuzz(150)
@given(route_and_body(), EXTRACTORS)
@example((Route.CHAT, {"messages": [{"content": [{"text": "a", "input_text": "b"}]}]}), request_texts)
@example((Route.RESPONSES, {"input": ["a", {"content": "b", "text": "c", "output": "d"}]}), request_texts)
@example((Route.KSERVE_V2, {"outputs": [{"datatype": "bytes", "data": ["x", ["nested"]]}]}), response_texts)
def test_every_field_is_found_where_its_path_says(case: tuple[Route, dict[str, Any]], extract: Any) -> None:
    route, body = case[0], as_parsed(case[1])
    fields: list[TextField] = extract(route, body)
    assert len({f.path for f in fields}) == len(fields), "two fields at one place"
    for f in fields:
        assert isinstance(f.text, str) and f.text
        assert resolve(body, f.path) == f.text and type(resolve(body, f.path)) is str
        assert f.where  # printable for errors and audit records


@fuzz(100)
@given(route_and_body(), EXTRACTORS, st.data())
def test_put_changes_exactly_the_field_at_its_path(case: tuple[Route, dict[str, Any]], extract: Any,
                                                   data: st.DataObject) -> None:
    route, body = case[0], as_parsed(case[1])
    fields: list[TextField] = extract(route, body)
    if not fields:
        return
    target = data.draw(st.sampled_from(fields))
    new = data.draw(st.text(min_size=1, max_size=8).filter(lambda t: t != target.text))
    changed = copy.deepcopy(body)
    put(changed, target.path, new)
    assert resolve(changed, target.path) == new
    put(changed, target.path, target.text)
    assert changed == body  # nothing else moved
    # And extraction sees the same fields, the one rewritten in place.
    put(changed, target.path, new)
    assert [(f.path, f.text) for f in extract(route, changed)] == [
        (f.path, new if f.path == target.path else f.text) for f in fields]
