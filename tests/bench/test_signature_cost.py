"""bench/signature_cost.py: the signatures' cost per text, here and in another checkout in the same run."""

from __future__ import annotations

import pytest

from bench import signature_cost


def test_each_signature_and_all_of_them_are_timed_against_another_checkout(capsys: pytest.CaptureFixture[str]) -> None:
    # the same checkout as the other one: the subprocess path runs and both columns are filled
    signature_cost.main(["--sets", "17-17", "--against", str(signature_cost.ROOT)])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{len(signature_cost.texts(signature_cost.ROOT, '17-17'))} texts")
    rows = {line.split()[0]: line.split()[1:] for line in out[2:]}
    assert set(rows) == {name for name, _ in signature_cost.SIGNATURES} | {"all"}
    here, there, ratio = (float(v) for v in rows["all"])
    assert here > 0 and there > 0 and ratio == pytest.approx(here / there, rel=0.01)
