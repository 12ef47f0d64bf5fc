"""Rewritten bodies are written back as JSON that keeps what the other side sent, even text UTF-8 cannot hold."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from proxy.bodies import json_bytes


def test_text_is_written_as_utf8_unescaped() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "手机 138****5678"}]}
    assert json_bytes(body) == json.dumps(body, ensure_ascii=False).encode()


def test_a_lone_surrogate_is_written_escaped_as_it_came() -> None:
    sent = b'{"messages": [{"content": "call <CN_MOBILE_1> \\ud800"}]}'
    body = json.loads(sent)
    written = json_bytes(body)
    written.decode("utf-8")  # valid UTF-8
    assert b"\\ud800" in written
    assert json.loads(written) == body


_TEXT = st.text(st.characters() | st.characters(categories=["Cs"]), max_size=8)  # lone surrogates included


@given(st.recursive(_TEXT | st.integers() | st.none(),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
                    max_leaves=10))
def test_every_value_the_standard_parser_accepts_round_trips(value: object) -> None:
    assert json.loads(json_bytes(value)) == value
