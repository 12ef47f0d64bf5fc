"""Masking formats per kind, the seed mask syntax, and properties: masked values never stay visible and
offsets always point at the raw text."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import masking
from rules.findings import Action
from rules.policy import MaskSpec
from rules.pseudonym import PseudonymVault
from rules.scanner import Scanner
from tests.rules import values as v

SCANNER = Scanner.load()


@pytest.mark.parametrize(
    ("value", "spec", "expected"),
    [
        ("110105199001011234", MaskSpec("keep", first=6, last=4), "110105********1234"),
        ("13812345678", MaskSpec("pattern", pattern="###****####"), "138****5678"),
        ("138-1234-5678", MaskSpec("pattern", pattern="###****####"), "138-****-5678"),
        ("+86 138 1234 5678", MaskSpec("pattern", pattern="###****####"), "+86 138 **** 5678"),
        ("4242424242424242", MaskSpec("pattern", pattern="****-****-****-####"), "****-****-****-4242"),
        ("4242 4242 4242 4242", MaskSpec("pattern", pattern="****-****-****-####"), "****-****-****-4242"),
        ("110105199001011234", MaskSpec("pattern", pattern="****-****-****-####"), "******-****-****-1234"),
        ("378282246310005", MaskSpec("pattern", pattern="****-****-****-####"), "***-****-****-0005"),
        ("zhang.san@example.com", MaskSpec("email"), "z***@example.com"),
        ("AKIAIOSFODNN7EXAMPLE", MaskSpec("replace", text="[REDACTED]"), "[REDACTED]"),
        ("12", MaskSpec("keep", first=6, last=4), "**"),
    ],
)
def test_mask_formats(value: str, spec: MaskSpec, expected: str) -> None:
    assert masking.mask_value(value, spec) == expected


def test_default_masks_in_a_sentence() -> None:
    text = f"身份证{v.ID_18}，手机13812345678，邮箱zhang.san@example.com"
    out = masking.apply(text, SCANNER.scan(text), None)
    assert out == "身份证110105********002X，手机138****5678，邮箱z***@example.com"


@pytest.mark.parametrize(("text", "expected"), [
    # The embedded IPv4 address is part of the IPv6 one: masked whole, not as "::****:***.0.2.33".
    ("src ::ffff:192.0.2.33 dropped", "src ::****:***.*.*.** dropped"),
    ("地址是２００１：ｄｂ８：：１谢谢", "地址是****：***：：*谢谢"),
    ("ip:fe80::1", "ip:****::*"),
])
def test_ipv6_is_masked_whole(text: str, expected: str) -> None:
    assert masking.apply(text, SCANNER.scan(text), None) == expected


def test_block_and_annotate_leave_text_alone() -> None:
    text = "找人代考"
    result = SCANNER.scan(text)
    assert result.action is Action.BLOCK
    assert masking.apply(text, result, None) == text


def test_pseudonymize_uses_the_vault(tmp_path: Path) -> None:
    rule = tmp_path / "p.json"
    rule.write_text('{"rule": "CHN_MOBILE", "action": "pseudonymize"}', "utf-8")
    scanner = Scanner.load([rule])
    vault = PseudonymVault()
    text = "打13812345678或者138 1234 5678，不是13912345678"
    out = masking.apply(text, scanner.scan(text), vault)
    assert out == "打<CN_MOBILE_1>或者<CN_MOBILE_1>，不是<CN_MOBILE_2>"
    assert vault.restore(out) == "打13812345678或者13812345678，不是13912345678"


PII_VALUES = st.sampled_from(
    [v.ID_18, v.ID_18B, v.VISA, v.UNIONPAY_19, "13812345678", "zhang.san@example.com", v.USCC, v.IBAN_GB,
     "078-05-1120", "AKIAIOSFODNN7EXAMPLE", v.fullwidth("13912345678"), "192.168.10.20"]
)
FILLER = st.text(alphabet=st.sampled_from(list("的了是在我有他这 ,.，。abcXYZ-_\n")), max_size=12)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(FILLER, PII_VALUES), min_size=1, max_size=5), FILLER)
def test_masking_never_leaves_a_listed_value_visible(parts: list[tuple[str, str]], tail: str) -> None:
    text = "".join(f"{filler} {value} " for filler, value in parts) + tail
    result = SCANNER.scan(text)
    masked = masking.apply(text, result, None)
    for _, value in parts:
        assert value not in masked
    for f in result.findings:
        # offsets are Python string indices into the raw text and cover a listed value exactly
        assert 0 <= f.start < f.end <= len(text)
        assert text[f.start : f.end] in {value for _, value in parts}
