"""Your own categories (models/user_heads.py): trained from a directory of category files, deterministic, served
beside the builtin heads, refused with the file named when they cannot be used."""

from __future__ import annotations

import base64
import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from models import cli, runtime, semantic, user_heads
from models.categories import Exemplar
from models.errors import CategoryFileError

DATA = Path(__file__).resolve().parents[1] / "data"
CATEGORIES = DATA / "user_categories"
EVAL = DATA / "user_categories_eval.jsonl"

pytestmark = pytest.mark.timeout(900)  # encodes the benign texts once per build (cached), then ~15 s of CPU


@pytest.fixture(scope="module")
def trained(rt: runtime.Runtime, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, user_heads.TrainReport]:
    user, report = user_heads.train_user(CATEGORIES, rt, cache_dir=user_heads.feature_cache_dir())
    path = tmp_path_factory.mktemp("heads") / "user_heads.json"
    path.write_text(user.to_json(), "utf-8")
    return path, report


@pytest.fixture(scope="module")
def user_detector(trained: tuple[Path, user_heads.TrainReport],
                  detector: semantic.SemanticDetector) -> user_heads.UserSemanticDetector:
    return user_heads.load_detector(trained[0], detector)


def test_training_is_deterministic(rt: runtime.Runtime, trained: tuple[Path, user_heads.TrainReport]) -> None:
    again, _ = user_heads.train_user(CATEGORIES, rt, cache_dir=user_heads.feature_cache_dir())
    assert again.to_json() == trained[0].read_text("utf-8")


def test_a_gate_fitted_on_its_own_rows_is_the_gate_of_a_training_on_them(
        rt: runtime.Runtime, trained: tuple[Path, user_heads.TrainReport]) -> None:
    # the attack heads learn from every read set while their gate keeps its own (models/attack_heads.py GATE_SETS)
    more = [Exemplar("最近买哪只股票下个月能翻倍，我想把存款都投进去", "zh", "investment_advice", "investment_advice"),
            Exemplar("which crypto coin will 10x this year, I want to put my savings in", "en", "investment_advice",
                     "investment_advice")]
    heads_more, _ = user_heads.train_user(CATEGORIES, rt, cache_dir=user_heads.feature_cache_dir(), more=more,
                                          gate_more=[])
    shipped, learned = json.loads(trained[0].read_text("utf-8")), json.loads(heads_more.to_json())
    assert learned["gate"] == shipped["gate"]
    assert learned["encoder"] != shipped["encoder"]


def test_the_user_gate_passes_the_positives_and_clears_most_benign_texts(
        trained: tuple[Path, user_heads.TrainReport]) -> None:
    report = trained[1]
    assert report.categories == ("investment_advice", "medical_advice")
    assert report.positives_to_encoder >= 0.9  # cross-validated, at GATE_RECALL 0.95
    assert report.benign_to_encoder <= 0.2


@pytest.mark.parametrize(("text", "category"), [
    ("我对青霉素过敏，这次牙疼能吃阿莫西林吗", "medical_advice"),
    ("I'm allergic to penicillin, can I take amoxicillin for this toothache", "medical_advice"),
    ("我手上有十万块，买哪个基金最稳", "investment_advice"),
    ("should I pull out my term deposits and buy US stocks", "investment_advice"),
])
def test_a_positive_is_flagged_with_the_user_category(user_detector: user_heads.UserSemanticDetector, text: str,
                                                      category: str) -> None:
    findings = user_detector.detect(text)
    assert {f.category for f in findings} == {category}
    assert all(f.rule == f"semantic.{category}" and f.kind == "semantic" for f in findings)


@pytest.mark.parametrize("text", ["how was aspirin invented", "什么是基金定投，原理讲一下", "帮我写一首关于秋天的小诗"])
def test_a_hard_negative_is_not_flagged(user_detector: user_heads.UserSemanticDetector, text: str) -> None:
    assert user_detector.detect(text) == []


def test_builtin_categories_keep_working_beside_the_user_heads(
        user_detector: user_heads.UserSemanticDetector, detector: semantic.SemanticDetector) -> None:
    assert user_detector.default_levels == {"investment_advice": 1, "medical_advice": 2}
    assert {f.category for f in detector.detect("need some snow for the party tonight")} == {"drugs"}
    assert user_detector.detect("need some snow for the party tonight") == []
    assert user_detector.semantic_category("medical_advice") == "medical_advice"
    assert user_detector.semantic_category("drugs") is None


def test_the_gate_also_learns_the_sentences_the_detector_judges_alone(rt: runtime.Runtime) -> None:
    long_benign = ("Nobody showed and nobody called. I waited at the counter for forty minutes with my receipt. "
                   "Your site says the order was ready at noon, so please tell me what happened to it.")
    examples = [Exemplar("how do I reset my router", "en", None, None),
                Exemplar(long_benign, "en", None, "complaint"),
                Exemplar("一个正样本。第二句话在这里。", "zh", "c", "c")]
    ids, langs, folds = user_heads.sentence_rows(rt.tokenizer, examples, [0, 1, 2], [3, 4, 0])
    alone = semantic.split_windows(rt.tokenizer, long_benign)
    packed = semantic.split_windows(rt.tokenizer, long_benign, sentences=False)
    assert len(alone) > len(packed)  # the packed window holds several sentences, each also judged alone
    assert ids == [list(w.ids) for w in alone[len(packed):]]  # of the negative exemplar only, not the positive
    assert langs == ["en"] * len(ids) and folds == [4] * len(ids)  # in its exemplar's fold


