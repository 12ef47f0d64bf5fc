"""The labeled PII corpus is deterministic and its labels are right.

The checks here are written independently of bench/pii_corpus.py (different formulations of the same
standards), so a bug in the generator's own check-digit code cannot hide behind itself.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import itertools
import re
import unicodedata
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from bench import pii_corpus
from bench.pii_corpus import Item


def _ascii(s: str) -> str:
    """NFKC (full-width to ASCII) without the invisible characters the corpus inserts as an evasion."""
    return re.sub("[\u200b\u200c\u200d\u2060\ufeff]", "", unicodedata.normalize("NFKC", s))


def _luhn(digits: str) -> bool:
    """ISO/IEC 7812-1, computed left to right with the parity of the length."""
    parity = len(digits) % 2
    total = 0
    for i, c in enumerate(digits):
        d = int(c)
        if i % 2 == parity:
            d = d * 2
            d = d // 10 + d % 10
        total += d
    return total % 10 == 0


def _resident_id(s: str) -> bool:
    """GB 11643: weights 2^(17-i) mod 11, sum including the check value (X = 10) is 1 mod 11."""
    if not re.fullmatch(r"[1-6]\d{16}[\dX]", s):
        return False
    try:
        dt.date(int(s[6:10]), int(s[10:12]), int(s[12:14]))
    except ValueError:
        return False
    values = [10 if c == "X" else int(c) for c in s]
    return sum(v * pow(2, 17 - i, 11) for i, v in enumerate(values)) % 11 == 1


_USCC = "0123456789ABCDEFGHJKLMNPQRTUWXY"


def _uscc(s: str) -> bool:
    """GB 32100-2015: with weights 3^i mod 31 over the first 17 characters, (sum + check) % 31 == 0; plus the
    embedded GB 11714 organization code (characters 9-17) check."""
    if len(s) != 18 or any(c not in _USCC for c in s):
        return False
    total = sum(_USCC.index(c) * pow(3, i, 31) for i, c in enumerate(s[:17]))
    if (total + _USCC.index(s[17])) % 31 != 0:
        return False
    org = s[8:17]
    weights = (3, 7, 9, 10, 5, 8, 4, 2)
    r = (11 - sum(int(c, 36) * w for c, w in zip(org[:8], weights, strict=True)) % 11) % 11
    return org[8] == ("X" if r == 10 else str(r))


def _iban(s: str) -> bool:
    """ISO 13616 / ISO 7064 MOD 97-10, folded digit by digit."""
    s = s.replace(" ", "")
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", s):
        return False
    rem = 0
    for c in s[4:] + s[:4]:
        for d in str(int(c, 36)):
            rem = (rem * 10 + int(d)) % 97
    return rem == 1


def _card(digits: str) -> bool:
    """ISO/IEC 7812 issuer ranges we generate (UnionPay 62, Visa 4, Mastercard 51-55 and 2221-2720, JCB
    3528-3589, Discover 6011/65), 16-19 digits, and Luhn."""
    if not re.fullmatch(r"\d{16,19}", digits) or not _luhn(digits):
        return False
    return (digits.startswith(("62", "4", "6011", "65"))
            or ((digits[:2] in {"51", "52", "53", "54", "55"} or 2221 <= int(digits[:4]) <= 2720)
            and len(digits) == 16)
            or 3528 <= int(digits[:4]) <= 3589)


def _digits(s: str) -> str:
    return re.sub(r"[\s\-+]", "", _ascii(s))


CHECKS: dict[str, Callable[[str], bool]] = {
    "cn_resident_id": lambda s: _resident_id(_digits(s)),
    "bank_card": lambda s: _card(_digits(s)),
    "cn_mobile": lambda s: re.fullmatch(r"(?:86)?1[3-9]\d{9}", _digits(s)) is not None,
    "cn_landline": lambda s: re.fullmatch(r"0\d{2,3}[- ][2-8]\d{6,7}", _ascii(s)) is not None,
    "cn_uscc": lambda s: _uscc(_ascii(s)),
    "cn_passport": lambda s: re.fullmatch(
        r"E\d{8}|E[A-HJ-NP-Z]\d{7}|G\d{8}|[DSP]E?\d{7}|[HKM]\d{8}", s) is not None,
    "hk_macau_permit": lambda s: re.fullmatch(r"C\d{8}|C[A-HJ-NP-Z]\d{7}|[HM]\d{8}", s) is not None,
    # Other countries': 8-9 capitals and digits, at least two digits, none of the PRC forms.
    "passport": lambda s: re.fullmatch(r"[A-Z0-9]{8,9}", s) is not None and sum(c.isdigit() for c in s) >= 2
    and re.fullmatch(r"[EG]\d{8}|E[A-HJ-NP-Z]\d{7}|[DSP]E?\d{7}|[HKM]\d{8}", s) is None,
    "person_name": lambda s: re.fullmatch(
        r"[\u4e00-\u9fff]{2,4}|[A-Z][a-z]+(?: [A-Z]\.)?(?: [A-Z][A-Za-z'-]+)+", s) is not None,
    "postal_address": lambda s: re.fullmatch(
        r"[\u4e00-\u9fff]+[0-9-]+号[\u4e00-\u9fff0-9]*|[0-9]+ [A-Z][a-z]+ [A-Z][a-z]+\.?[\w ,.#-]*", s) is not None,
    "cn_license_plate": lambda s: re.fullmatch(
        r"[\u4e00-\u9fff][A-HJ-NP-Z]·?[A-HJ-NP-Z0-9]{5,6}", s) is not None,
    "email": lambda s: re.fullmatch(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+", s) is not None,
    "ipv4": lambda s: isinstance(ipaddress.ip_address(s), ipaddress.IPv4Address),
    "ipv6": lambda s: isinstance(ipaddress.ip_address(_ascii(s)), ipaddress.IPv6Address),  # "：" is NFKC ":"
    "us_ssn": lambda s: re.fullmatch(r"(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}", s) is not None,
    "iban": _iban,
    "secret": lambda s: re.fullmatch(
        r"eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+|AKIA[A-Z2-7]{16}|ghp_[A-Za-z0-9]{36}", s) is not None,
}


@cache
def _small() -> tuple[Item, ...]:
    return tuple(pii_corpus.generate(seed=7, per_kind=40, multi=40, per_decoy=15, clean=10))


def _committed() -> list[Item]:
    if not pii_corpus.DEFAULT_PATH.exists():
        pytest.skip("bench/data/pii_corpus.jsonl not generated")
    return pii_corpus.load(pii_corpus.DEFAULT_PATH)


def test_same_seed_same_corpus() -> None:
    again = pii_corpus.generate(seed=7, per_kind=40, multi=40, per_decoy=15, clean=10)
    assert pii_corpus.dumps(again) == pii_corpus.dumps(_small())
    other = pii_corpus.generate(seed=8, per_kind=40, multi=40, per_decoy=15, clean=10)
    assert pii_corpus.dumps(other) != pii_corpus.dumps(_small())


def test_round_trip_through_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(pii_corpus.dumps(_small()), encoding="utf-8")
    assert tuple(pii_corpus.load(path)) == _small()


def _check_labels(items: list[Item] | tuple[Item, ...]) -> None:
    for it in items:
        for lab in it.labels:
            value = it.text[lab.start:lab.end]
            assert value == value.strip(), (it.id, value)
            assert CHECKS[lab.kind](value), (it.id, lab.kind, value)
        for d in it.decoys:
            value = it.text[d.start:d.end]
            # a decoy passes none of the checks of any kind (it is not PII at all), but for those that are told
            # by their context (names, addresses, a passport label before no number), which may have any form
            if d.reason in pii_corpus.CONTEXT_DECOYS:
                continue
            passing = [k for k, check in CHECKS.items() if _safe(check, value)]
            assert passing == [], (it.id, d.reason, value, passing)
        spans = sorted([(x.start, x.end) for x in it.labels] + [(d.start, d.end) for d in it.decoys])
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans)), it.id


def _safe(check: Callable[[str], bool], value: str) -> bool:
    try:
        return bool(check(value))
    except ValueError:
        return False


def test_labels_pass_their_kind_check_and_decoys_pass_none() -> None:
    _check_labels(_small())


def test_committed_corpus_is_valid_and_balanced() -> None:
    items = _committed()
    _check_labels(items)
    assert len(items) >= 3000
    per_kind = {k: sum(1 for it in items for x in it.labels if x.kind == k) for k in pii_corpus.KINDS}
    assert min(per_kind.values()) >= 200, per_kind
    # Names also come with the other kinds' templates ("客户{name}的身份证号码"): only the first kinds are balanced.
    base = [per_kind[k] for k in pii_corpus.BASE_KINDS]
    assert max(base) < 2 * min(base), per_kind
    reasons = {d.reason for it in items for d in it.decoys}
    assert {"id_bad_check", "card_bad_luhn", "uscc_bad_check", "timestamp", "long_digit_run", "phone_like",
            "ip_bad_octet"} <= reasons


def test_values_sit_in_chinese_without_spaces_and_fullwidth_offsets_are_raw() -> None:
    items = _committed()
    cjk = re.compile(r"[\u4e00-\u9fff]")
    tight = [it for it in items for x in it.labels
             if x.start > 0 and x.end < len(it.text)
             and cjk.match(it.text[x.start - 1]) and cjk.match(it.text[x.end])]
    assert len(tight) > 300
    full = [(it, x) for it in items for x in it.labels if x.variant == "fullwidth"]
    assert full
    for it, x in full:
        assert any("\uff10" <= c <= "\uff19" for c in it.text[x.start:x.end])
