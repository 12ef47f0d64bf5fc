"""Deterministic labeled PII corpus for the detection evaluation (`bench/eval_pii.py`).

Every item is `{"id", "text", "labels": [{"kind", "start", "end", "variant"}], "decoys": [...]}`. Labels
mark true PII only, as Python string offsets into the raw text (full-width digits stay full-width, so an
offset counts code points, not bytes). Decoys mark confusable non-PII the scanner must NOT report: numbers
failing the kind's checksum, order ids, timestamps, digit runs that contain a valid number as a substring,
phone-like numbers with an impossible prefix, IPv4 with an octet above 255, invalid SSN ranges.

Span conventions (what a label covers):
- separators inside a number are part of it (`6222 0212 3456 7890`, `138-1234-5678`);
- a mobile's country prefix is part of it (`+86 138 1234 5678`, `+8613812345678`);
- a landline's area code is part of it (`010-12345678`, `0755 8765432`), parentheses are not;
- a license plate includes its middle dot (`京A·12345`).

Values are embedded the way people write them in Chinese: no spaces around them (`身份证号是110105...请核对`).
The generator uses one `random.Random(seed)` and seeded Faker instances, so the same seed gives the same
corpus byte for byte (tests/bench/test_corpus.py checks it).

Run `python -m bench.pii_corpus [--out bench/data/pii_corpus.jsonl] [--seed N] [--per-kind N]`.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import ipaddress
import json
import random
import string
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from faker import Faker

SEED = 20261129
DEFAULT_PATH = Path(__file__).parent / "data" / "pii_corpus.jsonl"

KINDS: tuple[str, ...] = (
    "cn_resident_id",
    "bank_card",
    "cn_mobile",
    "cn_landline",
    "cn_uscc",
    "cn_passport",
    "hk_macau_permit",
    "cn_license_plate",
    "email",
    "ipv4",
    "ipv6",
    "us_ssn",
    "iban",
    "secret",
)
# Kinds whose numbers carry a check character: the evaluation holds these to precision and recall >= 0.99.
CHECKSUMMED_KINDS: frozenset[str] = frozenset({"cn_resident_id", "bank_card", "cn_uscc", "iban"})

# --- standards ---------------------------------------------------------------------------------------------

# GB 11643-1999: ISO 7064 MOD 11-2 weights and the check character for each remainder.
ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
ID_CHECK = "10X98765432"
# GB/T 2260 province-level prefixes of mainland resident IDs.
ID_PROVINCES = frozenset(str(p) for p in (11, 12, 13, 14, 15, 21, 22, 23, 31, 32, 33, 34, 35, 36, 37, 41, 42,
                                            43, 44, 45, 46, 50, 51, 52, 53, 54, 61, 62, 63, 64, 65))
# GB 32100-2015: the 31-character alphabet (no I O S V Z) and weights 3^i mod 31.
USCC_ALPHABET = "0123456789ABCDEFGHJKLMNPQRTUWXY"
USCC_WEIGHTS = (1, 3, 9, 27, 19, 26, 16, 17, 20, 29, 25, 13, 8, 24, 10, 30, 28)
# GB 11714-1997 organization code (characters 9-17 of a USCC): weights of its 8 body characters.
ORG_WEIGHTS = (3, 7, 9, 10, 5, 8, 4, 2)


def resident_id_check(body17: str) -> str:
    """GB 11643 check character of the first 17 digits."""
    return ID_CHECK[sum(int(c) * w for c, w in zip(body17, ID_WEIGHTS, strict=True)) % 11]


def resident_id_valid(value: str) -> bool:
    """GB 11643: 18 characters, a mainland province prefix, a real birth date, the MOD 11-2 check."""
    if len(value) != 18 or not value[:17].isdigit() or value[:2] not in ID_PROVINCES:
        return False
    try:
        dt.date(int(value[6:10]), int(value[10:12]), int(value[12:14]))
    except ValueError:
        return False
    return resident_id_check(value[:17]) == value[17]


def luhn_check_digit(body: str) -> str:
    """ISO/IEC 7812-1 Luhn check digit for `body` (the number without its last digit)."""
    total = 0
    for i, c in enumerate(reversed(body)):
        d = int(c) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return str((10 - total % 10) % 10)


def luhn_valid(digits: str) -> bool:
    """ISO/IEC 7812-1 Luhn."""
    return digits.isdigit() and len(digits) >= 2 and luhn_check_digit(digits[:-1]) == digits[-1]


def uscc_check(body17: str) -> str:
    """GB 32100-2015 check character of the first 17 characters."""
    total = sum(USCC_ALPHABET.index(c) * w for c, w in zip(body17, USCC_WEIGHTS, strict=True))
    return USCC_ALPHABET[(31 - total % 31) % 31]


def org_code_check(body8: str) -> str:
    """GB 11714-1997 check character of an 8-character organization code body."""
    total = sum(int(c, 36) * w for c, w in zip(body8, ORG_WEIGHTS, strict=True))
    r = 11 - total % 11
    return "X" if r == 10 else "0" if r == 11 else str(r)


def uscc_valid(value: str) -> bool:
    """GB 32100-2015 check character plus the embedded GB 11714 organization code check (characters 9-17)."""
    if len(value) != 18 or any(c not in USCC_ALPHABET for c in value):
        return False
    return uscc_check(value[:17]) == value[17] and org_code_check(value[8:16]) == value[16]


def passes_any_check(value: str) -> bool:
    """True when `value` (separators removed) is a valid resident ID, Luhn number, USCC or IBAN."""
    compact = value.replace(" ", "").replace("-", "")
    return (resident_id_valid(compact) or luhn_valid(compact) or uscc_valid(compact)
            or iban_valid(compact))


def iban_valid(value: str) -> bool:
    """ISO 13616 IBAN: mod 97 of the rearranged number equals 1 (separators removed first)."""
    compact = value.replace(" ", "")
    if len(compact) < 15 or not compact[:2].isalpha() or not compact[2:4].isdigit():
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


# --- values ------------------------------------------------------------------------------------------------

FULLWIDTH = str.maketrans(
    {c: chr(ord(c) + 0xFEE0) for c in string.digits + string.ascii_letters + "-+"} | {" ": "\u3000"}
)
MOBILE_PREFIXES = tuple(str(p) for p in (
    130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 145, 147, 150, 151, 152, 153, 155, 156, 157, 158,
    159, 166, 170, 171, 173, 175, 176, 177, 178, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 191,
    193, 195, 196, 197, 198, 199))
LANDLINE_AREAS = ("010", "020", "021", "022", "023", "024", "025", "027", "028", "029", "0755", "0571",
                  "0512", "0531", "0871", "0991", "0731", "0591", "0351", "0431", "0898", "0769")
UNIONPAY_IINS = ("622202", "621700", "622848", "621226", "622588", "621483", "622262", "623668",
                 "625965", "621661", "622908", "621799")
PLATE_PROVINCES = "京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼"
PLATE_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"  # no I, O
EMAIL_DOMAINS = ("qq.com", "163.com", "126.com", "sina.com", "foxmail.com", "aliyun.com", "gmail.com",
                 "outlook.com", "example.cn", "corp.example.com")
PINYIN = ("zhang", "wang", "li", "zhao", "chen", "liu", "yang", "huang", "zhou", "wu", "xu", "sun", "ma",
          "hu", "guo", "lin", "he", "gao", "luo", "zheng", "wei", "fang", "jun", "lei", "xiaoming", "ting")


@dataclass(frozen=True, slots=True)
class Value:
    """A generated value with the variant of its spelling (for per-variant miss counts)."""

    text: str
    variant: str


@dataclass(frozen=True, slots=True)
class Label:
    """True PII at raw-text offsets [start, end)."""

    kind: str
    start: int
    end: int
    variant: str = "plain"


@dataclass(frozen=True, slots=True)
class Decoy:
    """Confusable non-PII at [start, end) that looks like `kind`; `checksum`: it fails that kind's check."""

    kind: str
    start: int
    end: int
    reason: str
    checksum: bool


