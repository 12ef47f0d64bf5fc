"""Table-driven tests per PII detector: valid, valid with separators, invalid checksum, embedded in a Chinese
sentence without spaces, full-width digits; plus boundaries (digit runs) and context words."""

from __future__ import annotations

import pytest

from rules.normalize import NormalizeConfig, Views
from rules.pii import BUILTIN_SPECS, PiiDetector
from rules.scanner import Scanner
from tests.rules import values as v

DETECTOR = PiiDetector(BUILTIN_SPECS, {})
CONFIG = NormalizeConfig()


def found(text: str) -> list[tuple[str, str]]:
    """(kind, raw text of the finding) for every finding in `text`."""
    return [(f.kind, text[f.start : f.end]) for f in DETECTOR.detect_views(Views(text, CONFIG))]


# kind, valid value, same value with separators (or None), a value failing the kind's check (or None)
TABLE: list[tuple[str, str, str | None, str | None]] = [
    ("cn_resident_id", v.ID_18, v.spaced(v.ID_18, (6, 8)), v.bad_check(v.ID_18)),
    ("cn_resident_id", v.ID_18B, v.spaced(v.ID_18B, (6, 8), "-"), "110105194902301234"),  # Feb 30
    ("cn_resident_id", v.ID_15, None, "110105491331002"),  # month 13
    ("bank_card", v.VISA, v.spaced(v.VISA, (4, 4, 4)), v.bad_check(v.VISA)),
    ("bank_card", v.UNIONPAY_19, v.spaced(v.UNIONPAY_19, (4, 4, 4, 4)), v.bad_check(v.UNIONPAY_19)),
    ("bank_card", v.MASTERCARD_2, v.spaced(v.MASTERCARD_2, (4, 4, 4), "-"), v.bad_check(v.MASTERCARD_2)),
    ("bank_card", v.AMEX, v.spaced(v.AMEX, (4, 6)), v.bad_check(v.AMEX)),
    ("bank_card", v.JCB, v.spaced(v.JCB, (4, 4, 4)), v.bad_check(v.JCB)),
    ("bank_card", v.DISCOVER, v.spaced(v.DISCOVER, (4, 4, 4)), v.bad_check(v.DISCOVER)),
    ("cn_mobile", "13812345678", "138 1234 5678", None),
    ("cn_mobile", "+8613812345678", "+86 138-1234-5678", None),
    ("cn_mobile", "008613912345678", "0086 139 1234 5678", None),
    ("cn_mobile", "+86(138)12345678", "+86 (138) 1234 5678", None),
    ("cn_mobile", "(+86)13812345678", "(+86) 138 1234 5678", None),
    ("cn_mobile", "(138)12345678", "(138) 1234-5678", None),
    ("cn_mobile", "13812345678", "1381234 5678", None),
    ("cn_mobile", "+8613812345678", "+86 138.1234.5678", None),
    ("cn_mobile", "13912345678", "139.1234.5678", None),
    ("cn_landline", "01062345678", "010-62345678", None),
    ("cn_landline", "075582345678", "(0755) 82345678", None),
    ("cn_uscc", v.USCC, None, v.USCC[:-1] + ("B" if v.USCC[-1] != "B" else "C")),
    ("cn_passport", "E12345678", None, None),
    ("cn_passport", "EA1234567", None, None),
    ("cn_passport", "DE1234567", None, None),
    ("cn_passport", "S1234567", None, None),
    ("cn_passport", "PE1234567", None, None),
    ("hk_macau_permit", "C12345678", None, None),
    ("hk_macau_permit", "H1234567890", None, None),  # H12345678: also a SAR passport (test_passports)
    ("cn_license_plate", "京A12345", "京A·12345", "京ABCDEF"),
    ("cn_license_plate", "粤BD12345", None, None),
    ("email", "zhang.san@example.com", None, None),
    ("ipv4", "192.168.1.20", None, "192.168.1.256"),
    ("ipv6", "2001:db8::8a2e:370:7334", None, None),
    ("ipv6", "fe80::1", None, None),
    ("ipv6", "1:2:3:4:5:6:7::", None, "1:2:3:4:5:6:7:8:9"),
    ("us_ssn", "078-05-1120", "078 05 1120", "666-05-1120"),
    ("iban", v.IBAN_DE, v.spaced(v.IBAN_DE, (4, 4, 4, 4, 4)), v.bad_check(v.IBAN_DE)),
    ("iban", v.IBAN_GB, v.spaced(v.IBAN_GB, (4, 4, 4, 4, 4)), v.bad_check(v.IBAN_GB)),
    ("secret", "AKIAIOSFODNN7EXAMPLE", None, None),
    ("secret", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     None, None),
    ("secret", "ghp_" + "a1B2" * 9, None, None),
]
IDS = [f"{kind}:{value}" for kind, value, _, _ in TABLE]


