from __future__ import annotations

import pytest

from proxy.k8s.servers import (
    LLAMA_CPP_PYTHON,
    LLAMA_SERVER,
    SGLANG,
    TGI,
    TRITON,
    VLLM,
    RefusedError,
    Server,
    find,
    identify,
    plan,
)


@pytest.mark.parametrize(("argv", "server", "start"), [
    (["vllm", "serve", "m"], VLLM, 2),
    (["/usr/local/bin/vllm", "serve"], VLLM, 2),
    (["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"], VLLM, 3),
    (["python3.12", "-u", "-X", "faulthandler", "-m", "sglang.launch_server"], SGLANG, 6),
    (["python", "-mllama_cpp.server", "--model", "m"], LLAMA_CPP_PYTHON, 2),
    (["text-generation-launcher", "--model-id", "m"], TGI, 1),
    (["/opt/tritonserver/bin/tritonserver"], TRITON, 1),
    (["/app/llama-server", "-m", "m.gguf"], LLAMA_SERVER, 1),
])
def test_identify(argv: list[str], server: Server, start: int) -> None:
    assert identify(argv) == (server, start)


@pytest.mark.parametrize("argv", [[], ["vllm"], ["vllm", "bench"], ["python", "serve.py"], ["python", "-c", "x"],
                                  ["python", "-m", "http.server"], ["sh", "-c", "vllm serve m"], ["ollama", "serve"]])
def test_identify_nothing_else(argv: list[str]) -> None:
    assert identify(argv) is None


def test_tgi_short_port_forms() -> None:
    for tokens, value in ((["-p", "80"], "80"), (["-p80"], "80"), (["-p=80"], "80"), (["--port=80"], "80")):
        (use,) = find(["text-generation-launcher", *tokens], 1, TGI, "--port", "w")
        assert use.value == value
    assert plan(["text-generation-launcher", "-p80"], 1, TGI, 80, 10080, "w", True).edits == {1: "-p10080"}  # type: ignore[union-attr]


def test_forms_each_server_reads_differently_are_refused() -> None:
    with pytest.raises(RefusedError, match="llama-server does not accept '--port=8080'"):
        find(["llama-server", "--port=8080"], 1, LLAMA_SERVER, "--port", "w")
    with pytest.raises(RefusedError, match="'--http-p' abbreviates --http-port"):
        find(["tritonserver", "--http-p=8000"], 1, TRITON, "--http-port", "w")
    with pytest.raises(RefusedError, match="has no value"):
        find(["vllm", "serve", "m", "--port"], 2, VLLM, "--port", "w")
    with pytest.raises(RefusedError, match="`--` ends"):
        find(["vllm", "serve", "--", "--port", "1"], 2, VLLM, "--port", "w")
    # llama.cpp matches whole arguments: a prefix is its own (invalid) argument, not ours to refuse
    assert find(["llama-server", "--po", "1"], 1, LLAMA_SERVER, "--port", "w") == []


def test_plan() -> None:
    argv = ["vllm", "serve", "m", "--port", "8000", "--host=0.0.0.0"]
    result = plan(argv, 2, VLLM, 8000, 18000, "w", True)
    assert result is not None and result.edits == {4: "18000", 5: "--host=127.0.0.1"} and result.append == ()
    result = plan(["vllm", "serve", "m"], 2, VLLM, 8000, 18000, "w", True)
    assert result is not None and result.append == ("--port", "18000", "--host", "127.0.0.1") and not result.env
    assert plan(["x", "--model", "m"], 1, VLLM, 8000, 18000, "w", False) is None
    with pytest.raises(RefusedError, match="listens on --port '9000', not on the upstream port 8000"):
        plan(["vllm", "serve", "--port", "9000"], 2, VLLM, 8000, 18000, "w", True)
    with pytest.raises(RefusedError, match="vllm with --uds listens on no TCP port"):
        plan(["vllm", "serve", "m", "--uds=/tmp/s"], 2, VLLM, 8000, 18000, "w", True)
    with pytest.raises(RefusedError, match=r"listens on --port '\$\(PORT\)'"):
        plan(["vllm", "serve", "--port", "$(PORT)"], 2, VLLM, 8000, 18000, "w", True)
    # llama-cpp-python reads PORT and HOST before its flags: both are set too
    result = plan(["python", "-m", "llama_cpp.server"], 3, LLAMA_CPP_PYTHON, 8000, 18000, "w", True)
    assert result is not None and result.env == {"PORT": "18000", "HOST": "127.0.0.1"}