@dataclass(frozen=True, slots=True)
class Item:
    id: str
    text: str
    labels: tuple[Label, ...]
    decoys: tuple[Decoy, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "text": self.text,
            "labels": [{"kind": x.kind, "start": x.start, "end": x.end, "variant": x.variant}
                       for x in self.labels],
            "decoys": [{"kind": d.kind, "start": d.start, "end": d.end, "reason": d.reason,
                        "checksum": d.checksum} for d in self.decoys],
        }

    @staticmethod
    def from_json(obj: dict[str, object]) -> Item:
        labels = obj.get("labels", [])
        decoys = obj.get("decoys", [])
        assert isinstance(labels, list) and isinstance(decoys, list)
        return Item(
            id=str(obj["id"]),
            text=str(obj["text"]),
            labels=tuple(Label(str(x["kind"]), int(x["start"]), int(x["end"]), str(x.get("variant", "plain")))
                         for x in labels),
            decoys=tuple(Decoy(str(d["kind"]), int(d["start"]), int(d["end"]), str(d["reason"]),
                               bool(d["checksum"])) for d in decoys),
        )


ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")


def zero_width(value: str, rng: random.Random) -> str:
    """`value` with 1-3 invisible characters inserted inside it (an evasion the normalizer must undo)."""
    chars = list(value)
    for _ in range(rng.randint(1, 3)):
        chars.insert(rng.randint(1, len(chars) - 1), rng.choice(ZERO_WIDTH))
    return "".join(chars)