@pytest.mark.parametrize(("kind", "value", "sep", "bad"), TABLE, ids=IDS)
def test_valid_value_alone(kind: str, value: str, sep: str | None, bad: str | None) -> None:
    assert found(value) == [(kind, value)]


@pytest.mark.parametrize(("kind", "value", "sep", "bad"), TABLE, ids=IDS)
def test_valid_with_separators(kind: str, value: str, sep: str | None, bad: str | None) -> None:
    if sep is None:
        pytest.skip("this kind has no separated form")
    assert found(f"号码 {sep} 结束") == [(kind, sep)]


@pytest.mark.parametrize(("kind", "value", "sep", "bad"), TABLE, ids=IDS)
def test_failing_check_is_no_finding(kind: str, value: str, sep: str | None, bad: str | None) -> None:
    if bad is None:
        pytest.skip("this kind has no check")
    assert (kind, bad) not in found(f"号码 {bad} 结束")
    assert all(k != kind for k, _ in found(bad))


@pytest.mark.parametrize(("kind", "value", "sep", "bad"), TABLE, ids=IDS)
def test_embedded_in_chinese_without_spaces(kind: str, value: str, sep: str | None, bad: str | None) -> None:
    # RE2's \b fires between a CJK character and a digit, Python's does not: neither is used here.
    text = f"我的号码是{value}请核对谢谢"
    assert (kind, value) in found(text)


@pytest.mark.parametrize(("kind", "value", "sep", "bad"), TABLE, ids=IDS)
def test_fullwidth_characters(kind: str, value: str, sep: str | None, bad: str | None) -> None:
    wide = v.fullwidth(value)
    text = f"号码：{wide}。"
    assert (kind, wide) in found(text), "offsets must point at the raw full-width text"


def test_id_inside_longer_digit_run_is_not_an_id() -> None:
    order = "1234567" + v.ID_18  # 25 digits
    assert found(f"订单号{order}已发货") == []
    assert found(f"x{v.ID_18}1") == []


def test_two_values_separated_by_one_character_are_both_found() -> None:
    text = f"{v.ID_18},{v.ID_18B}"
    assert found(text) == [("cn_resident_id", v.ID_18), ("cn_resident_id", v.ID_18B)]


@pytest.mark.parametrize("text", [
    "+86 (138) 1234 5678", "(+86) 138 1234 5678", "+86-138-1234-5678", "0086 138 1234 5678", "138 1234 5678",
    "138-1234-5678", "1381234 5678", "+86 138.1234.5678", "138.1234.5678", "(138) 1234 5678",
    "１３８　１２３４　５６７８",  # full-width digits, ideographic spaces
    "（＋８６）１３８－１２３４－５６７８",  # full-width parentheses, plus and hyphens
    "＋８６ （１３８） １２３４ ５６７８", "１３８．１２３４．５６７８",
    "138‐1234‐5678", "138‑1234‑5678", "138–1234–5678", "138—1234—5678",  # hyphen, non-breaking, en and em dash
])
def test_written_forms_of_a_mobile_number(text: str) -> None:
    assert found(f"请致电{text}，谢谢") == [("cn_mobile", text)]
    assert found(f"call {text}.") == [("cn_mobile", text)]  # a full stop after it is no digit continuation


@pytest.mark.parametrize("text", [
    "lon 139.12345678", "经度139.12345678", "v1.138.12345678", "version 1.138.1234.5678", "138.1234.5678.9",
    "138.1234.56789", "2138.1234.5678", "v138.1234.5678", "build138.1234.5678", "13.8123.45678", "138.12345678",
    "1381.234.5678", "x(138)1234 5678y",
])
def test_dotted_decimals_and_versions_are_no_mobile_number(text: str) -> None:
    assert [k for k, _ in found(text) if k == "cn_mobile"] == []


def test_mobile_glued_inside_a_latin_token_is_not_a_mobile() -> None:
    assert found("USCC Y13201009903D5U74R rejected") == []
    assert found("tel13812345678") == [("cn_mobile", "13812345678")]


@pytest.mark.parametrize(("text", "address"), [
    ("ip:fe80::1", "fe80::1"),  # a label glued on by a colon is no part of the address
    ("号码:2001:db8::8a2e:370:7334", "2001:db8::8a2e:370:7334"),
    ("地址fe80::1：请查收", "fe80::1"),  # full-width punctuation after it
    ("对端地址是9197:636c:f963:96a9:3300::：请核查", "9197:636c:f963:96a9:3300::"),  # ... after a trailing "::"
    ("地址是２００１：ｄｂ８：：１谢谢", "２００１：ｄｂ８：：１"),  # full-width digits, letters and colons
    ("mixed 2001：db8::1 here", "2001：db8::1"),
])
def test_ipv6_in_context(text: str, address: str) -> None:
    assert found(text) == [("ipv6", address)]


