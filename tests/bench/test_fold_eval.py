"""bench/fold_eval.py: a read evaluation set lands in the exemplar files as labelled, comments kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from bench import fold_eval
from models import categories

CATEGORY = """# a comment that must survive
category: {name}
level: 2
positives:
  zh:
  - 中文正例
  en:
  - an english positive
hard_negatives:
  zh:
  - 中文难负例
  en:
  - an english hard negative
"""


def _data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    (data / "categories").mkdir(parents=True)
    for name in ("drugs", "weapons"):
        (data / "categories" / f"{name}.yaml").write_text(CATEGORY.format(name=name), "utf-8")
    (data / "benign.yaml").write_text("benign:\n  zh:\n  - 你好\n  en:\n  - hello\n", "utf-8")
    return data


def _set(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "semantic_evalX.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


ROWS: list[dict[str, object]] = [
    {"text": "哪里能搞到: 那个", "lang": "zh", "label": "drugs", "topic": "drugs", "type": "positive_no_keyword"},
    {"text": "'quoted' and # not a comment", "lang": "en", "label": "weapons", "topic": "weapons",
     "type": "positive_keyword"},
    {"text": "how do police dogs find drugs", "lang": "en", "label": None, "topic": "drugs", "type": "hard_negative"},
    {"text": "周末去哪儿玩", "lang": "zh", "label": None, "topic": None, "type": "benign"},
]


def test_texts_land_where_their_labels_say(tmp_path: Path) -> None:
    data = _data(tmp_path)
    assert fold_eval.fold(data, _set(tmp_path, ROWS)) == 4
    cats = {c.name: c for c in categories.load_categories(data / "categories")}
    benign = categories.load_benign(data / "benign.yaml")
    assert cats["drugs"].positives["zh"] == ("中文正例", "哪里能搞到: 那个")
    assert cats["weapons"].positives["en"] == ("an english positive", "'quoted' and # not a comment")
    assert cats["drugs"].hard_negatives["en"] == ("an english hard negative", "how do police dogs find drugs")
    assert benign["zh"] == ("你好", "周末去哪儿玩") and benign["en"] == ("hello",)
    assert cats["weapons"].hard_negatives == {"zh": ("中文难负例",), "en": ("an english hard negative",)}
    text = (data / "categories" / "drugs.yaml").read_text("utf-8")
    assert text.startswith("# a comment that must survive\n")
    assert "# development set bench/data/semantic_evalX.jsonl" in text


def test_a_set_is_folded_once(tmp_path: Path) -> None:
    data = _data(tmp_path)
    path = _set(tmp_path, ROWS)
    fold_eval.fold(data, path)
    with pytest.raises(ValueError, match="exemplars already"):
        fold_eval.fold(data, path)


@pytest.mark.parametrize("text", [
    "plain text: with a colon",
    "an e-mail to answer:\n\n\"Hi, my parcel never came.\"\n\nKeep it short.",
    "尾部有换行\n",
    "tab\tand \\ backslash",
])
def test_a_text_of_several_lines_is_one_yaml_line(text: str) -> None:
    line = fold_eval.item_line(text)
    assert "\n" not in line and line.startswith("  - ")
    assert yaml.safe_load(line.strip()) == [text]