class Values:
    """Generators of valid values, one method per kind, each returning a `Value` in a random spelling."""

    def __init__(self, rng: random.Random, zh: Faker, en: Faker, ibans: Sequence[Faker]) -> None:
        self.rng = rng
        self.zh = zh
        self.en = en
        self.ibans = ibans

    def _pick_variant(self, weights: dict[str, int]) -> str:
        names = list(weights)
        return self.rng.choices(names, weights=[weights[n] for n in names])[0]

    def digits(self, n: int) -> str:
        return "".join(self.rng.choice(string.digits) for _ in range(n))

    # raw values (no spelling variants) --------------------------------------------------------------------

    def raw_resident_id(self) -> str:
        while True:
            v = self.zh.ssn()
            if resident_id_valid(v):
                return v

    def raw_card(self) -> str:
        r = self.rng.random()
        if r < 0.45:  # UnionPay 62, 16 or 19 digits
            n = self.rng.choice((16, 19))
            body = self.rng.choice(UNIONPAY_IINS) + self.digits(n - 7)
            return body + luhn_check_digit(body)
        if r < 0.6:  # Mastercard 2-series (2221-2720)
            body = str(self.rng.randint(2221, 2720)) + self.digits(11)
            return body + luhn_check_digit(body)
        if r < 0.7:  # JCB 3528-3589 (Faker's "jcb16" uses any 35 prefix, which is no JCB range)
            body = str(self.rng.randint(3528, 3589)) + self.digits(11)
            return body + luhn_check_digit(body)
        card_type = self.rng.choice(("visa16", "visa19", "mastercard", "discover"))
        return str(self.en.credit_card_number(card_type))

    def raw_mobile(self) -> str:
        return self.rng.choice(MOBILE_PREFIXES) + self.digits(8)

    def raw_uscc(self) -> str:
        dept_type = self.rng.choice(("91", "91", "91", "92", "93", "11", "12", "51", "52", "53", "Y1"))
        region = self.raw_resident_id()[:6]
        org_body = "".join(self.rng.choice(USCC_ALPHABET[:10] * 3 + USCC_ALPHABET[10:]) for _ in range(8))
        body = dept_type + region + org_body + org_code_check(org_body)
        return body + uscc_check(body)

    def raw_iban(self) -> str:
        return str(self.rng.choice(self.ibans).iban())

    # spelled values -------------------------------------------------------------------------------------

    def cn_resident_id(self) -> Value:
        v = self.raw_resident_id()
        variant = self._pick_variant({"plain": 16, "fullwidth": 2, "spaced": 2, "zero_width": 1})
        if variant == "zero_width":
            v = zero_width(v, self.rng)
        elif variant == "spaced":
            v = f"{v[:6]} {v[6:14]} {v[14:]}"
        elif variant == "fullwidth":
            v = v.translate(FULLWIDTH)
        return Value(v, variant)

    def bank_card(self) -> Value:
        v = self.raw_card()
        variant = self._pick_variant({"plain": 10, "spaced": 6, "dashed": 2, "fullwidth": 2, "zero_width": 1})
        if variant == "zero_width":
            v = zero_width(v, self.rng)
        elif variant in ("spaced", "dashed"):
            sep = " " if variant == "spaced" else "-"
            v = sep.join(v[i:i + 4] for i in range(0, len(v), 4))
        elif variant == "fullwidth":
            v = v.translate(FULLWIDTH)
        return Value(v, variant)

    def cn_mobile(self) -> Value:
        v = self.raw_mobile()
        variant = self._pick_variant({"plain": 12, "spaced": 4, "dashed": 2, "plus86": 4, "plus86_spaced": 2,
                                      "fullwidth": 2, "zero_width": 1})
        if variant == "zero_width":
            v = zero_width(v, self.rng)
        elif variant == "spaced":
            v = f"{v[:3]} {v[3:7]} {v[7:]}"
        elif variant == "dashed":
            v = f"{v[:3]}-{v[3:7]}-{v[7:]}"
        elif variant == "plus86":
            v = self.rng.choice(("+86", "+86 ", "+86-")) + v
        elif variant == "plus86_spaced":
            v = f"+86 {v[:3]} {v[3:7]} {v[7:]}"
        elif variant == "fullwidth":
            v = self.rng.choice(("", "+86", "+86 ")).translate(FULLWIDTH) + v.translate(FULLWIDTH)
        return Value(v, variant)

    def cn_landline(self) -> Value:
        area = self.rng.choice(LANDLINE_AREAS)
        n = 8 if len(area) == 3 else self.rng.choice((7, 8))
        local = str(self.rng.randint(2, 8)) + self.digits(n - 1)
        variant = self._pick_variant({"dashed": 6, "spaced": 2, "fullwidth": 1})
        if variant == "spaced":
            return Value(f"{area} {local}", variant)
        v = f"{area}-{local}"
        return Value(v.translate(FULLWIDTH) if variant == "fullwidth" else v, variant)

    def cn_uscc(self) -> Value:
        v = self.raw_uscc()
        variant = self._pick_variant({"plain": 9, "fullwidth": 1})
        return Value(v.translate(FULLWIDTH) if variant == "fullwidth" else v, variant)

    def cn_passport(self) -> Value:
        r = self.rng.random()
        if r < 0.5:
            v = "E" + self.digits(8)
        elif r < 0.8:
            v = "E" + self.rng.choice(PLATE_LETTERS) + self.digits(7)
        else:
            v = "G" + self.digits(8)
        return Value(v, "plain")

    def hk_macau_permit(self) -> Value:
        # Exit-Entry Permit for Travelling to and from Hong Kong and Macao (往来港澳通行证): C + 8 digits, or
        # the electronic card's C + letter + 7 digits.
        if self.rng.random() < 0.6:
            return Value("C" + self.digits(8), "plain")
        return Value("C" + self.rng.choice(PLATE_LETTERS) + self.digits(7), "plain")

    def cn_license_plate(self) -> Value:
        prov = self.rng.choice(PLATE_PROVINCES)
        city = self.rng.choice(PLATE_LETTERS)
        r = self.rng.random()
        if r < 0.7:
            n_letters = self.rng.choice((0, 0, 1, 2))
            chars = [self.rng.choice(PLATE_LETTERS) for _ in range(n_letters)]
            chars += [self.rng.choice(string.digits) for _ in range(5 - n_letters)]
            self.rng.shuffle(chars)
            tail = "".join(chars)
            variant = "plain"
        else:  # new-energy plates: D/F + 5 (small car) or 5 digits + D/F (large vehicle)
            ev = self.rng.choice("DF")
            tail = ev + self.digits(5) if r < 0.9 else self.digits(5) + ev
            variant = "new_energy"
        if self.rng.random() < 0.2:
            return Value(f"{prov}{city}·{tail}", variant + "_dot")
        return Value(f"{prov}{city}{tail}", variant)

    def email(self) -> Value:
        r = self.rng.random()
        if r < 0.4:
            return Value(str(self.en.email()), "faker")
        if r < 0.8:
            user = self.rng.choice(PINYIN) + self.rng.choice(("", ".", "_")) + self.rng.choice(PINYIN)
            if self.rng.random() < 0.5:
                user += str(self.rng.randint(1, 9999))
            return Value(f"{user}@{self.rng.choice(EMAIL_DOMAINS)}", "pinyin")
        # QQ numbers: 5-10 digits, never an 11-digit mobile-looking local part
        return Value(f"{self.rng.randint(10000, 3999999999)}@qq.com", "qq")

    def ipv4(self) -> Value:
        if self.rng.random() < 0.5:
            return Value(str(self.en.ipv4_public()), "public")
        return Value(str(self.en.ipv4_private()), "private")

    def ipv6(self) -> Value:
        value = self._ipv6()
        if self.rng.random() < 0.1:  # full-width digits, letters and colons (normalization keeps "：")
            return Value(value.text.translate(FULLWIDTH).replace(":", "\uff1a"), "fullwidth")
        return value

    def _ipv6(self) -> Value:
        r = self.rng.random()
        if r < 0.4:
            return Value(str(self.en.ipv6()), "full")
        if r < 0.7:  # a run of zero groups, written with "::"
            groups = [self.rng.randint(1, 0xFFFF) for _ in range(8)]
            i = self.rng.randint(1, 5)
            groups[i:i + self.rng.randint(2, 3)] = [0, 0, 0][: len(groups[i:i + 3])]
            groups = (groups + [0] * 8)[:8]
            return Value(str(ipaddress.IPv6Address(":".join(f"{g:x}" for g in groups))), "compressed")
        prefix = self.rng.choice(("2001:db8", "fe80", "2409:8a00", "240e:3b0", "2400:da00"))
        tail = ":".join(f"{self.rng.randint(1, 0xFFFF):x}" for _ in range(self.rng.randint(1, 3)))
        return Value(str(ipaddress.IPv6Address(f"{prefix}::{tail}")), "compressed")

    def us_ssn(self) -> Value:
        return Value(str(self.en.ssn()), "dashed")

    def iban(self) -> Value:
        v = self.raw_iban()
        if self.rng.random() < 0.35:
            return Value(" ".join(v[i:i + 4] for i in range(0, len(v), 4)), "grouped")
        return Value(v, "compact")

    def secret(self) -> Value:
        r = self.rng.random()
        alnum = string.ascii_letters + string.digits
        if r < 0.4:
            def b64(raw: bytes) -> str:
                return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

            header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
            payload = {"sub": str(self.rng.randint(10**5, 10**9)), "name": self.rng.choice(PINYIN),
                       "iat": self.rng.randint(1_600_000_000, 1_800_000_000)}
            body = b64(json.dumps(payload, separators=(",", ":")).encode())
            sig = b64(bytes(self.rng.randrange(256) for _ in range(32)))
            return Value(f"{header}.{body}.{sig}", "jwt")
        if r < 0.7:
            key = "".join(self.rng.choice(string.ascii_uppercase + "234567") for _ in range(16))
            return Value("AKIA" + key, "aws_access_key")
        return Value("ghp_" + "".join(self.rng.choice(alnum) for _ in range(36)), "github_pat")


