from __future__ import annotations

from typing import Any

import pytest

from proxy.k8s.ports import NoServerError, move, port_values
from proxy.k8s.servers import RefusedError


def container(**fields: Any) -> dict[str, Any]:
    return {"name": "m", "image": "i", **fields}


def test_exec_form_recognized_server_gets_flags_appended_to_args() -> None:
    moved = move(container(command=["vllm", "serve"], args=["m"]), None, 8000, 18000, "Pod p")
    assert moved.fields == {"args": ["m", "--port", "18000", "--host", "127.0.0.1"]}
    assert (moved.backend, moved.server, moved.how) == ("vllm", "vllm", "args")
    moved = move(container(command=["tritonserver", "--model-repository=/m"]), None, 8000, 18000, "Pod p")
    assert moved.fields == {"command": ["tritonserver", "--model-repository=/m", "--http-port", "18000",
                                        "--http-address", "127.0.0.1"]}
    assert moved.backend == "triton"


def test_args_only_are_the_annotated_servers_flags() -> None:
    moved = move(container(args=["--model", "m"]), "sglang", 30000, 40000, "Pod p")
    assert moved.fields == {"args": ["--model", "m", "--port", "40000", "--host", "127.0.0.1"]}
    # a wrapper entrypoint (Triton's exec "$@"): the args start with the server itself
    moved = move(container(args=["tritonserver", "--http-port=8000"]), None, 8000, 18000, "Pod p")
    assert moved.fields == {"args": ["tritonserver", "--http-port=18000", "--http-address", "127.0.0.1"]}
    # unannotated: without the port flag nothing says which server reads the args
    with pytest.raises(NoServerError, match="no model server recognized"):
        move(container(args=["--model", "m"]), None, 8000, 18000, "Pod p")
    moved = move(container(args=["--model", "m", "--port", "8000"]), None, 8000, 18000, "Pod p")
    assert moved.fields == {"args": ["--model", "m", "--port", "18000", "--host", "127.0.0.1"]}


def test_variables_only_for_a_server_that_reads_them() -> None:
    moved = move(container(env=[{"name": "PORT", "value": "80"}, {"name": "X", "value": "y"}]), "tgi", 80, 10080, "w")
    assert moved.fields == {"env": [{"name": "X", "value": "y"}, {"name": "PORT", "value": "10080"},
                                    {"name": "HOSTNAME", "value": "127.0.0.1"}]}
    with pytest.raises(RefusedError, match="PORT='8080', not the upstream port 80"):
        move(container(env=[{"name": "PORT", "value": "8080"}]), "tgi", 80, 10080, "w")
    with pytest.raises(RefusedError, match="valueFrom"):
        move(container(env=[{"name": "PORT", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}]),
             "tgi", 80, 10080, "w")
    # vLLM reads no port variable (the old injection set PORT, which vLLM ignored): refused, not silently broken
    for backend in ("vllm", "sglang", "triton", "openai", "llama_cpp"):  # llama_cpp: two servers, two variables
        with pytest.raises(RefusedError, match="reads no port variable"):
            move(container(), backend, 8000, 18000, "w")
    with pytest.raises(RefusedError, match="an unrecognized command"):
        move(container(command=["/entrypoint.sh"]), "vllm", 8000, 18000, "w")


def test_llama_cpp_python_gets_its_variables_besides_its_flags() -> None:
    moved = move(container(command=["python3", "-m", "llama_cpp.server", "--port", "8000"],
                           env=[{"name": "PORT", "value": "8000"}]), None, 8000, 18000, "w")
    assert moved.fields["command"] == ["python3", "-m", "llama_cpp.server", "--port", "18000", "--host", "127.0.0.1"]
    assert moved.fields["env"] == [{"name": "PORT", "value": "18000"}, {"name": "HOST", "value": "127.0.0.1"}]
    assert moved.how == "command+env" and moved.backend == "llama_cpp"


def test_backend_annotation_against_the_command() -> None:
    assert move(container(command=["vllm", "serve"]), "openai", 8000, 18000, "w").backend == "openai"
    with pytest.raises(RefusedError, match=r"warden\.io/backend='tgi' but the container runs vllm"):
        move(container(command=["vllm", "serve"]), "tgi", 8000, 18000, "w")


def test_shell_script_keeps_every_other_character() -> None:
    script = "  HF_HOME=/data  exec   vllm serve 'a b'  --port   8000\t--dtype half  "
    moved = move(container(command=["sh", "-c", script]), None, 8000, 18000, "w")
    assert moved.fields == {"command": [
        "sh", "-c", "  HF_HOME=/data  exec   vllm serve 'a b'  --port   18000\t--dtype half --host 127.0.0.1  "]}
    assert moved.how == "shell:command"


def test_shell_refusals_name_the_container() -> None:
    with pytest.raises(RefusedError, match=r"Pod p container 'm': the shell script in args\[0\] is not one simple"):
        move(container(command=["sh", "-c"], args=["a && vllm serve"]), None, 8000, 18000, "Pod p")
    with pytest.raises(RefusedError, match="runs 'sleep', not a model server"):
        move(container(command=["sh", "-c"], args=["sleep 1"]), None, 8000, 18000, "Pod p")
    with pytest.raises(RefusedError, match="runs 'nothing'"):
        move(container(command=["sh", "-c"], args=["A=1"]), None, 8000, 18000, "Pod p")


def test_port_values() -> None:
    assert port_values(container(command=["sh", "-c", "A=1 exec vllm serve --port 8000"]), None) == ["8000"]
    assert port_values(container(args=["--http-port", "8000"]), "triton") == ["8000"]
    assert port_values(container(command=["sh", "-c", "a | b"]), None) == []
