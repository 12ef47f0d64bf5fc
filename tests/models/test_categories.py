from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models import attack_heads, categories, evaluate
from models.errors import CategoryFileError


def test_shipped_categories_load() -> None:
    cats = categories.load_categories()
    assert [c.name for c in cats] == ["drugs", "exam_fraud", "fraud_scam", "gambling", "weapons"]
    for c in cats:
        assert c.level in (1, 2, 3)
        assert all(c.positives[lang] and c.hard_negatives[lang] for lang in categories.LANGS)


EVAL_SETS = sorted(evaluate.data_path("semantic_eval.jsonl").parent.glob("semantic_eval*.jsonl"))
# per language: 60 positives without keywords, 15 with, 35 hard negatives, 60 plain benign
EVAL_MIX = {"positive_no_keyword": 60, "positive_keyword": 15, "hard_negative": 35, "benign": 60}


def _training_texts() -> set[str]:
    return {e.text for e in categories.exemplars(categories.load_categories(), categories.load_benign())}


def test_every_evaluation_set_is_development_or_held_out() -> None:
    assert sorted(p.name for p in EVAL_SETS) == sorted([*evaluate.DEVELOPMENT_SETS, *evaluate.HELD_OUT_SETS,
                                                        *evaluate.ATTACK_SETS])
    assert [p.name for p in evaluate.default_eval_paths()] == list(evaluate.HELD_OUT_SETS)


@pytest.mark.parametrize("path", [p for p in EVAL_SETS if p.name not in evaluate.ATTACK_SETS], ids=lambda p: p.name)
def test_eval_set_has_its_mix(path: Path) -> None:
    items = evaluate.load_items(path)
    assert len({it.text for it in items}) == len(items) == 340
    for lang in ("zh", "en"):
        counts = Counter(it.type for it in items if it.lang == lang)
        assert counts == EVAL_MIX


def test_held_out_sets_are_not_trained_on_and_development_sets_are() -> None:
    training = _training_texts()
    for path in evaluate.default_eval_paths():
        assert not {it.text for it in evaluate.load_items(path)} & training, path.name
    cats = {c.name: c for c in categories.load_categories()}
    positives = {t for c in cats.values() for lang in categories.LANGS for t in c.positives[lang]}
    for name in evaluate.DEVELOPMENT_SETS:
        items = evaluate.load_items(evaluate.data_path(name))
        assert {it.text for it in items} <= training, name
        # trained as labelled: positives under their category, hard negatives and benign texts as negatives
        for it in items:
            if it.label is not None:
                assert it.text in cats[it.label].positives[it.lang], (name, it.text)
            else:
                assert it.text not in positives, (name, it.text)


def test_unread_attack_sets_share_no_text_with_any_training_text() -> None:
    """Neither the topic exemplars nor the attack exemplars nor the plain texts they train with (benign.yaml,
    documents.yaml) nor the read development sets hold a text of an attack set not yet read (plain rows included);
    the exemplar files hold none of any attack set's (the read ones are trained on from their own files). Of a set
    whose short plain chat alone is trained on (attack_heads.PLAIN_SETS), no positive or hard negative is."""
    files = {e.text for e in categories.exemplars(categories.load_categories(attack_heads.categories_dir()),
                                                  attack_heads.plain_texts())} | _training_texts()
    trained = files | {e.text for e in (*attack_heads.development_exemplars(), *attack_heads.gate_exemplars())}
    for name in evaluate.ATTACK_SETS:
        items = evaluate.load_items(evaluate.data_path(name))
        assert {it.label for it in items} <= {None, "prompt_injection", "self_harm"}
        assert not {it.text for it in items} & files, name
        if name in attack_heads.TRAINED_SETS:
            continue
        if name in attack_heads.PLAIN_SETS:  # the gate's short plain chat
            assert not {it.text for it in items if it.type != "benign"} & trained, name
        else:
            assert not {it.text for it in items} & trained, name


def test_attack_sets_are_trained_on_only_after_their_first_reading() -> None:
    """A blind set joins evaluate.ATTACK_SETS when written and may join attack_heads.TRAINED_SETS once read: its .md
    records the reading ("## First reading"). A set read but not yet trained on waits for the next retraining."""
    assert set(attack_heads.TRAINED_SETS) <= set(evaluate.ATTACK_SETS)
    assert set(attack_heads.GATE_SETS) <= set(attack_heads.TRAINED_SETS)
    assert set(attack_heads.PLAIN_SETS) <= set(evaluate.ATTACK_SETS)
    for name in (*attack_heads.TRAINED_SETS, *attack_heads.PLAIN_SETS):
        if name == "semantic_eval17.jsonl":  # the first (session 10), read before sets came with a description
            continue
        assert "\n## First reading" in evaluate.data_path(name).with_suffix(".md").read_text("utf-8"), name


