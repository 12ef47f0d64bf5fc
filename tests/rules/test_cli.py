"""`warden scan`: the stable JSON shape, plain and JSONL input, exit codes."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from rules import cli
from rules.scanner import Scanner
from tests.rules import values as v


def run(text: str, *, jsonl: bool = False) -> tuple[int, list[dict[str, object]]]:
    out = io.StringIO()
    rc = cli.run(Scanner.load(), io.StringIO(text), out, jsonl=jsonl)
    return rc, [json.loads(line) for line in out.getvalue().splitlines()]


def test_plain_text_one_input_per_line() -> None:
    rc, rows = run(f"身份证{v.ID_18}\r\nhello\n找人代考")
    assert rc == 0
    assert [r["id"] for r in rows] == [1, 2, 3]
    first = rows[0]
    assert set(first) == {"id", "action", "findings", "masked"}
    assert first["action"] == "mask"
    assert first["findings"] == [
        {"kind": "cn_resident_id", "category": "pii", "start": 3, "end": 21, "rule": "CHN_ID_CARD",
         "action": "mask", "score": 1.0}
    ]
    assert first["masked"] == "身份证110105********002X"
    assert rows[1] == {"id": 2, "action": "allow", "findings": [], "masked": "hello"}
    assert rows[2]["action"] == "block"


def test_jsonl_keeps_ids() -> None:
    rc, rows = run('{"id": "a-1", "text": "邮箱 a@b.co"}\n\n{"id": 7, "text": ""}\n', jsonl=True)
    assert rc == 0
    assert [r["id"] for r in rows] == ["a-1", 7]
    assert rows[0]["masked"] == "邮箱 a***@b.co"


def test_bad_jsonl_line_is_a_data_error() -> None:
    assert run("not json\n", jsonl=True)[0] == cli.EXIT_DATAERR
    assert run('{"id": 1}\n', jsonl=True)[0] == cli.EXIT_DATAERR
    deep = '{"id": 1, "text": "x", "deep": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    assert run(deep, jsonl=True)[0] == cli.EXIT_DATAERR


def test_usage_and_bad_rule_file(tmp_path: Path) -> None:
    assert cli.main(["--bogus"]) == cli.EXIT_USAGE
    bad = tmp_path / "bad.json"
    bad.write_text('[{"pattern": "(a)\\\\1"}]', "utf-8")
    assert cli.main(["--rules", str(bad)]) == cli.EXIT_CONFIG


def test_warden_scan_subprocess(tmp_path: Path) -> None:
    rule = tmp_path / "seed.json"
    rule.write_text('[{"pattern": "(?i)(代[考]|替考|枪手)", "level": 3}]', "utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "proxy.cli", "scan", "--no-semantic", "--no-builtin", "--rules", str(rule)],
        input="找个枪手\n".encode(), capture_output=True, timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    (row,) = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert row["action"] == "block"
    assert row["findings"][0]["rule"] == "seed.json#0"