# --- decoys ------------------------------------------------------------------------------------------------


class Decoys:
    """Confusable non-PII numbers. Every one is re-checked: it must fail every checksum it imitates."""

    def __init__(self, values: Values) -> None:
        self.v = values
        self.rng = values.rng

    def _digit_string_not_pii(self, n: int, first: str = "") -> str:
        while True:
            s = first + self.v.digits(n - len(first))
            if not luhn_valid(s) and not resident_id_valid(s):
                return s

    def id_bad_check(self) -> tuple[str, str, bool]:
        v = self.v.raw_resident_id()
        wrong = self.rng.choice([c for c in ID_CHECK if c != v[17]])
        return v[:17] + wrong, "id_bad_check", True

    def id_bad_date(self) -> tuple[str, str, bool]:
        v = self.v.raw_resident_id()
        body = v[:10] + self.rng.choice(("13", "00", "02")) + ("30" if v[10:12] == "02" else "32")
        body = (body + v[14:17])[:17]
        return body + resident_id_check(body), "id_bad_date", False

    def card_bad_luhn(self) -> tuple[str, str, bool]:
        v = self.v.raw_card()
        wrong = self.rng.choice([c for c in string.digits if c != v[-1]])
        s = v[:-1] + wrong
        if self.rng.random() < 0.3:
            s = " ".join(s[i:i + 4] for i in range(0, len(s), 4))
        return s, "card_bad_luhn", True

    def uscc_bad_check(self) -> tuple[str, str, bool]:
        v = self.v.raw_uscc()
        wrong = self.rng.choice([c for c in USCC_ALPHABET if c != v[17]])
        return v[:17] + wrong, "uscc_bad_check", True

    def iban_bad_check(self) -> tuple[str, str, bool]:
        v = self.v.raw_iban()
        while True:
            s = v[:2] + f"{self.rng.randint(2, 98):02d}" + v[4:]
            if not iban_valid(s):
                return s, "iban_bad_check", True

    def order_id(self) -> tuple[str, str, bool]:
        n = self.rng.choice((16, 17, 18, 19, 20))
        return self._digit_string_not_pii(n, first=self.rng.choice(("2024", "2025", "1000", "8800"))), \
            "order_id", False

    def timestamp(self) -> tuple[str, str, bool]:
        t = dt.datetime(2020, 1, 1) + dt.timedelta(seconds=self.rng.randint(0, 6 * 365 * 86400))
        s = t.strftime("%Y%m%d%H%M%S")
        if self.rng.random() < 0.4:
            while True:
                s2 = s + f"{self.rng.randint(0, 999):03d}"
                if not luhn_valid(s2):
                    return s2, "timestamp", False
        return s, "timestamp", False

    def long_digit_run(self) -> tuple[str, str, bool]:
        # 20+ digits: longer than any card, so no substring of it is a number on its own
        inner = self.rng.choice((self.v.raw_resident_id, self.v.raw_card, self.v.raw_mobile))()
        extra = self.rng.randint(max(1, 20 - len(inner)), 28 - len(inner))
        left = self.rng.randint(0, extra)
        return self.v.digits(left) + inner + self.v.digits(extra - left), "long_digit_run", False

    def phone_like(self) -> tuple[str, str, bool]:
        return self._digit_string_not_pii(11, first=self.rng.choice(("10", "11", "12"))), "phone_like", False

    def ip_bad_octet(self) -> tuple[str, str, bool]:
        octets = [str(self.rng.randint(1, 254)) for _ in range(4)]
        octets[self.rng.randrange(4)] = str(self.rng.randint(256, 999))
        return ".".join(octets), "ip_bad_octet", False

    def _card16(self) -> str:
        while True:
            card = self.v.raw_card()
            if len(card) == 16:
                return card

    def grouped_long_number(self) -> tuple[str, str, bool]:
        # 20 or 24 digits in groups of four whose first 16 are a valid card: one longer number (an account or
        # order number), not a card followed by a group
        s = self._card16() + self.v.digits(self.rng.choice((4, 8)))
        return " ".join(s[i:i + 4] for i in range(0, len(s), 4)), "grouped_long_number", False

    def card19_bad_luhn_grouped(self) -> tuple[str, str, bool]:
        # a 19-digit number failing Luhn in the 4-4-4-4-3 layout of 19-digit cards, its first 16 digits a valid
        # card: a mistyped long card, not a 16-digit card followed by three digits
        card = self._card16()
        while True:
            s = card + self.v.digits(3)
            if not luhn_valid(s):
                return " ".join(s[i:i + 4] for i in range(0, len(s), 4)), "card19_bad_luhn_grouped", True

    def ssn_invalid(self) -> tuple[str, str, bool]:
        r = self.rng.random()
        area = self.rng.choice(("000", "666", str(self.rng.randint(900, 999)))) if r < 0.6 else \
            f"{self.rng.randint(1, 665):03d}"
        group = "00" if r >= 0.6 and r < 0.8 else f"{self.rng.randint(1, 99):02d}"
        serial = "0000" if r >= 0.8 else f"{self.rng.randint(1, 9999):04d}"
        return f"{area}-{group}-{serial}", "ssn_invalid", False


