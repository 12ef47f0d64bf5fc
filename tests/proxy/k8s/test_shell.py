from __future__ import annotations

import pytest

from proxy.k8s.shell import ShellError, is_plain, words


def test_words_values_and_spans() -> None:
    script = """A=1 exec vllm serve 'my model' --port "8000" --x=a\\ b"""
    found = words(script)
    assert [w.value for w in found] == ["A=1", "exec", "vllm", "serve", "my model", "--port", "8000", "--x=a b"]
    assert [w.raw(script) for w in found][4:] == ["'my model'", "--port", '"8000"', "--x=a\\ b"]


def test_line_continuations_and_surrounding_blanks() -> None:
    script = "\n  llama-server \\\n  --port 8080 \\\n  -c 8192\n\n"
    found = words(script)
    assert [w.value for w in found] == ["llama-server", "--port", "8080", "-c", "8192"]
    assert script[found[2].start:found[2].end] == "8080"


def test_double_quotes_keep_backslashes_posix_drops() -> None:
    assert [w.value for w in words(r'x "a\b" "c\"d" "e\\f"')] == ["x", r"a\b", 'c"d', "e\\f"]


@pytest.mark.parametrize(("script", "message"), [
    ("vllm serve m | tee log", "operator"),
    ("a && b", "operator"),
    ("a; b", "operator"),
    ("a & wait", "operator"),
    ("a > /tmp/log", "operator"),
    ("(vllm serve m)", "operator"),
    ("vllm serve --port $PORT", "expands when the script runs"),
    ("vllm serve --port ${PORT:-8000}", "expands when the script runs"),
    ('vllm serve --port "$PORT"', "expands at run time"),
    ("vllm serve $(cat m)", "expands when the script runs"),
    ("vllm serve `cat m`", "expands when the script runs"),
    ("vllm serve /m/*.gguf", "pattern"),
    ("vllm serve m # --port 9000", "comment"),
    ("vllm serve a\nvllm serve b", "second command"),
    ("vllm serve 'm", "never closed"),
    ('vllm serve "m', "never closed"),
    ("vllm serve m\\", "ends with a backslash"),
    ("vllm serve m\r", "shlex"),  # a CR is a word character to sh, a blank to shlex: refused, not guessed
])
def test_refusals(script: str, message: str) -> None:
    with pytest.raises(ShellError, match=message):
        words(script)


def test_is_plain() -> None:
    assert is_plain("127.0.0.1") and is_plain("--port=18000") and is_plain("18000")
    assert not is_plain("") and not is_plain("a b") and not is_plain("$x") and not is_plain("'q'")