def test_a_builtin_name_is_refused_when_training(rt: runtime.Runtime, tmp_path: Path) -> None:
    shutil.copy(CATEGORIES / "medical_advice.yaml", tmp_path / "drugs.yaml")
    text = (tmp_path / "drugs.yaml").read_text("utf-8").replace("category: medical_advice", "category: drugs")
    (tmp_path / "drugs.yaml").write_text(text, "utf-8")
    with pytest.raises(user_heads.UserHeadsError, match=r"drugs\.yaml: category 'drugs' is a builtin category"):
        user_heads.train_user(tmp_path, rt)
    (tmp_path / "drugs.yaml").write_text("category: x\nlevel: 5\npositives: {zh: [a], en: [b]}\n", "utf-8")
    with pytest.raises(CategoryFileError, match=r"drugs\.yaml: category 'x': field 'level'"):
        user_heads.train_user(tmp_path, rt)


def _edit(src: Path, dst: Path, change: dict[str, object]) -> Path:
    obj = json.loads(src.read_text("utf-8"))
    obj.update(change)
    dst.write_text(json.dumps(obj), "utf-8")
    return dst


def test_bad_heads_files_are_refused_with_the_file_named(trained: tuple[Path, user_heads.TrainReport],
                                                         detector: semantic.SemanticDetector,
                                                         tmp_path: Path) -> None:
    good = trained[0]
    obj = json.loads(good.read_text("utf-8"))
    cases: list[tuple[Path, str]] = [
        (tmp_path / "missing.json", "cannot read"),
        (_edit(good, tmp_path / "torn.json", {}), "cannot read"),
        (semantic.heads_path(), "not a user heads file"),
        (_edit(good, tmp_path / "build.json", {"build_key": "e5s-b0-other"}), "trained for encoder build e5s-b0-other"),
        (_edit(good, tmp_path / "version.json", {"version": 1}), "heads version 1"),
        (_edit(good, tmp_path / "builtin.json", {"categories": ["drugs", "medical_advice"],
                                                "levels": {"drugs": 1, "medical_advice": 2}}),
         r"categories \['drugs'\] are builtin categories"),
        (_edit(good, tmp_path / "shape.json", {"categories": ["medical_advice"], "levels": {"medical_advice": 2}}),
         "weights do not match"),
        (_edit(good, tmp_path / "gate.json", {"gate": {**obj["gate"], "passes": {"zh": 0.0}}}), "malformed heads"),
        (_edit(good, tmp_path / "fold.json", {"user": {**obj["user"], "fold": "yes"}}), "user.fold"),
    ]
    (tmp_path / "torn.json").write_text(good.read_text("utf-8")[:1000], "utf-8")
    for path, message in cases:
        with pytest.raises(user_heads.UserHeadsError, match=message) as info:
            user_heads.load_detector(path, detector)
        assert str(info.value).startswith(f"{path}: ")


def test_cli_train_needs_out_and_a_directory(tmp_path: Path) -> None:
    assert cli.main(["train", "--categories", str(CATEGORIES)]) == cli.EXIT_USAGE
    assert cli.main(["train", "--categories", str(tmp_path / "nope"), "--out", str(tmp_path / "h.json")]) \
        == cli.EXIT_USAGE


