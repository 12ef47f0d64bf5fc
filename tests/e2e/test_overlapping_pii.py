"""Overlapping PII, whole-process: a prompt and a model name in which an ID number, a card number and an
e-mail address share characters reach neither the model server nor the metrics nor the audit log in clear
(a model name without PII goes to the server as it came: it is the routing key)."""

from __future__ import annotations

import json
from pathlib import Path

import openai
import pytest

from tests.e2e.conftest import Process, ProxyFactory, http_get
from tests.rules import values as v

pytestmark = pytest.mark.slow

ID = "110105199003071239"
CARD = v.UNIONPAY_19
PROMPT_EMAIL = f"{ID}.wang@example.org"  # the e-mail address starts with the ID number
MODEL = f"m-{ID}-{CARD}-name@example.org"  # one e-mail address holding both numbers
# What was left in clear before: the ID's own mask kept, the e-mail address dropped whole.
LEAKS = (ID, CARD, PROMPT_EMAIL, MODEL, "wang@example.org", "name@example.org", ".wang@", "-name@")


def seen(text: str) -> list[str]:
    return [leak for leak in LEAKS if leak in text]


def exchange_records(audit_dir: Path) -> list[str]:
    return [line.decode() for segment in sorted((audit_dir / "segments").glob("*"))
            for line in segment.read_bytes().splitlines() if b'"exchange"' in line]


def test_overlapping_pii_reaches_no_one_in_clear(standin: Process, start_proxy: ProxyFactory,
                                                 tmp_path: Path) -> None:
    audit_dir = tmp_path / "audit"
    proxy = start_proxy(standin.url, "--audit-dir", str(audit_dir))
    client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="x", max_retries=0, timeout=20)
    answer = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": f"请联系 {PROMPT_EMAIL} 核对"}],
    )
    status, forwarded = http_get(standin.url + "/_standin/last")
    assert status == 200
    upstream = json.loads(forwarded)
    prompt = upstream["messages"][0]["content"]
    assert prompt.startswith("请联系 ") and prompt.endswith(" 核对")  # rewritten, not dropped
    assert seen(prompt) == [], prompt
    assert seen(json.dumps(upstream, ensure_ascii=False)) == []  # the model name too: the server logs it
    assert upstream["model"].endswith("@example.org") and "*" in upstream["model"]  # masked, not dropped
    content = answer.choices[0].message.content
    assert content is not None and seen(content) == [], content  # the echo is masked on its way back too

    status, metrics = http_get(proxy.admin_url + "/metrics")
    assert status == 200
    text = metrics.decode()
    assert 'model_name="' in text  # the model name is a label: it is there, masked
    assert seen(text) == [], [line for line in text.splitlines() if seen(line)]

    assert proxy.stop() == 0
    records = exchange_records(audit_dir)
    assert records, "no exchange record"
    assert all(seen(r) == [] for r in records), [seen(r) for r in records]
