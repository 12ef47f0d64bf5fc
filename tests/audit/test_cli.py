"""`warden audit verify|prove|show`: exit codes, reports, proofs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from audit.cli import main, parse_duration
from audit.merkle import leaf_hash, verify_inclusion
from tests.audit.conftest import Built, build, writable


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_verify_valid_human_and_json(built: Built, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "verify", str(built.directory), "--public-key", str(built.public_key))
    assert code == 0
    assert "Result: VALID" in out and "28 record(s)" in out
    code, out, _ = run(capsys, "verify", str(built.directory), "--public-key", str(built.public_key),
                       "--key-file", str(built.chain_key), "--json")
    assert code == 0
    report = json.loads(out)
    assert report["outcome"] == "valid" and report["macs_checked"] == 28 and report["problems"] == []


def test_verify_tampered_exits_1_with_codes_and_places(built: Built, capsys: pytest.CaptureFixture[str]) -> None:
    seg = built.segments()[1]
    writable(seg).write_bytes(seg.read_bytes().replace(b"req-00006", b"req-00666"))
    code, out, _ = run(capsys, "verify", str(built.directory), "--key-dir", str(built.keys))
    assert code == 1
    assert "RECORD_MAC_INVALID" in out and "segments/00000000000000000005.jsonl:3" in out
    assert "Result: INVALID" in out


def test_inconclusive_cases_exit_2(built: Built, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "verify", str(built.directory))
    assert code == 2 and "KEY_UNAVAILABLE" in out
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, _ = run(capsys, "verify", str(empty), "--public-key", str(built.public_key), "--json")
    assert code == 2 and json.loads(out)["problems"][0]["code"] == "NOTHING_TO_VERIFY"


@pytest.mark.parametrize("argv", [
    ["verify"], ["verify", "/nonexistent/dir"], ["verify", ".", "--bogus"], ["frobnicate"],
    ["verify", ".", "--max-age", "soon"], ["verify", ".", "--public-key", "/nonexistent.pem"],
])
def test_usage_errors_exit_64(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 64


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--help"]) == 0
    assert "--trusted-state" in capsys.readouterr().out


def test_save_state_then_trusted_state(built: Built, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state.json"
    code, _, _ = run(capsys, "verify", str(built.directory), "--key-dir", str(built.keys), "--save-state",
                     str(state))
    assert code == 0 and state.is_file()
    code, _, _ = run(capsys, "verify", str(built.directory), "--key-dir", str(built.keys), "--trusted-state",
                     str(state))
    assert code == 0
    built.checkpoints()[-1].unlink()
    code, out, _ = run(capsys, "verify", str(built.directory), "--key-dir", str(built.keys), "--trusted-state",
                       str(state), "--json")
    assert code == 1 and "ROLLBACK" in {p["code"] for p in json.loads(out)["problems"]}


def test_max_age(built: Built, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run(capsys, "verify", str(built.directory), "--key-dir", str(built.keys), "--max-age", "1h")
    assert code == 0
    assert parse_duration("90s") == 90 and parse_duration("10m") == 600 and parse_duration("250ms") == 0.25


def test_prove_prints_a_verifiable_inclusion_proof(built: Built, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "prove", str(built.directory), "--seq", "7", "--public-key", str(built.public_key))
    assert code == 0
    proof = json.loads(out)
    assert proof["checkpoint"]["signature_verified"] is True
    leaf = leaf_hash(proof["record"].encode())
    assert leaf.hex() == proof["leaf_hash"]
    verify_inclusion(7, proof["tree_size"], leaf, [bytes.fromhex(h) for h in proof["proof"]],
                     bytes.fromhex(proof["root"]))
    assert json.loads(proof["record"])["seq"] == 7
    assert main(["prove", str(built.directory), "--seq", "999"]) == 2


def test_show_filters(built: Built, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", str(built.directory), "--kind", "epoch_start")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["seq"] for r in rows] == [0, 14]
    code, out, _ = run(capsys, "show", str(built.directory), "--from", "3", "--to", "5")
    assert [json.loads(line)["seq"] for line in out.splitlines()] == [3, 4, 5]


def test_python_dash_m_audit(built: Built) -> None:
    proc = subprocess.run([sys.executable, "-m", "audit", "verify", str(built.directory), "--public-key",
                           str(built.public_key)], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""  # no progress bar when stderr is not a TTY


def _codes(out: str) -> set[str]:
    return {p["code"] for p in json.loads(out)["problems"]}


def test_forged_tail_exits_1_with_the_key_and_2_without(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.audit.test_verify import foreign_key, forge_tail

    built = build(tmp_path, boots=1, close_last=False)
    code, out, _ = run(capsys, "verify", str(built.directory), "--public-key", str(built.public_key), "--json")
    assert code == 2 and "TAIL_KEY_UNAVAILABLE" in _codes(out)  # a crashed log's tail needs the chain key
    assert run(capsys, "verify", str(built.directory), "--key-dir", str(built.keys))[0] == 0
    forge_tail(built, key=foreign_key)
    code, out, _ = run(capsys, "verify", str(built.directory), "--key-dir", str(built.keys), "--json")
    assert code == 1 and "EPOCH_KEY_UNKNOWN" in _codes(out)
    code, out, _ = run(capsys, "verify", str(built.directory), "--public-key", str(built.public_key), "--json")
    assert code == 2 and "TAIL_KEY_UNAVAILABLE" in _codes(out)


def test_the_key_file_that_holds_the_named_key_decides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Several --key-file (rotated keys): a wrapped key that its own key file refuses is invalid, whatever the
    other files say ("another local key"), and the rotated log verifies once every key is given."""
    from tests.audit.test_verify import forge_tail, forged_wrapped_key, rotated

    built = rotated(tmp_path, close_last=False)
    other = tmp_path / "other-keys" / "chain.key"
    both = ["--public-key", str(built.public_key), "--key-file", str(built.chain_key), "--key-file", str(other)]
    code, out, _ = run(capsys, "verify", str(built.directory), "--public-key", str(built.public_key),
                       "--key-file", str(built.chain_key), "--json")
    assert code == 2 and "TAIL_KEY_UNAVAILABLE" in _codes(out)  # the tail's (signed) epoch uses the other key
    code, out, _ = run(capsys, "verify", str(built.directory), *both, "--json")
    assert code == 0 and json.loads(out)["macs_checked"] == json.loads(out)["records"]
    forge_tail(built, key=forged_wrapped_key)
    code, out, _ = run(capsys, "verify", str(built.directory), *both, "--json")
    assert code == 1 and "EPOCH_KEY_INVALID" in _codes(out) and "EPOCH_KEY_UNKNOWN" not in _codes(out)
