"""bench/eval_distress.py's pieces (the reading itself fits a model per block: minutes, run by hand)."""

from __future__ import annotations

from bench import eval_distress
from models.evaluate import Item


def test_blocks_parse_ranges_and_single_sets() -> None:
    assert eval_distress.blocks("61-67,70,75-79") == [(61, 67), (70, 70), (75, 79)]
    assert eval_distress.set_number("semantic_eval64.jsonl") == 64


def test_rows_are_grouped_by_label_and_topic() -> None:
    groups = [eval_distress._group(Item("t", "zh", label, "x", topic)) for label, topic in
              [("self_harm", "self_harm"), (None, "self_harm"), ("prompt_injection", "prompt_injection"),
               (None, "prompt_injection"), (None, None)]]
    assert groups == list(eval_distress.GROUPS)
