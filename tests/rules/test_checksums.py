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


# Textbook forms of the checks, one character at a time: the validators compute them over bytes in C.


def _luhn_reference(digits: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _uscc_reference(value: str) -> bool:
    v = value.upper()
    if len(v) != 18 or any(c not in checksums.USCC_CHARS for c in v) or not v[2:8].isdigit():
        return False
    total = sum(checksums.USCC_CHARS.index(c) * pow(3, i, 31) for i, c in enumerate(v[:17]))
    if checksums.USCC_CHARS[(31 - total % 31) % 31] != v[17]:
        return False
    org = v[8:17]
    r = 11 - sum(int(c, 36) * w for c, w in zip(org[:8], (3, 7, 9, 10, 5, 8, 4, 2), strict=True)) % 11
    return org[8] == ("X" if r == 10 else "0" if r == 11 else str(r))


def _iban_reference(value: str) -> bool:
    v = value.upper()
    expected = checksums.IBAN_LENGTHS.get(v[:2])
    if (expected is not None and len(v) != expected) or not 15 <= len(v) <= 34 or not v.isalnum():
        return False
    return int("".join(str(int(c, 36)) for c in v[4:] + v[:4])) % 97 == 1


@given(st.text("0123456789", min_size=1, max_size=25))
def test_luhn_is_the_textbook_check(digits: str) -> None:
    assert checksums.luhn(digits) is _luhn_reference(digits)


def test_luhn_rejects_what_is_not_ascii_digits() -> None:
    assert checksums.luhn("7992739871a") is False
    assert checksums.luhn("７９９２７３９８７１３") is False  # full-width: the base view has made them ASCII


@given(st.text(checksums.USCC_CHARS + "IOSVZio-é", min_size=17, max_size=19)
       | st.text(checksums.USCC_CHARS, min_size=18, max_size=18))
def test_uscc_is_the_textbook_check(value: str) -> None:
    assert checksums.cn_uscc(value) is _uscc_reference(value)


@given(st.text("0123456789", min_size=17, max_size=17))
def test_every_uscc_body_has_one_valid_check_character(body: str) -> None:
    valid = [c for c in checksums.USCC_CHARS if checksums.cn_uscc(body + c)]
    assert len(valid) <= 1
    assert valid == [c for c in checksums.USCC_CHARS if _uscc_reference(body + c)]


@given(st.sampled_from(["GB", "DE", "FR", "NL", "XK", "gb"]).flatmap(
    lambda cc: st.text("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=13, max_size=32).map(lambda rest: cc + rest)))
def test_iban_is_the_textbook_check(value: str) -> None:
    assert checksums.iban(value) is _iban_reference(value)


def _network_reference(digits: str) -> str | None:
    n = len(digits)
    two, four = int(digits[:2]), int(digits[:4])
    if two in (34, 37):
        return "amex" if n == 15 else None
    if n < 16 or n > 19:
        return None
    if digits[0] == "4":
        return "visa"
    if 51 <= two <= 55 or 2221 <= four <= 2720:
        return "mastercard" if n == 16 else None
    if 3528 <= four <= 3589:
        return "jcb"
    if four == 6011 or 644 <= int(digits[:3]) <= 649 or two == 65 or 622126 <= int(digits[:6]) <= 622925:
        return "discover"
    return "unionpay" if two == 62 else None


@given(st.sampled_from(["4", "34", "37", "51", "55", "2221", "2720", "2719", "3528", "3589", "6011", "644", "649",
                        "65", "622126", "622925", "62", "1", "99"]).flatmap(
    lambda prefix: st.text("0123456789", min_size=13, max_size=20).map(lambda rest: (prefix + rest)[:20])))
def test_card_network_reads_the_issuer_ranges(digits: str) -> None:
    assert checksums.card_network(digits) == _network_reference(digits)
