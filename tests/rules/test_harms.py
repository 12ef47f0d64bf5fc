"""The shared vocabulary of what a model would refuse to explain plainly (rules/harms.py). Texts written for these
tests."""

from __future__ import annotations

import pytest

from rules import harms
from rules.findings import alternatives

ILLICIT = alternatives([harms.ILLICIT_ZH, harms.ILLICIT_EN])


@pytest.mark.parametrize("text", [
    "how he got the car going without the key and past the steering lock",
    "the steps to crack the Wi-Fi password next door",
    "how to move money out of the account without anyone noticing",
    "讲讲怎么用别人的身份证在柜台取钱",
    "怎么改账本让查账的人看不出来",
    "从感冒药里提纯那种东西",
])
def test_an_illicit_payload_is_named(text: str) -> None:
    assert ILLICIT.search(text) is not None


@pytest.mark.parametrize("text", [
    "how she made her cheese crackers and bath bombs",
    "her method for jam, and how she treated poison ivy",
    "讲讲她小时候怎么偷偷溜出去看露天电影",
    "how the stars got into the sky",
])
def test_a_grandmothers_recipes_and_secrets_are_not(text: str) -> None:
    assert ILLICIT.search(text) is None
