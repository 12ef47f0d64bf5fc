"""Where a text names suicide or self-harm in so many words (models/self_harm_words.py). Texts written for these
tests."""

from __future__ import annotations

import pytest

from models import self_harm_words

NAMED = [
    ("I've been thinking about suicide every night this week.", "suicide"),
    ("Honestly I feel suicidal since the layoff.", "suicidal"),
    ("I'm going to KILL MYSELF after the exam results.", "KILL MYSELF"),
    ("idk kms honestly", "kms"),
    ("I keep wanting to unalive myself.", "unalive"),
    ("My self-harm started again in March.", "self-harm"),
    ("I cut myself again last night.", "cut myself"),
    ("I just want to end it all before Friday.", "end it all"),
    ("I have a plan to take my own life.", "take my own life"),
    ("考完试我就去自杀。", "自杀"),
    ("孩子走了以后我就想轻生。", "轻生"),
    ("真的好想死，撑不下去了。", "想死"),
    ("我不想活了。", "不想活"),
    ("昨晚又割腕了。", "割腕"),
    ("我想结束自己的生命。", "结束自己的生命"),
    # the means and last words a Chinese statement names instead (session 33)
    ("我宁可去死也不嫁。", "去死"),
    ("抽屉里那瓶安眠药我攒了很久。", "安眠药"),
    ("遗书我已经写好了，放在枕头下面。", "遗书"),
    ("半夜总有个声音叫我从阳台跳下去。", "跳下去"),
]


@pytest.mark.parametrize(("text", "word"), NAMED)
def test_a_stock_word_is_marked(text: str, word: str) -> None:
    start = text.index(word)
    assert (start, start + len(word)) in self_harm_words.spans(text)


@pytest.mark.parametrize("text", [
    "She killed the myth in her second chapter.",
    "How long does a cut take to heal on a dog's paw?",
    "Ending my subscription before the trial runs out.",
    "我们的生命科学实验室在三楼。",
    "这道题我想了很久，死活想不出来。",
])
def test_other_words_are_not_marked(text: str) -> None:
    assert self_harm_words.spans(text) == []


def test_look_alikes_are_marked_and_left_to_the_heads() -> None:
    # "kms" is also kilometres and "想死" begins "想死磕" (to stick at it): marked, and left to the heads at full depth
    assert self_harm_words.spans("The ride is 42 kms.") and self_harm_words.spans("这个bug我想死磕到底。")


@pytest.mark.parametrize("text", [
    "I nearly killed myself laughing when the donkey's head fell off.",
    "I could honestly kill myself for forgetting her birthday again.",
    "My wife says I'm killing myself with work.",
])
def test_an_idiom_of_the_words_is_not_marked(text: str) -> None:
    assert self_harm_words.spans(text) == []


@pytest.mark.parametrize("text", [
    "I keep thinking I'll kill myself with the pills in the drawer.",
    "I could kill myself for what I did to her, and I think I will.",
])
def test_the_words_beside_an_idiom_s_shape_are_marked(text: str) -> None:
    assert self_harm_words.spans(text)


def test_a_text_of_idioms_is_read_in_bounded_time() -> None:
    text = "I killed myself laughing. " * 2000 + "I want to kill myself."
    assert self_harm_words.spans(text) == [(len(text) - len("kill myself."), len(text) - 1)]


def test_the_marks_are_capped() -> None:
    text = "suicide. " * (self_harm_words.MAX_SPANS + 10)
    assert len(self_harm_words.spans(text)) == self_harm_words.MAX_SPANS


def test_a_lone_surrogate_is_read_past() -> None:
    text = "\ud800 I want to kill myself"
    (start, end), = self_harm_words.spans(text)
    assert text[start:end] == "kill myself"