DECOY_KIND = {
    "id_bad_check": "cn_resident_id", "id_bad_date": "cn_resident_id", "card_bad_luhn": "bank_card",
    "uscc_bad_check": "cn_uscc", "iban_bad_check": "iban", "order_id": "bank_card", "timestamp": "bank_card",
    "long_digit_run": "cn_resident_id", "phone_like": "cn_mobile", "ip_bad_octet": "ipv4",
    "ssn_invalid": "us_ssn",
}
# Added later: generated after the clean items, so that the items before them stay as they were.
LATER_DECOY_KIND = {"grouped_long_number": "bank_card", "card19_bad_luhn_grouped": "bank_card"}

# --- text --------------------------------------------------------------------------------------------------

TEMPLATES: dict[str, tuple[str, ...]] = {
    "cn_resident_id": (
        "我的身份证号是{v}请核对", "客户{name}的身份证号码：{v}，已登记。", "身份证{v}",
        "请核验证件号{v}是否本人",
        "Please verify ID {v} before onboarding.", "申请人{name}（身份证号{v}）提交了贷款申请",
        "ID number: {v}", "他说身份证是{v}，手机号稍后发你", "订单已取消，客户{v}申请退款",
    ),
    "bank_card": (
        "我的卡号是{v}请尽快转账", "请把款打到{v}这张卡上", "银行卡：{v}（{bank}）",
        "card number {v}, exp 12/27", "the border fee was charged to {v}",
        "退款请原路退回尾号所在的卡{v}。", "Pay with {v} please.", "收款账户{v}户名{name}",
    ),
    "cn_mobile": (
        "我的手机号是{v}有事打给我", "联系电话：{v}", "请拨打{v}联系{name}", "call me at {v} tomorrow",
        "手机{v}，微信同号", "收货人{name}电话{v}地址见备注", "please reorder and text {v}",
    ),
    "cn_landline": (
        "公司电话{v}转人事部", "座机：{v}", "请致电{v}咨询", "office phone {v} (9:00-18:00)",
        "客服热线{v}，工作日接听",
    ),
    "cn_uscc": (
        "统一社会信用代码{v}", "公司{company}的信用代码是{v}请备案", "USCC: {v}", "纳税人识别号：{v}，开票用",
    ),
    "cn_passport": (
        "护照号码{v}已过期", "passport no. {v}", "请提供护照号：{v}", "{name}的护照号是{v}，签证已办好",
    ),
    "hk_macau_permit": (
        "港澳通行证号码{v}", "往来港澳通行证：{v}，有效期五年", "HK/Macau permit {v}", "通行证{v}请随身携带",
    ),
    "cn_license_plate": (
        "车牌号{v}违章停车", "一辆{v}的白色轿车", "plate {v} was towed", "车辆{v}已缴费离场",
        "车牌：{v}，车主{name}",
    ),
    "email": (
        "请发邮件到{v}确认", "邮箱：{v}，抄送领导", "email {v} for details", "联系{v}获取报价",
        "我的邮箱是{v}。",
    ),
    "ipv4": (
        "服务器IP是{v}请加白名单", "来源地址{v}被封禁", "connect to {v} on port 22", "IP：{v}，端口8080",
        "ping {v}.", "访问http://{v}/admin失败", "upstream {v}:8080 timed out", "everyone uses {v} as DNS",
    ),
    "ipv6": (
        "IPv6地址{v}无法访问", "源地址：{v}，协议TCP", "listen on [{v}]:443", "客户端{v}请求过多",
        "src_ip:{v} dropped", "对端地址是{v}：请核查",
    ),
    "us_ssn": (
        "SSN: {v}", "my social security number is {v}.", "社保号{v}（美国）", "Employee SSN {v} on file",
    ),
    "iban": (
        "IBAN: {v}", "请汇款至{v}，SWIFT见附件", "transfer to {v} by Friday", "收款IBAN：{v}。",
    ),
    "secret": (
        "token={v}", "Authorization: Bearer {v}", "我的密钥是{v}别外传", "export AWS_ACCESS_KEY_ID={v}",
        "api key: {v}", "配置里写着{v}，请轮换",
    ),
}
DECOY_TEMPLATES: dict[str, tuple[str, ...]] = {
    "id_bad_check": ("身份证号{v}校验失败", "ID {v} is invalid", "证件号{v}请重新输入"),
    "id_bad_date": ("身份证号{v}日期不对", "证件号码：{v}（无效）"),
    "card_bad_luhn": ("卡号{v}不存在", "card {v} declined", "银行卡{v}校验未通过"),
    "uscc_bad_check": ("信用代码{v}格式错误", "USCC {v} rejected"),
    "iban_bad_check": ("IBAN {v} failed validation", "收款账号{v}无效"),
    "order_id": ("订单号{v}已发货", "order #{v} shipped", "流水号：{v}", "交易单号{v}，请保留"),
    "timestamp": ("时间戳{v}", "created_at={v}", "日志{v}报错", "批次{v}处理完成"),
    "long_digit_run": ("编号{v}", "序列号：{v}", "trace id {v}", "物流单号{v}"),
    "phone_like": ("工单号{v}", "编码{v}已作废", "ref {v}"),
    "ip_bad_octet": ("地址{v}不是合法IP", "version {v} released", "IP {v} is malformed"),
    "ssn_invalid": ("case {v}", "编号{v}（无效SSN）"),
    "grouped_long_number": ("对公账号{v}", "账号：{v}，开户行见附件", "order {v} shipped", "合同编号 {v} 已归档"),
    "card19_bad_luhn_grouped": ("卡号{v}不存在", "card {v} declined", "银行卡 {v} 校验未通过"),
}
# A card followed by a space and another number, as people write them one after the other.
ADJACENT_TEMPLATES = ("卡号 {card} {other}请核对", "card {card} {other}", "{card} {other}（{name}）",
                      "银行卡{card} {other}，麻烦登记")