@pytest.mark.parametrize("text", [
    "at 10:30:00 sharp", "时间10：30：00", "mac 00:1a:2b:3c:4d:5e", "zz::1", "a:b:c:d:e:f:1:2:3", "fe80:",
    "1:2:3:4:5:6:7:8:9",
])
def test_colon_runs_that_are_no_ipv6_address(text: str) -> None:
    assert [k for k, _ in found(text) if k == "ipv6"] == []


def test_ipv4_needs_four_octets_exactly() -> None:
    assert found("version 1.2.3.4.5 released") == []
    assert found("server at 10.0.0.1.") == [("ipv4", "10.0.0.1")]


def test_zero_width_characters_inside_a_number() -> None:
    text = "手机1\u200b38\u200d1234\u20605678"
    assert found(text) == [("cn_mobile", text[2:])]


def test_context_words_raise_and_lower_scores() -> None:
    plain = DETECTOR.detect_views(Views("E12345678", CONFIG))[0]
    ctx = DETECTOR.detect_views(Views("护照号码E12345678", CONFIG))[0]
    assert ctx.score > plain.score
    bare = DETECTOR.detect_views(Views("13812345678", CONFIG))[0]
    order = DETECTOR.detect_views(Views("订单号13812345678", CONFIG))[0]
    assert order.score < bare.score
    # "order" inside "reorder" is not the negative word
    reorder = DETECTOR.detect_views(Views("please reorder 13812345678", CONFIG))[0]
    assert reorder.score == bare.score


def test_validated_findings_carry_verdicts() -> None:
    (f,) = DETECTOR.detect_views(Views(v.ID_18, CONFIG))
    assert f.valid is True
    (m,) = DETECTOR.detect_views(Views("13812345678", CONFIG))
    assert m.valid is None


def test_bearer_token_span_is_the_token_alone() -> None:
    token = "abcdefghijklmnop1234"
    assert found(f"Authorization: Bearer {token}") == [("secret", token)]


def test_private_key_block() -> None:
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0Z3\n-----END RSA PRIVATE KEY-----"
    assert found(f"key:\n{block}\nthanks") == [("secret", block)]


# -- a value followed by another number, or glued to another value ----------------------------------------------

CARD = v.spaced(v.VISA, (4, 4, 4))  # 4242 4242 4242 4242


@pytest.mark.parametrize("after", [
    v.ID_18, "13812345678", "138 1234 5678", "+86 138 1234 5678", "138-1234-5678", "12/27", "1234567",
])
def test_a_card_followed_by_another_number_is_found(after: str) -> None:
    # The card pattern's optional last group (the 4-4-4-4-3 layout of 19-digit cards) takes the next
    # number's first digits; the 16-digit grouping is tried where that group is no group of the card's own.
    assert ("bank_card", CARD) in found(f"卡号 {CARD} {after}")
    dashed = v.spaced(v.VISA, (4, 4, 4), "-")
    assert ("bank_card", dashed) in found(f"卡号{dashed}-{after}")


def test_the_number_after_a_card_is_found_too() -> None:
    assert found(f"卡号 {CARD} {v.ID_18}") == [("bank_card", CARD), ("cn_resident_id", v.ID_18)]
    union = v.spaced(v.UNIONPAY_19, (4, 4, 4, 4))  # a 19-digit card in its own 4-4-4-4-3 layout
    assert found(f"卡号 {union} 13812345678") == [("bank_card", union), ("cn_mobile", "13812345678")]


def test_a_card_right_after_a_trimmed_card_is_found() -> None:
    # Found by the masking property test in CI: the search resumed at the end of the regex match (the
    # swallowed first digits of the second card), not at the end of the shorter candidate taken, so a second
    # card straight after the first went unseen.
    assert found(f"{CARD} 6222020000000007，") == [("bank_card", CARD), ("bank_card", "6222020000000007")]


def test_which_number_a_short_last_group_belongs_to() -> None:
    # Followed by a group of four, it leads the next number (a mobile number written 3-4-4) ...
    assert found(f"卡号 {CARD} 137 4386 5508") == [("bank_card", CARD), ("cn_mobile", "137 4386 5508")]
    # ... else it ends the card's 19 digits, when they pass Luhn.
    union = v.spaced(v.luhn_complete("622202123456789018"), (4, 4, 4, 4))  # ... 7890 185
    assert found(f"卡号 {union} 17780129323") == [("bank_card", union), ("cn_mobile", "17780129323")]
    # A mobile number's optional separators made "185 17780129" of the two; that candidate fails, and the
    # number inside it is still found.
    assert found("电话 186 13812345678") == [("cn_mobile", "13812345678")]


