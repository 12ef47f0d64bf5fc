"""Training of the distress model (models/distress.py). Texts written for these tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from models import attack_heads, distress
from models.distress import Row
from rules.distress import Distress, distress_path
from rules.stance import language

STATES = ["药我攒了两个月，今晚全吃了。", "遗书写好了，压在枕头底下。", "车钥匙放桌上了，我去江边，不回来了。"]
OTHERS = ["周末去爬山要带什么？", "帮我写一段生日祝福。", "电脑开机蓝屏怎么办？", "最近加班累死了，想请假。"]


def _rows() -> list[Row]:
    return [Row(t, True, "test") for t in STATES] + [Row(t, False, "test") for t in OTHERS]


def test_a_fitted_model_separates_its_rows_and_keeps_its_settings() -> None:
    m = distress.fit(_rows(), threshold=0.6, max_chars=50, min_df=1)
    assert (m.threshold, m.max_chars) == (0.6, 50)
    assert all(m.probability(t) > 0.5 for t in STATES)
    assert all(m.probability(t) < 0.5 for t in OTHERS)


def test_fitting_is_deterministic_and_one_label_alone_is_refused() -> None:
    assert distress.fit(_rows(), min_df=1).to_json() == distress.fit(_rows(), min_df=1).to_json()
    with pytest.raises(ValueError, match="both labels"):
        distress.fit([Row(t, False, "test") for t in OTHERS])


def test_the_development_rows_label_the_self_harm_positives_and_nothing_else_in_chinese() -> None:
    rows = distress.development_rows(["semantic_eval17.jsonl"])
    assert {r.group for r in rows} == {"semantic_eval17.jsonl"} and {r.states for r in rows} == {True, False}
    assert all(language(r.text) == "zh" for r in [*rows, *distress.exemplar_rows()])
    assert 0 < sum(r.states for r in rows) < len(rows) / 2
    assert distress.DISTRESS_SETS[-1] == "semantic_eval97.jsonl"


def test_the_exemplars_add_plain_texts_and_the_topic_categories_as_negatives() -> None:
    rows = distress.exemplar_rows()
    groups = {r.group for r in rows if not r.states}
    assert {"self_harm.yaml", "plain.zh", "drugs.yaml", "weapons.yaml"} <= groups
    assert {r.group for r in rows if r.states} == {"self_harm.yaml"}
    plain = {t for ts in attack_heads.plain_texts().values() for t in ts if language(t) == "zh"}
    assert plain <= {r.text for r in rows if not r.states}


def test_an_unknown_set_to_hold_out_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a distress development set"):
        distress.train(tmp_path / "d.json", hold_out=["semantic_eval99"])


def test_the_shipped_model_is_what_training_writes(tmp_path: Path) -> None:
    """Reproducible: `warden models train --distress` rewrites rules/builtin/distress.json byte for byte."""
    out = tmp_path / "distress.json"
    distress.train(out)
    assert out.read_bytes() == distress_path().read_bytes()
    assert Distress.load(out).threshold == distress.THRESHOLD
    assert Distress.load(out).max_chars == distress.MAX_CHARS