CLEAN_TEXTS: tuple[str, ...] = (
    "会议定于2024年3月5日14:30在三楼举行，共12人参加。", "本月销售额为¥1,299,000.00，同比增长12.5%。",
    "请在2025-06-30前提交报告，版本v2.3.1。", "房间1203的空调坏了，邮编100080。",
    "ISBN 978-7-111-12345-6 这本书很好。", "第3季度共卖出4500件，退货23件。",
    "The meeting is at 10:45, room 3B, floor 12.", "价格从99元降到79元，限时3天。",
    "Build 1234 passed 567 tests in 89.5 s.", "请在10:00:00到12:30:00之间来取件。",
    "温度37.5度，血压120/80，心率72。", "我们需要3到5个工作日处理，谢谢。",
)
OPENERS = ("", "", "", "你好，", "麻烦帮我查一下，", "Hi team, ", "请帮我把下面的信息整理成表格：",
           "Summarize this record: ", "用户反馈：", "【系统通知】", "Note: ", "补充一下，")
CLOSERS = ("", "", "", "谢谢！", " Thanks.", "，尽快处理。", "。有问题再联系。", " ASAP.", "，多谢", "")
BANKS = ("工商银行", "建设银行", "农业银行", "招商银行", "中国银行", "交通银行")


@dataclass(slots=True)
class _Builder:
    """Concatenates text parts and records the offsets of values and decoys as it goes."""

    parts: list[str] = field(default_factory=list)
    pos: int = 0
    labels: list[Label] = field(default_factory=list)
    decoys: list[Decoy] = field(default_factory=list)

    def text(self, s: str) -> None:
        self.parts.append(s)
        self.pos += len(s)

    def value(self, kind: str, v: Value) -> None:
        self.labels.append(Label(kind, self.pos, self.pos + len(v.text), v.variant))
        self.text(v.text)

    def decoy(self, kind: str, s: str, reason: str, checksum: bool) -> None:
        self.decoys.append(Decoy(kind, self.pos, self.pos + len(s), reason, checksum))
        self.text(s)