def test_errors_name_file_category_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "x.yaml"
    bad.write_text("category: drugs\nlevel: 5\npositives: {zh: [a], en: [b]}\n")
    with pytest.raises(CategoryFileError, match=r"x\.yaml: category 'drugs': field 'level'"):
        categories.load_category(bad)
    bad.write_text("category: drugs\nlevel: 2\npositives: {zh: [], en: [b]}\n")
    with pytest.raises(CategoryFileError, match="field 'positives': zh: at least one"):
        categories.load_category(bad)
    bad.write_text("category: drugs\nlevel: 2\npositives: {zh: [a], en: [b]}\ncolour: red\n")
    with pytest.raises(CategoryFileError, match="unknown fields"):
        categories.load_category(bad)
    (tmp_path / "y.yaml").write_text("category: drugs\nlevel: 2\npositives: {zh: [a], en: [b]}\n")
    bad.write_text("category: drugs\nlevel: 2\npositives: {zh: [c], en: [d]}\n")
    with pytest.raises(CategoryFileError, match="also defined"):
        categories.load_categories(tmp_path)


def test_language() -> None:
    assert categories.language("找个人冒充我进考场") == "zh"
    assert categories.language("need some snow") == "en"
    assert categories.language("用Python写一个quick sort") == "zh"
    assert categories.language("用English写a quick sort program") == "en"  # 3 ideographs of 25 letters


def _reference_language(text: str) -> str:
    """The definition, one character at a time."""
    cjk = letters = 0
    for ch in text:
        if "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf":
            cjk += 1
            letters += 1
        elif ch.isalpha():
            letters += 1
    return "zh" if letters and cjk * 5 >= letters else "en"


_LANGUAGE_CHARS = st.one_of(
    st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
    st.characters(min_codepoint=0x3400, max_codepoint=0x4DBF),
    st.characters(max_codepoint=0x7F), st.characters(codec="utf-8"), st.sampled_from("½①〇Ⅷ²éß—’。，"),
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_LANGUAGE_CHARS, max_size=30).map("".join))
def test_language_counts_as_its_definition(text: str) -> None:
    assert categories.language(text) == _reference_language(text)


def test_keyword_baseline(tmp_path: Path) -> None:
    detect = evaluate.keyword_detector(categories.load_categories())
    found = detect("教育部严厉打击替考行为")
    assert [(f.category, f.start, f.end) for f in found] == [("exam_fraud", 7, 9)]
    path = tmp_path / "e.jsonl"
    path.write_text(json.dumps({"text": "x", "lang": "fr", "label": None, "type": "benign"}) + "\n")
    with pytest.raises(ValueError, match="bad lang"):
        evaluate.load_items(path)


def test_with_exemplars_adds_each_text_where_its_labels_say() -> None:
    cats = categories.load_categories(attack_heads.categories_dir())
    benign = {"zh": ("早上好",), "en": ("good morning",)}
    more = [categories.Exemplar("pos en", "en", "self_harm", "self_harm"),
            categories.Exemplar("hn zh", "zh", None, "prompt_injection"),
            categories.Exemplar("plain en", "en", None, None),
            categories.Exemplar("pos en 2", "en", "self_harm", "self_harm")]
    grown, plain = categories.with_exemplars(cats, benign, more)
    by_name = {c.name: c for c in grown}
    before = {c.name: c for c in cats}
    assert by_name["self_harm"].positives["en"] == (*before["self_harm"].positives["en"], "pos en", "pos en 2")
    assert by_name["prompt_injection"].hard_negatives["zh"] == (*before["prompt_injection"].hard_negatives["zh"],
                                                                "hn zh")
    assert by_name["prompt_injection"].positives == before["prompt_injection"].positives
    assert plain == {"zh": ("早上好",), "en": ("good morning", "plain en")}
    assert categories.with_exemplars(cats, benign, []) == (cats, {k: tuple(v) for k, v in benign.items()})
    with pytest.raises(ValueError, match="drugs"):
        categories.with_exemplars(cats, benign, [categories.Exemplar("x", "en", "drugs", "drugs")])