@pytest.mark.parametrize("text", [
    "4242 4242 4242 4242 123",  # 19 digits in the 4-4-4-4-3 layout, failing Luhn: no 16-digit card in it
    "4242 4242 4242 4242 12。",
    "4242-4242-4242-4242-1",
    "单号 4242 4242 4242 4242 1234",  # 20 digits in groups of four: a longer number, not a card and a group
    "4242 4242 4242 4242 1234 5678",
    "42424242424242421",  # a run of digits is read whole: no shorter card inside it
    "621700200001010050",  # an ID whose first 16 digits are a valid card is an ID, not a card and two digits
    "42424242424242421234",
])
def test_no_card_inside_a_longer_number(text: str) -> None:
    assert [k for k, _ in found(text) if k == "bank_card"] == []


def test_a_landline_extension_that_is_the_next_number() -> None:
    assert found("电话010-62345678-13812345678") == [("cn_landline", "010-62345678"), ("cn_mobile", "13812345678")]
    assert found("电话010-62345678-123") == [("cn_landline", "010-62345678-123")]


@pytest.mark.parametrize(("text", "expected"), [
    # A TLD has no digits: the address ends there, and the digits after it are judged on their own.
    ("c@example.org4242424242424242", [("email", "c@example.org"), ("bank_card", "4242424242424242")]),
    ("邮箱a@163.com13812345678。", [("email", "a@163.com"), ("cn_mobile", "13812345678")]),
    (f"x@qq.com{v.ID_18}", [("email", "x@qq.com"), ("cn_resident_id", v.ID_18)]),
    # A value starting where a found one ends is judged as if at the start of the text: masking the first
    # one (to "**.*.*.*") would otherwise leave the second one detectable in the output, and the model
    # would have seen it in clear.
    ("10.0.0.1E12345678", [("ipv4", "10.0.0.1"), ("cn_passport", "E12345678")]),
    ("10.0.0.1C12345678 ok", [("ipv4", "10.0.0.1"), ("hk_macau_permit", "C12345678")]),
    (f"{v.VISA}{v.IBAN_GB}", [("bank_card", v.VISA), ("iban", v.IBAN_GB)]),
    ("10.0.0.1AKIAIOSFODNN7EXAMPLE", [("ipv4", "10.0.0.1"), ("secret", "AKIAIOSFODNN7EXAMPLE")]),
    ("10.0.0.1E12345678C12345678", [("ipv4", "10.0.0.1")]),  # the passport is glued on both sides
])
def test_a_value_glued_to_another_one(text: str, expected: list[tuple[str, str]]) -> None:
    assert found(text) == expected


def test_glued_letters_and_digits_inside_a_token_are_still_no_value() -> None:
    assert found("ref X10E12345678") == []
    assert found("a@b.cn4") == [("email", "a@b.cn")]
    assert found("a@b.cnx4") == [("email", "a@b.cnx")]  # the longest TLD: letters may continue one


SCANNER = Scanner.load()


def scanned(text: str) -> list[tuple[str, str]]:
    """(kind, raw text) of the reported findings of the builtin packs (min_score and overlaps applied)."""
    return [(f.kind, text[f.start : f.end]) for f in SCANNER.scan(text).findings]


@pytest.mark.parametrize(("text", "expected"), [
    # SAR passports read as Home Return Permits unless the word passport is right before them
    ("护照号码：H12345678，请核对", [("cn_passport", "H12345678")]),
    ("passport no. M12345678", [("cn_passport", "M12345678")]),
    ("Passport Number: K12345678", [("cn_passport", "K12345678")]),
    ("回乡证号码H12345678", [("hk_macau_permit", "H12345678")]),
    ("H12345678", [("hk_macau_permit", "H12345678")]),
    ("K12345678", []),
    # other countries' numbers after their label
    ("passport no. 123456789", [("passport", "123456789")]),
    ("Passport No.: C01X00T47 issued in Köln", [("passport", "C01X00T47")]),
    ("her passport number is 18AV12345.", [("passport", "18AV12345")]),
    ("护照号码是TK1234567，有效期十年", [("passport", "TK1234567")]),
    ("passport #AB123456", [("passport", "AB123456")]),
    ("护照号：E12345678", [("cn_passport", "E12345678")]),  # a PRC form after the label stays cn_passport
    # no number after the label, or a number without one
    ("passport no. PENDING", []),
    ("passport no. AB12", []),
    ("护照号码待补充", []),
    ("order no. 123456789", []),
])
def test_passports(text: str, expected: list[tuple[str, str]]) -> None:
    assert scanned(text) == expected