class CorpusGenerator:
    def __init__(self, seed: int = SEED) -> None:
        self.rng = random.Random(seed)
        zh, en = Faker("zh_CN"), Faker("en_US")
        ibans = [Faker(loc) for loc in ("de_DE", "fr_FR", "en_GB", "nl_NL", "es_ES", "it_IT")]
        for i, f in enumerate([zh, en, *ibans]):
            f.seed_instance(seed + i)
        self.zh = zh
        self.en = en
        self.values = Values(self.rng, zh, en, ibans)
        self.decoys = Decoys(self.values)

    def _fill(self, b: _Builder, template: str, put: Callable[[], None]) -> None:
        """Write `template` into `b`, calling `put` where `{v}` stands."""
        before, after = template.split("{v}")
        b.text(self._subst(before))
        put()
        b.text(self._subst(after))

    def _subst(self, s: str) -> str:
        return (s.replace("{name}", str(self.zh.name())).replace("{company}", str(self.zh.company()))
                .replace("{bank}", self.rng.choice(BANKS)))

    def _filler(self) -> str:
        r = self.rng.random()
        if r < 0.25:
            return str(self.zh.sentence())
        if r < 0.35:
            return str(self.en.sentence()) + " "
        return ""

    def _wrap(self, b: _Builder, body: Callable[[], None]) -> None:
        b.text(self.rng.choice(OPENERS) + self._filler())
        body()
        closer = self.rng.choice(CLOSERS)
        last = next((part for part in reversed(b.parts) if part), " ")[-1]
        if last in "。.！!，,）)" and closer[:1] in "。.，, ":
            closer = closer.lstrip("。.，, ")
        b.text(closer)

    def single(self, kind: str) -> _Builder:
        b = _Builder()
        v: Value = getattr(self.values, kind)()
        template = self.rng.choice(TEMPLATES[kind])
        self._wrap(b, partial(self._fill, b, template, partial(b.value, kind, v)))
        return b

    def multi(self, kinds: Sequence[str]) -> _Builder:
        b = _Builder()

        def body() -> None:
            for i, kind in enumerate(kinds):
                v: Value = getattr(self.values, kind)()
                self._fill(b, self.rng.choice(TEMPLATES[kind]), partial(b.value, kind, v))
                if i < len(kinds) - 1:
                    b.text(self.rng.choice(("；", "，另外", "。", "; ", ", and ", "\n")))

        self._wrap(b, body)
        return b

    def decoy(self, reason: str) -> _Builder:
        b = _Builder()
        while True:  # a decoy that happens to pass some other kind's check would be real PII: draw again
            s, why, checksum = getattr(self.decoys, reason)()
            if not passes_any_check(s):
                break
        template = self.rng.choice(DECOY_TEMPLATES[reason])
        kind = DECOY_KIND.get(why) or LATER_DECOY_KIND[why]
        self._wrap(b, partial(self._fill, b, template, partial(b.decoy, kind, s, why, checksum)))
        return b

    def adjacent(self) -> _Builder:
        """A card in groups of four, a space, then a mobile number or a resident ID: each is its own value."""
        b = _Builder()
        card = self.values.raw_card()
        sep = self.rng.choice((" ", "-"))
        grouped = sep.join(card[i:i + 4] for i in range(0, len(card), 4))
        card_value = Value(grouped, "spaced" if sep == " " else "dashed")
        kind = self.rng.choice(("cn_mobile", "cn_resident_id"))
        other = Value(self.values.raw_mobile(), "plain") if kind == "cn_mobile" else \
            Value(self.values.raw_resident_id(), "plain")
        if kind == "cn_mobile" and self.rng.random() < 0.5:
            other = Value(f"{other.text[:3]} {other.text[3:7]} {other.text[7:]}", "spaced")

        def body() -> None:
            template = self.rng.choice(ADJACENT_TEMPLATES)
            head, rest = template.split("{card}")
            mid, tail = rest.split("{other}")
            b.text(self._subst(head))
            b.value("bank_card", card_value)
            b.text(mid)
            b.value(kind, other)
            b.text(self._subst(tail))

        self._wrap(b, body)
        return b

    def clean(self) -> _Builder:
        b = _Builder()
        b.text(self.rng.choice(OPENERS) + self.rng.choice(CLEAN_TEXTS) + self._filler())
        return b

    def generate(self, per_kind: int = 220, multi: int = 300, per_decoy: int = 70,
                 clean: int = 150) -> list[Item]:
        plan: list[tuple[str, Callable[[], _Builder]]] = []
        for kind in KINDS:
            plan += [(kind, partial(self.single, kind)) for _ in range(per_kind)]
        for _ in range(multi):
            ks = self.rng.sample(KINDS, self.rng.randint(2, 4))
            plan.append(("multi", partial(self.multi, ks)))
        for reason in DECOY_KIND:
            plan += [(f"decoy_{reason}", partial(self.decoy, reason)) for _ in range(per_decoy)]
        plan += [("clean", self.clean) for _ in range(clean)]
        for reason in LATER_DECOY_KIND:
            plan += [(f"decoy_{reason}", partial(self.decoy, reason)) for _ in range(per_decoy)]
        plan += [("adjacent", self.adjacent) for _ in range(per_decoy)]
        items = []
        for i, (tag, make) in enumerate(plan):
            b = make()
            items.append(Item(f"{tag}-{i:05d}", "".join(b.parts), tuple(b.labels), tuple(b.decoys)))
        return items


def generate(seed: int = SEED, per_kind: int = 220, multi: int = 300, per_decoy: int = 70,
             clean: int = 150) -> list[Item]:
    """The corpus for `seed`: `per_kind` single-value items per kind, `multi` items mixing 2-4 kinds,
    `per_decoy` items per decoy reason, `clean` items with benign numbers only, then `per_decoy` items of a
    card followed by another number."""
    return CorpusGenerator(seed).generate(per_kind, multi, per_decoy, clean)


def dumps(items: Iterable[Item]) -> str:
    return "".join(json.dumps(it.to_json(), ensure_ascii=False) + "\n" for it in items)


def load(path: Path) -> list[Item]:
    with path.open(encoding="utf-8") as fh:
        return [Item.from_json(json.loads(line)) for line in fh if line.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--out", type=Path, default=DEFAULT_PATH)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--per-kind", type=int, default=220)
    args = ap.parse_args(argv)
    items = generate(args.seed, args.per_kind)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(dumps(items), encoding="utf-8")
    n_labels = sum(len(it.labels) for it in items)
    n_decoys = sum(len(it.decoys) for it in items)
    print(f"wrote {len(items)} items, {n_labels} labels, {n_decoys} decoys to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