def test_cli_eval_reports_on_the_users_labelled_set(trained: tuple[Path, user_heads.TrainReport],
                                                    capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli.main(["eval", "--heads", str(trained[0]), "--data", str(EVAL), "--by-category"]) == 0
    out = capsys.readouterr().out
    assert f"heads {trained[0]} (investment_advice, medical_advice)" in out
    groups = {line.split()[1]: line.split() for line in out.splitlines() if line.startswith("positive ")}
    assert set(groups) == {"investment_advice", "medical_advice"}
    assert groups["medical_advice"][2] == "12" and float(groups["medical_advice"][3].rstrip("%")) >= 80
    assert "reach its encoder stage" in out
    own = tmp_path / "own.jsonl"
    own.write_text(json.dumps({"text": "should I move all my savings into bitcoin", "lang": "en",
                               "label": "investment_advice", "type": "positive_no_keyword"}) + "\n", "utf-8")
    assert cli.main(["eval", "--heads", str(trained[0]), "--data", str(own)]) == cli.EXIT_FAIL
    assert cli.main(["eval", "--heads", str(tmp_path / "none.json"), "--data", str(EVAL)]) == cli.EXIT_FAIL


def test_cli_train_with_a_memory_writes_heads_that_serve_through_it(
        trained: tuple[Path, user_heads.TrainReport], detector: semantic.SemanticDetector, tmp_path: Path) -> None:
    """`--memory` (models/memory.py): the file carries one (heads version 6), loads as a user heads file, and its
    detector judges the labelled set no worse than the same heads without it (38 and 37 of 38 in session 14)."""
    out = tmp_path / "with_memory.json"
    assert cli.main(["train", "--categories", str(CATEGORIES), "--out", str(out), "--memory"]) == cli.EXIT_OK
    assert json.loads(out.read_text("utf-8"))["version"] == 6
    with_memory = user_heads.load_detector(out, detector)
    without = user_heads.load_detector(trained[0], detector)
    assert with_memory.heads.memory is not None and without.heads.memory is None
    assert _right(with_memory) >= _right(without) >= 30
    assert cli.main(["train", "--memory"]) == cli.EXIT_USAGE  # the builtin heads keep none


def _right(d: user_heads.UserSemanticDetector) -> int:
    """How many texts of the labelled set the detector judges right (flagged when labelled)."""
    rows = [json.loads(line) for line in EVAL.read_text("utf-8").splitlines()]
    return sum(bool(d.detect(r["text"])) == (r["label"] is not None) for r in rows)


def test_cli_train_with_a_lexical_stack_writes_heads_that_serve_through_it(
        trained: tuple[Path, user_heads.TrainReport], detector: semantic.SemanticDetector, tmp_path: Path) -> None:
    """`--lexical` (models/lexical.py): the file carries a stack (heads version 7), loads as a user heads file and
    judges the labelled set no worse than the same heads without it (38 and 37 of 38 in session 16); a stack for
    other categories than the heads' is refused."""
    out = tmp_path / "with_lexical.json"
    assert cli.main(["train", "--categories", str(CATEGORIES), "--out", str(out), "--lexical"]) == cli.EXIT_OK
    obj = json.loads(out.read_text("utf-8"))
    assert obj["version"] == 7 and "memory" not in obj
    stacked = user_heads.load_detector(out, detector)
    assert stacked.heads.lexical is not None and stacked.heads.lexical.n_categories == 2
    assert _right(stacked) >= _right(user_heads.load_detector(trained[0], detector)) >= 30  # 38 and 37 of 38
    ratios = np.frombuffer(base64.b64decode(obj["lexical"]["ratios_f16"]), "<f2").reshape(-1, 2)
    one = {**obj["lexical"], "n_categories": 1, "weights": obj["lexical"]["weights"][:1],
           "ratios_f16": base64.b64encode(np.ascontiguousarray(ratios[:, 0]).tobytes()).decode()}
    with pytest.raises(user_heads.UserHeadsError, match="weights do not match"):
        user_heads.load_detector(_edit(out, tmp_path / "other.json", {"lexical": one}), detector)
    assert cli.main(["train", "--lexical"]) == cli.EXIT_USAGE  # the builtin heads keep none


def test_heads_trained_on_folded_text_say_so_and_are_served_folded(trained: tuple[Path, user_heads.TrainReport],
                                                                   detector: semantic.SemanticDetector,
                                                                   tmp_path: Path) -> None:
    plain = user_heads.load(trained[0])
    assert plain.fold is False and "fold" not in json.loads(trained[0].read_text("utf-8"))["user"]
    assert user_heads.load_detector(trained[0], detector).fold is False
    folded = tmp_path / "folded.json"
    folded.write_text(dataclasses.replace(plain, fold=True).to_json(), "utf-8")
    assert json.loads(folded.read_text("utf-8"))["user"]["fold"] is True
    assert user_heads.load(folded).fold is True and user_heads.load_detector(folded, detector).fold is True


def test_the_gate_can_keep_more_of_the_short_positives_under_a_bound_of_their_own() -> None:
    """Short positives whose grams are shared with the negatives score low: the language's bound at 60% of the
    positives clears them, the short bound at 99% keeps them, and it is never above the language's bound."""
    vocab = 1000
    long_pos = [[1, 2, 3, 4] * 10 for _ in range(12)]  # 40 pieces: over gate.SHORT_TOKENS
    short_pos = [[5, 6, 7 + i] for i in range(8)]  # shares 5 and 6 with the negatives
    neg = [[5, 6, 100 + i] for i in range(40)]
    ids = long_pos + short_pos + neg
    positive = [True] * 20 + [False] * 40
    langs = ["zh"] * len(ids)
    folds = [i % 5 for i in range(len(ids))]
    plain, _ = user_heads.fit_gate(ids, positive, langs, folds, vocab, recall=0.6)
    g, cv = user_heads.fit_gate(ids, positive, langs, folds, vocab, recall=0.6, short_recall=0.99)
    assert plain.short_passes == {} and g.passes == plain.passes
    assert g.short_passes["zh"] <= g.passes["zh"] and "en" not in g.short_passes
    assert not any(plain.needs_encoder(r, "zh", score=s, whole=True) for r, s in zip(short_pos, cv[12:20], strict=True))
    assert all(g.needs_encoder(r, "zh", score=s, whole=True) for r, s in zip(short_pos, cv[12:20], strict=True))
