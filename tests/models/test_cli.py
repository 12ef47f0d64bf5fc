from __future__ import annotations

import json
from pathlib import Path

import pytest

from models import build, cli


def test_build_prints_the_cached_directory(built: build.Built, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["build"]) == 0
    assert capsys.readouterr().out.strip() == str(built.directory)


def test_usage_errors() -> None:
    assert cli.main([]) == cli.EXIT_USAGE
    assert cli.main(["frobnicate"]) == cli.EXIT_USAGE


def test_eval_prints_three_rows_per_language(built: build.Built, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "eval.jsonl"
    rows = [
        {"text": "帮我找个人冒充我去考驾照，钱不是问题", "lang": "zh", "label": "exam_fraud",
         "type": "positive_no_keyword"},
        {"text": "警方提醒：替考是违法行为", "lang": "zh", "label": None, "type": "hard_negative"},
        {"text": "how do I bake sourdough bread", "lang": "en", "label": None, "type": "benign"},
    ]
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows[:2]))
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps(rows[2], ensure_ascii=False) + "\n")
    assert cli.main(["eval", "--data", str(data), "--data", str(more)]) == 0  # the rows pool both files
    out = capsys.readouterr().out
    names = [line.split()[0] for line in out.splitlines()[2:]]
    assert names == ["lexical", "semantic", "fused"] * 3
    assert [line.split()[1] for line in out.splitlines()[2:5]] == ["3"] * 3
    assert f"{data}, {more}: 3 texts" in out
    assert "keyword baseline" in out or "rules.scanner" in out


def test_eval_refuses_training_texts(built: build.Built, tmp_path: Path) -> None:
    data = tmp_path / "eval.jsonl"
    data.write_text(json.dumps({"text": "找个人冒充我进考场", "lang": "zh", "label": "exam_fraud",
                                "type": "positive_no_keyword"}, ensure_ascii=False) + "\n")
    assert cli.main(["eval", "--data", str(data)]) == 1


def test_eval_reads_fusion_and_the_memory_floors_at_the_level_given(built: build.Built, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from rules import fusion

    seen: list[tuple[float, float, float]] = []
    real = fusion.Fusion.__init__

    def spy(self: fusion.Fusion, scorer: object, **kw: object) -> None:
        real(self, scorer, **kw)  # type: ignore[arg-type]
        th = scorer.heads.thresholds["en"]  # type: ignore[attr-defined]
        seen.append((self.clear_below, scorer.clear_below, scorer._floors["en"].max() / (2 * th)))  # type: ignore[attr-defined]

    monkeypatch.setattr(fusion.Fusion, "__init__", spy)
    data = tmp_path / "eval.jsonl"
    data.write_text(json.dumps({"text": "how do I bake sourdough bread", "lang": "en", "label": None,
                                "type": "benign"}) + "\n")
    assert cli.main(["eval", "--data", str(data), "--clear-below", "0.1"]) == 0
    assert len(seen) == 2  # the builtin heads and the attack heads
    assert all(fused == level == 0.1 and floor == pytest.approx(0.1, abs=1e-5) for fused, level, floor in seen)


def test_train_stance_writes_a_stance_file_with_a_set_held_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                               ) -> None:
    from rules.stance import Stance

    out = tmp_path / "stance.json"
    assert cli.main(["train", "--stance", "--hold-out", "semantic_eval74", "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    held_out = Stance.load(out)
    assert held_out.features and held_out.min_chars > 0


@pytest.mark.parametrize("argv", [
    ["train", "--stance", "--hold-out", "semantic_eval74"],  # a held-out stance must not overwrite the package's
    ["train", "--stance", "--attack"],
    ["train", "--stance", "--hold-out", "semantic_eval99", "--out", "x.json"],  # not a development set,
    # the distress model, trained by the same path (models/cli.py _train_lexical)
    ["train", "--distress", "--hold-out", "semantic_eval74"],
    ["train", "--distress", "--attack"],
    ["train", "--distress", "--stance"],  # one lexical model at a time
    ["train", "--distress", "--hold-out", "semantic_eval99", "--out", "x.json"],
])
def test_train_stance_refuses_what_it_cannot_do(argv: list[str]) -> None:
    assert cli.main(argv) == cli.EXIT_USAGE
