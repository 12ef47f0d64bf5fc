from __future__ import annotations

import pytest

from proxy.state import MAX_NAME_CHARS, Route, classify_route, record_name, route_pattern


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
        ("/v2/models/llama/ready", Route.OTHER),
        ("/v2/models/llama/infer/", Route.KSERVE_V2),
        ("/v2/models/llama/generate_stream?x=/infer", Route.TRITON_GENERATE),
        # As spelled: proxy/paths.py refuses the spellings a server may route elsewhere (tests/proxy/test_paths.py).
        ("/v1/chat/%63ompletions", Route.OTHER),
        ("/V1/chat/completions", Route.OTHER),
    ],
)
def test_classify_route(path: str, route: Route) -> None:
    assert classify_route(path) is route


@pytest.mark.parametrize(
    ("path", "pattern"),
    [
        ("/v1/chat/completions/?x=1", "/v1/chat/completions"),
        ("/v2/models/110105199003071239/versions/1/infer", "/v2/models/{model}/infer"),
        ("/v2/models/m/generate_stream", "/v2/models/{model}/generate_stream"),
        ("/v2/repository/models/m/load", "/v2/repository/..."),
        ("/v2/models/m/ready", "/"),
        ("/anything", "/"),
    ],
)
def test_route_pattern_names_the_route_without_the_clients_text(path: str, pattern: str) -> None:
    assert route_pattern(path) == pattern


def test_record_name_keeps_what_utf8_can_hold_and_bounds_the_length() -> None:
    assert record_name("Qwen/Qwen2.5-7B-Instruct") == "Qwen/Qwen2.5-7B-Instruct"
    assert record_name("模型-甲") == "模型-甲"
    assert record_name("m\ud800x\udc80") == "m\ufffdx\ufffd"
    assert record_name("x" * 10_000) == "x" * MAX_NAME_CHARS
    assert record_name(7) is None and record_name(None) is None
    assert (record_name("m\ud800") or "").encode()  # UTF-8 can write every recorded name
