from __future__ import annotations

import pytest

from proxy.state import Route, classify_route


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
