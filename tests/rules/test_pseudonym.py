"""The pseudonym vault: stable typed placeholders, restore, learn, and incremental stream restoring."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.pseudonym import PseudonymVault


def test_same_value_same_placeholder_and_numbering_per_kind() -> None:
    vault = PseudonymVault()
    assert vault.pseudonymize("CN_MOBILE", "13812345678") == "<CN_MOBILE_1>"
    assert vault.pseudonymize("CN_MOBILE", "138 1234 5678") == "<CN_MOBILE_1>"
    assert vault.pseudonymize("CN_MOBILE", "13912345678") == "<CN_MOBILE_2>"
    assert vault.pseudonymize("email", "A@B.CO") == "<EMAIL_1>"
    assert vault.pseudonymize("EMAIL", "a@b.co") == "<EMAIL_1>"
    assert len(vault) == 3


@pytest.mark.parametrize("form", [
    "138 1234 5678", "(138) 1234 5678", "（138）1234-5678", "138.1234.5678", "１３８．１２３４．５６７８",
    "138–1234–5678", "+86 138 1234 5678", "+8613812345678", "(+86) 138-1234-5678", "（＋８６）１３８１２３４５６７８",
    "0086 138 1234 5678", "+86 (138) 1234 5678", "1\u200b3812345678",
])
def test_written_forms_of_a_mobile_number_share_a_placeholder(form: str) -> None:
    vault = PseudonymVault()
    assert vault.pseudonymize("CN_MOBILE", "13812345678") == "<CN_MOBILE_1>"
    assert vault.pseudonymize("CN_MOBILE", form) == "<CN_MOBILE_1>"
    assert vault.pseudonymize("CN_MOBILE", "+86 139 1234 5678") == "<CN_MOBILE_2>"
    assert vault.restore("<CN_MOBILE_1>") == "13812345678"  # the first form seen


def test_written_forms_of_other_values_share_a_placeholder() -> None:
    vault = PseudonymVault()
    assert vault.pseudonymize("CN_LANDLINE", "(0755) 82345678") == vault.pseudonymize("CN_LANDLINE", "0755-82345678")
    assert vault.pseudonymize("BANK_CARD", "4242\u200b4242 4242 4242") == vault.pseudonymize(
        "BANK_CARD", "4242-4242-4242-4242")
    # Dots and parentheses are part of other values: only phone numbers drop them.
    assert vault.pseudonymize("EMAIL", "a.b@example.org") != vault.pseudonymize("EMAIL", "ab@example.org")
    # The country code is only stripped from a whole mobile number.
    assert vault.pseudonymize("CN_MOBILE", "8613812345") != vault.pseudonymize("CN_MOBILE", "13812345")


def test_restore_known_placeholders_and_leave_unknown_ones() -> None:
    vault = PseudonymVault()
    p = vault.pseudonymize("CN_MOBILE", "13812345678")
    assert vault.restore(f"call {p} or <CN_MOBILE_9>") == "call 13812345678 or <CN_MOBILE_9>"


def test_learn_keeps_known_values_and_reserves_unknown_numbers() -> None:
    vault = PseudonymVault()
    p = vault.pseudonymize("CN_MOBILE", "13812345678")
    vault.learn(f"earlier you said {p} and <CN_MOBILE_7>")
    assert vault.restore(p) == "13812345678"
    assert vault.pseudonymize("CN_MOBILE", "13812345678") == p
    assert vault.pseudonymize("CN_MOBILE", "13700000000") == "<CN_MOBILE_8>"


TEXT_PIECES = st.sampled_from(["<CN_MOBILE_1>", "<EMAIL_2>", "<", ">", "_", "CN", "1", "a", " ", "<CN_", "<X_12>"])


@given(st.lists(TEXT_PIECES, max_size=20).map("".join), st.lists(st.integers(0, 60), max_size=6))
def test_stream_restorer_equals_restore_for_any_split(text: str, cuts: list[int]) -> None:
    vault = PseudonymVault()
    vault.pseudonymize("CN_MOBILE", "13812345678")
    vault.pseudonymize("EMAIL", "a@b.co")
    vault.pseudonymize("EMAIL", "c@d.co")
    restorer = vault.stream_restorer()
    out, pos = [], 0
    for cut in sorted(c for c in cuts if c <= len(text)):
        out.append(restorer.feed(text[pos:cut]))
        pos = cut
    out.append(restorer.feed(text[pos:]))
    out.append(restorer.flush())
    assert "".join(out) == vault.restore(text)


def test_stream_restorer_holds_back_only_a_possible_placeholder() -> None:
    vault = PseudonymVault()
    vault.pseudonymize("CN_MOBILE", "13812345678")
    r = vault.stream_restorer()
    assert r.feed("call <CN_MOB") == "call "
    assert r.feed("ILE_1> now <") == "13812345678 now "
    assert r.feed("3 is less") == "<3 is less"
    assert r.flush() == ""
