"""Tri-state validators against their standards' published examples and edge cases."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules import checksums
from tests.rules import values as v


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (v.ID_18, True),
        (v.ID_18.lower(), True),  # a lower-case x check character
        (v.bad_check(v.ID_18), False),
        ("110105194902291234", False),  # 1949 was no leap year
        ("990105194912310021", False),  # no province 99
        ("110105189912310021", False),  # before 1900 (and a bad check)
        (v.ID_15, True),
        ("110105491331002", False),
    ],
)
def test_cn_resident_id(value: str, expected: bool) -> None:
    assert checksums.cn_resident_id(value) is expected


def test_luhn_and_networks() -> None:
    assert checksums.luhn("79927398713")  # the ISO/IEC 7812 textbook example
    assert not checksums.luhn("79927398710")
    assert checksums.card_network(v.VISA) == "visa"
    assert checksums.card_network(v.MASTERCARD_2) == "mastercard"
    assert checksums.card_network(v.AMEX) == "amex"
    assert checksums.card_network(v.JCB) == "jcb"
    assert checksums.card_network(v.DISCOVER) == "discover"
    assert checksums.card_network(v.luhn_complete("621700000000000000")) == "unionpay"
    assert checksums.card_network(v.luhn_complete("123456789012345")) is None
    assert checksums.bank_card(v.luhn_complete("37828224631000" + "0")) is False  # Amex is 15 digits


def test_uscc_needs_both_checks() -> None:
    assert checksums.cn_uscc(v.USCC) is True
    assert checksums.cn_uscc("91350100M000100Y43") is True  # a published sample code
    assert checksums.cn_uscc(v.USCC[:-1] + "0") is False
    broken_org = v.USCC[:16] + ("1" if v.USCC[16] != "1" else "2")
    assert checksums.cn_uscc(broken_org) is False


def test_ipv4_ipv6_ssn_iban_plate() -> None:
    assert checksums.ipv4("255.255.255.255") is True
    assert checksums.ipv4("256.1.1.1") is False
    assert checksums.ipv4("01.2.3.4") is False
    assert checksums.ipv6("2001:db8::1") is True
    assert checksums.ipv6("::") is False
    assert checksums.ipv6("10:30:00") is False
    assert checksums.us_ssn("078051120") is True
    for bad in ("000051120", "666051120", "900051120", "078001120", "078050000"):
        assert checksums.us_ssn(bad) is False
    assert checksums.iban("GB82WEST12345698765432") is True  # the ISO 13616 example
    assert checksums.iban("GB82WEST12345698765433") is False
    assert checksums.iban("DE8937040044053201300") is False  # DE is 22 characters
    assert checksums.cn_license_plate("京A12345") is None
    assert checksums.cn_license_plate("京ABCD12") is False
    assert checksums.cn_license_plate("粤BD12345") is None


@given(st.lists(st.sampled_from(["", "0", "1", "ab", "ffff", "12345", "1.2.3.4", "1.2.3.256", ":", "g"]),
                min_size=1, max_size=10).map(":".join))
def test_ipv6_agrees_with_the_standard_library(value: str) -> None:
    try:
        ipaddress.IPv6Address(value)
        expected = value.strip(":") != ""
    except ValueError:
        expected = False
    assert checksums.ipv6(value) is expected
