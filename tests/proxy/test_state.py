from __future__ import annotations

import pytest

from proxy.state import MAX_NAME_CHARS, Route, classify_route, record_name


@pytest.mark.parametrize(
    ("path", "route"),
    [
        ("/v1/chat/completions", Route.CHAT),
        ("/v1/chat/completions?x=1", Route.CHAT),
        ("/v1/completions", Route.COMPLETIONS),
        ("/v1/responses", Route.RESPONSES),
        ("/v1/embeddings/", Route.EMBEDDINGS),
        ("/v2/models/llama/infer", Route.KSERVE_V2),
        ("/v2/models/llama/versions/1/infer", Route.KSERVE_V2),
        ("/v2/models/llama/generate", Route.TRITON_GENERATE),
        ("/v2/models/llama/generate_stream", Route.TRITON_GENERATE),
        ("/v1/load_lora_adapter", Route.MODEL_ADMIN),
        ("/v2/repository/models/x/load", Route.MODEL_ADMIN),
        ("/health", Route.HEALTH),
        ("/anything/else", Route.OTHER),
    ],
)
def test_classify_route(path: str, route: Route) -> None:
    assert classify_route(path) is route


def test_record_name_keeps_what_utf8_can_hold_and_bounds_the_length() -> None:
    assert record_name("Qwen/Qwen2.5-7B-Instruct") == "Qwen/Qwen2.5-7B-Instruct"
    assert record_name("模型-甲") == "模型-甲"
    assert record_name("m\ud800x\udc80") == "m\ufffdx\ufffd"
    assert record_name("x" * 10_000) == "x" * MAX_NAME_CHARS
    assert record_name(7) is None and record_name(None) is None
    assert (record_name("m\ud800") or "").encode()  # UTF-8 can write every recorded name
