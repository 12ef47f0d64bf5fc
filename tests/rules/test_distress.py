"""A short Chinese statement of self-harm intent or means (rules/distress.py). Texts written for these tests."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rules import distress
from rules.distress import Distress, default_distress

STATES = [
    "药我攒了两个月，今晚全吃了，谁也别拦我。",
    "车钥匙和房本都放在桌上了，我去江边走走，不回来了。",
    "遗书写好了，压在枕头底下。",
    "我把绳子挂在阳台的晾衣架上了。",
]
PLAIN = [
    "周末去爬山要带什么东西？",
    "帮我写一段给妈妈的生日祝福，五十岁。",
    "这道数学题怎么做：一个水池有两个进水管。",
    "最近加班累死了，想请两天假出去玩。",
    "电脑开机蓝屏怎么办？",
]


@pytest.mark.parametrize("text", STATES)
def test_a_short_statement_of_intent_or_means_is_a_self_harm_finding_over_the_whole_text(text: str) -> None:
    (f,) = distress.detector().detect(text)
    assert (f.kind, f.category, f.rule, f.start, f.end) == ("distress", "self_harm", "self_harm.distress", 0, len(text))


@pytest.mark.parametrize("text", PLAIN)
def test_plain_chat_is_not(text: str) -> None:
    assert not distress.detector().detect(text)


def test_only_short_chinese_texts_are_judged() -> None:
    model = default_distress()
    stated = STATES[0]
    assert model.states_intent(stated)
    # Past max_chars a text is the heads' (its windows carry it).
    long = stated + "我这几年过得很累，" * (model.max_chars // 9 + 1)
    assert len(long) > model.max_chars and model.probability(long) > 0.5 and not model.states_intent(long)
    # English is not judged: the development sets hold too few short English statements.
    assert not model.states_intent("I saved up two months of pills and tonight I take them all.")
    assert model.probability("I saved up two months of pills and tonight I take them all.") == 0.0  # no Chinese
    # Fewer than MIN_LETTERS letters or digits say too little.
    assert not model.states_intent("走了。")
    # Surrounding space is not a character of the statement.
    assert model.states_intent(f"\n  {stated}  \n")


def test_a_model_passed_in_is_used_instead_of_the_builtin() -> None:
    never = dataclasses.replace(default_distress(), threshold=1.01)
    assert not distress.detector(never).detect(STATES[0])
    assert distress.statements(STATES[0]) == [(0, len(STATES[0]))]


def test_the_file_round_trips_and_a_foreign_file_is_refused(tmp_path: Path) -> None:
    model = default_distress()
    small = dataclasses.replace(model, features=dict(list(model.features.items())[:50]))
    path = tmp_path / "d.json"
    path.write_text(small.to_json(), "utf-8")
    loaded = Distress.load(path)
    assert (loaded.threshold, loaded.max_chars, loaded.bias) == (small.threshold, small.max_chars,
                                                                  pytest.approx(small.bias))
    assert loaded.features.keys() == small.features.keys()
    path.write_text('{"format": 2, "features": {}, "thresholds": {"en": 0.7, "zh": 0.55}}', "utf-8")  # a stance
    with pytest.raises(ValueError, match="not a distress file"):
        Distress.load(path)
