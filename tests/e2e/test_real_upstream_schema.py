"""Opt-in: output schemas against a real model server (llama.cpp), not only the stand-in.

Set WARDEN_REAL_UPSTREAM to the base URL of a running llama-cpp-python or llama-server (any model; replies
of a tiny random-weight model are gibberish, the protocol and the grammar-constrained decoding are real)
and, for llama-cpp-python, WARDEN_REAL_UPSTREAM_HEALTH=/v1/models. Skipped otherwise: CI has no model server.
What it showed the first time: llama-cpp-python's server answers OpenAI's `json_schema` form with a 500, so a
`llama_cpp` backend gets the route schema as `{"type": "json_object", "schema": ...}` (proxy/schemas/sources.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import openai
import pytest

from tests.e2e.conftest import ProxyFactory

REAL = os.environ.get("WARDEN_REAL_UPSTREAM")
pytestmark = pytest.mark.skipif(not REAL, reason="WARDEN_REAL_UPSTREAM is not set (a running llama.cpp server)")

PERSON = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}, "age": {"type": "integer"}},
          "required": ["name", "age"], "additionalProperties": False}


def test_a_route_schema_constrains_a_real_server_and_its_answers_fit(start_proxy: ProxyFactory, tmp_path: Path) -> None:
    assert REAL is not None
    schema = tmp_path / "person.json"
    schema.write_text(json.dumps(PERSON))
    health = os.environ.get("WARDEN_REAL_UPSTREAM_HEALTH", "/health")
    proxy = start_proxy(REAL, "--backend", "llama_cpp", "--health-path", health, "--schema", str(schema))
    client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="x", max_retries=0, timeout=120)
    whole = client.chat.completions.with_raw_response.create(
        model="tiny", messages=[{"role": "user", "content": "who?"}], max_tokens=80)
    assert whole.headers.get("x-warden-schema") == "valid"
    answer = json.loads(whole.parse().choices[0].message.content or "")
    assert set(answer) == {"name", "age"} and isinstance(answer["age"], int)
    stream = client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "who?"}],
                                            max_tokens=80, stream=True)
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert set(json.loads(text)) == {"name", "age"}
    # Three tokens cannot finish the document: re-asked once (the default), then refused.
    with pytest.raises(openai.APIStatusError) as refused:
        client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "hi"}], max_tokens=3)
    assert refused.value.status_code == 502 and "schema_violation" in str(refused.value.body)
