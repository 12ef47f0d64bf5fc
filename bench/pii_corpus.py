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
- a license plate includes its middle dot (`京A·12345`);
- a passport number is the number alone, without its label (`passport no. 123456789`); numbers of other
  countries are kind `passport`, PRC ones (SAR passports included) `cn_passport`;
- a person's name is the name alone, without title, label or honorific (`Mr. [John Smith]`, `[张三]先生`);
- a postal address runs from its first administrative level (or its first part after a label) to its last
  part, room or postcode (`[北京市朝阳区建国路88号3栋501室]`, `[123 Main St, Springfield, IL 62704]`).

Names and addresses have decoys that are told by their context only (famous people in history questions,
places in travel questions, company names, streets in directions, label words before ordinary nouns,
passport labels before no number): `CONTEXT_DECOYS`. Items for issue 24 (passports, names, addresses,
shipping labels, those decoys, more clean prompts) are appended after the first items, which stay as they
were.

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

# The kinds of the first items, in the order their items are generated (the items after them are appended so
# that those stay byte for byte as they were).
BASE_KINDS: tuple[str, ...] = (
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
# Issue 24: other countries' passports after a label, people's names and postal addresses (no checksum).
NEW_KINDS: tuple[str, ...] = ("passport", "person_name", "postal_address")
KINDS: tuple[str, ...] = BASE_KINDS + NEW_KINDS
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

# Names and addresses (issue 24): our own lists, written for this corpus (no public PII corpus was read).
ZH_SURNAMES = ("王", "李", "张", "刘", "陈", "杨", "黄", "赵", "吴", "周", "徐", "孙", "马", "朱", "胡", "郭", "何",
               "林", "罗", "郑", "梁", "谢", "宋", "唐", "韩", "冯", "邓", "曹", "彭", "曾", "田", "董", "潘",
               "蒋", "蔡", "杜", "叶", "程", "魏", "吕", "丁", "沈", "姚", "卢", "崔", "钟", "谭", "陆", "汪",
               "廖", "贾", "夏", "韦", "邹", "孟", "熊", "秦", "邱", "薛", "闫", "段", "侯", "史", "顾", "郝",
               "龚", "邵", "覃", "戴", "莫", "孔", "汤", "庞", "聂", "岳", "翟", "殷", "詹", "耿", "焦", "俞",
               "柳", "祝", "阮", "纪", "裴", "霍", "骆", "蓝", "靳", "鲍", "滕", "饶", "牟", "岑", "瞿", "栾")
ZH_COMPOUND = ("欧阳", "司马", "上官", "诸葛", "东方", "皇甫", "慕容", "司徒", "夏侯", "令狐", "公孙", "长孙",
               "宇文", "尉迟", "端木", "南宫")
ZH_GIVEN = tuple("伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞刚桂英华玉兰萍红鹏飞辉斌宇浩欣怡子涵梓轩晨雨思佳嘉诗晓志"
                 "建海波宁俊峰琳婷雪梅颖慧倩博睿泽昊逸航凯悦瑶琪璐鑫楠萱琦彤蕾薇妍钰铭哲瀚翔瑞琛熙")
# (province or municipality, prefecture city or "", districts and county-level cities)
ZH_PLACES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("北京市", "", ("朝阳区", "海淀区", "东城区", "西城区", "丰台区", "昌平区")),
    ("上海市", "", ("浦东新区", "徐汇区", "静安区", "黄浦区", "闵行区")),
    ("天津市", "", ("和平区", "南开区", "滨海新区")),
    ("重庆市", "", ("渝中区", "江北区", "万州区")),
    ("广东省", "广州市", ("天河区", "越秀区", "番禺区")),
    ("广东省", "深圳市", ("南山区", "福田区", "宝安区")),
    ("广东省", "东莞市", ("南城街道", "长安镇")),
    ("浙江省", "杭州市", ("西湖区", "上城区", "余杭区", "桐庐县")),
    ("浙江省", "湖州市", ("吴兴区", "德清县")),
    ("江苏省", "南京市", ("鼓楼区", "玄武区")),
    ("江苏省", "苏州市", ("姑苏区", "吴中区", "昆山市")),
    ("四川省", "成都市", ("武侯区", "锦江区", "双流区")),
    ("湖北省", "武汉市", ("洪山区", "江汉区")),
    ("山东省", "青岛市", ("市南区", "崂山区", "胶州市")),
    ("河南省", "郑州市", ("金水区", "二七区")),
    ("陕西省", "西安市", ("雁塔区", "碑林区")),
    ("福建省", "厦门市", ("思明区", "湖里区")),
    ("湖南省", "长沙市", ("岳麓区", "芙蓉区")),
    ("辽宁省", "沈阳市", ("和平区", "沈河区")),
    ("云南省", "昆明市", ("五华区", "盘龙区")),
    ("河北省", "石家庄市", ("长安区", "桥西区")),
    ("安徽省", "合肥市", ("蜀山区", "包河区")),
    ("广西壮族自治区", "南宁市", ("青秀区", "兴宁区")),
    ("内蒙古自治区", "呼和浩特市", ("新城区", "赛罕区")),
    ("江西省", "赣州市", ("章贡区", "瑞金市")),
    ("贵州省", "遵义市", ("汇川区", "仁怀市")),
    ("黑龙江省", "哈尔滨市", ("南岗区", "道里区")),
    ("新疆维吾尔自治区", "乌鲁木齐市", ("天山区", "沙依巴克区")),
)
ZH_ROADS = ("中山路", "人民路", "解放路", "建国路", "文三路", "长安街", "南京东路", "淮海中路", "科技园南路",
            "学院路", "和平大道", "光明巷", "新华街", "东风路", "滨江大道", "天府大道", "中关村大街", "金融街",
            "体育西路", "幸福路", "工业大道", "西湖大道", "延安西路", "五四路", "青年路", "胜利街", "北京路")
ZH_ESTATES = ("阳光花园", "锦绣小区", "翠苑一区", "万科城", "绿地中心", "国贸大厦", "华润大厦", "金色家园")
EN_STREETS = ("Main", "Oak", "Maple", "Cedar", "Park", "Washington", "Lake", "Hill", "Elm", "Pine", "Sunset",
              "Highland", "Church", "Mill", "River", "King", "Queen", "Victoria", "Baker", "High", "Station",
              "Jefferson", "Franklin", "Lincoln", "Spring", "Willow", "Chestnut", "Madison", "Forest", "Green")
US_SUFFIXES = ("Street", "St", "Avenue", "Ave", "Road", "Rd", "Boulevard", "Blvd", "Lane", "Ln", "Drive", "Dr",
               "Court", "Ct", "Way", "Place", "Terrace", "Parkway")
UK_SUFFIXES = ("Road", "Street", "Lane", "Close", "Avenue", "Crescent", "Gardens", "Way")
UK_TOWNS = ("London", "Manchester", "Leeds", "Bristol", "Cardiff", "Oxford", "York", "Brighton", "Glasgow",
            "Edinburgh", "Nottingham", "Reading")
CA_CITIES = (("Toronto", "ON"), ("Ottawa", "ON"), ("Montreal", "QC"), ("Vancouver", "BC"), ("Calgary", "AB"),
             ("Halifax", "NS"), ("Winnipeg", "MB"))

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

    # issue 24 ------------------------------------------------------------------------------------------

    def cn_passport_more(self) -> Value:
        """The PRC formats the first items lack: diplomatic, service and public-affairs passports (D/S/P, with
        an E for the e-passports: DE1234567), and the HKSAR and Macao SAR passports (H/K/M + 8 digits,
        which read as a Home Return Permit number without the word passport around them)."""
        if self.rng.random() < 0.6:
            return Value(self.rng.choice("DSP") + self.rng.choice(("", "E")) + self.digits(7), "dsp")
        return Value(self.rng.choice("HKM") + self.digits(8), "sar")

    def passport(self) -> Value:
        """Other countries' passport numbers, as their formats are documented (found only after a label). A Korean
        M + 8 digits or an Indian S + 7 digits reads as a PRC (Macao SAR, service) passport and is left out."""
        country = self.rng.choice(("us", "gb", "de", "fr", "jp", "in", "ca", "sg", "au"))
        up = string.ascii_uppercase
        if country in ("us", "gb"):
            v = str(self.rng.randint(1, 9)) + self.digits(8)
        elif country == "de":
            alphabet = "CFGHJKLMNPRTVWXYZ"
            v = self.rng.choice(alphabet) + "".join(
                self.rng.choice(alphabet + string.digits * 2) for _ in range(8))
        elif country == "fr":
            v = self.digits(2) + "".join(self.rng.choice(up) for _ in range(2)) + self.digits(5)
        elif country == "jp":
            v = self.rng.choice(("TK", "TR", "MZ", "TZ")) + self.digits(7)
        elif country in ("in", "au"):
            # not D, S or P: a letter and 7 digits after those is a PRC passport of the same form
            v = self.rng.choice("ABCJLNRTUVWZ") + self.digits(7)
        elif country == "ca":
            v = "".join(self.rng.choice(up) for _ in range(2)) + self.digits(6)
        else:  # Singapore: a letter, 7 digits, a check letter
            v = self.rng.choice("KE") + self.digits(7) + self.rng.choice(up)
        return Value(v, country)

    def person_name(self) -> Value:
        r = self.rng.random()
        if r < 0.3:
            return Value(str(self.zh.name()), "zh")
        if r < 0.45:
            return Value(self.rng.choice(ZH_SURNAMES) + "".join(
                self.rng.choice(ZH_GIVEN) for _ in range(self.rng.choice((1, 2, 2)))), "zh")
        if r < 0.55:
            return Value(self.rng.choice(ZH_COMPOUND) + "".join(
                self.rng.choice(ZH_GIVEN) for _ in range(self.rng.choice((1, 2)))), "zh_compound")
        first, last = str(self.en.first_name()), str(self.en.last_name())
        if self.rng.random() < 0.1:
            return Value(f"{first} {self.rng.choice(string.ascii_uppercase)}. {last}", "en_initial")
        return Value(f"{first} {last}", "en")

    def postal_address(self) -> Value:
        r = self.rng.random()
        if r < 0.55:
            return self.zh_address()
        if r < 0.8:
            return self.us_address()
        if r < 0.9:
            return self.uk_address()
        return self.ca_address()

    def zh_address(self, labelled: bool = False) -> Value:
        province, city, districts = self.rng.choice(ZH_PLACES)
        district = self.rng.choice(districts)
        road = self.rng.choice(ZH_ROADS)
        number = f"{self.rng.randint(1, 999)}号"
        if self.rng.random() < 0.15:
            number = f"{self.rng.randint(1, 200)}-{self.rng.randint(1, 30)}号"
        r = self.rng.random()
        building = "" if r < 0.3 else (
            f"{self.rng.randint(1, 30)}栋{self.rng.randint(1, 6)}单元"
            f"{self.rng.randint(1, 33)}0{self.rng.randint(1, 6)}室"
            if r < 0.55 else f"{self.rng.randint(1, 20)}号楼{self.rng.randint(1, 28)}0{self.rng.randint(1, 8)}室"
            if r < 0.75 else f"{self.rng.choice(ZH_ESTATES)}{self.rng.randint(1, 20)}栋{self.rng.randint(101, 2802)}"
            if r < 0.9 else f"{self.rng.choice(ZH_ESTATES)}{self.rng.randint(2, 40)}层")
        tail = road + number + building
        r = self.rng.random()
        if labelled and r < 0.5:
            return Value(district + tail, "zh_district")
        if labelled and r < 0.7:
            return Value(tail, "zh_road")
        if r < 0.3 and city:
            return Value(city + district + tail, "zh_city")
        return Value(province + city + district + tail, "zh_full")

    def us_address(self) -> Value:
        street = f"{self.rng.randint(1, 9999)} {self.rng.choice(EN_STREETS)} {self.rng.choice(US_SUFFIXES)}"
        if self.rng.random() < 0.2:
            street += self.rng.choice((", Apt ", " Apt. ", ", Suite ", " #")) + str(self.rng.randint(1, 40)) + \
                self.rng.choice(("", "B", ""))
        if self.rng.random() < 0.2:
            return Value(street, "us_street")
        return Value(f"{street}, {self.en.city()}, {self.en.state_abbr()} {self.en.postcode()}", "us_full")

    def uk_address(self) -> Value:
        up = "ABCDEFGHJKLMNPRSTUWYZ"
        area = self.rng.choice(up) + self.rng.choice(("", self.rng.choice(up)))
        postcode = f"{area}{self.rng.randint(1, 29)} {self.rng.randint(0, 9)}{self.rng.choice(up)}{self.rng.choice(up)}"
        street = f"{self.rng.randint(1, 300)} {self.rng.choice(EN_STREETS)} {self.rng.choice(UK_SUFFIXES)}"
        return Value(f"{street}, {self.rng.choice(UK_TOWNS)} {postcode}", "uk")

    def ca_address(self) -> Value:
        up = "ABCEGHJKLMNPRSTVXY"
        postcode = (f"{self.rng.choice(up)}{self.rng.randint(0, 9)}{self.rng.choice(up)} "
                    f"{self.rng.randint(0, 9)}{self.rng.choice(up)}{self.rng.randint(0, 9)}")
        city, province = self.rng.choice(CA_CITIES)
        street = f"{self.rng.randint(1, 9999)} {self.rng.choice(EN_STREETS)} {self.rng.choice(US_SUFFIXES)}"
        return Value(f"{street}, {city}, {province} {postcode}", "ca")

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

# Issue 24 items: appended after the first ones (see `_issue24_plan`).
PASSPORT_LABELLED = ("passport no. {v}", "Passport No.: {v}", "passport number {v}", "Passport Number: {v}",
                     "护照号{v}", "护照号码：{v}", "护照号码是{v}", "{name}的护照号码为{v}",
                     "her passport number is {v}.", "passport #{v}", "Passport no:{v}，有效期十年")
# Home Return Permit numbers (H/M + 8 digits), labeled hk_macau_permit: the SAR passports' own format.
RETURN_PERMIT_TEMPLATES = ("回乡证号码{v}", "港澳居民来往内地通行证：{v}", "Home Return Permit {v}", "回乡证{v}已过期")
NAME_TEMPLATES = (
    "收件人：{v}", "收件人{v}，", "联系人：{v}", "姓名：{v}", "客户{v}反映网速很慢", "{v}先生您好，",
    "{v}女士，您的包裹已到",
    "请把资料转交{v}老师", "申请人{v}已提交材料", "患者{v}，45岁，", "我叫{v}，", "经办人：{v}", "{v}的手机号换了",
    "负责人是{v}", "乘客{v}请到登机口", "Name: {v}", "Dear {v},", "Mr. {v} will call you back",
    "Ms. {v} requested a refund", "customer {v} asked for an invoice", "patient {v} was admitted",
    "My name is {v}.", "Contact: {v}", "Attn: {v}", "{v}'s phone number is on file",
    "applicant {v} submitted the form", "Signed: {v}", "Dr. {v} is on call tonight",
)
ADDRESS_TEMPLATES = ("我家住在{v}", "请寄到{v}，谢谢", "公司地址是{v}", "收件地址{v}，电话见上", "Ship to {v}.",
                     "My address is {v}.", "Please send the documents to {v}", "I live at {v}",
                     "Mailing address: {v}", "Deliver to {v} before Friday", "billing address {v}")
# A label before it: an address may then start at its district or its road.
ADDRESS_LABELLED = ("收货地址：{v}", "地址：{v}", "家庭住址：{v}", "住址{v}", "收件地址：{v}")
# Shipping labels and forms: a name, a phone number and an address together.
SHIPPING_TEMPLATES = ("收件人：{name}，电话：{mobile}，地址：{address}", "{name} {mobile} {address}",
                      "联系人{name}，手机{mobile}，收货地址{address}",
                      "Name: {en_name}\nPhone: {mobile}\nAddress: {en_address}",
                      "Ship to {en_name}, {en_address}. Tel {mobile}")
# Non-PII that looks like a name or an address: famous people, places in travel questions, company and brand
# names, streets in directions, and the labels' words before ordinary nouns. (template, text, kind)
CONTEXT_DECOYS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "history": (
        ("{v}是唐朝最著名的诗人之一。", "李白", "person_name"),
        ("{v}统一了六国，建立了秦朝。", "秦始皇", "person_name"),
        ("草船借箭说的是{v}的故事吗？", "诸葛亮", "person_name"),
        ("{v} was the first president of the United States.", "George Washington", "person_name"),
        ("Why did {v} issue the Emancipation Proclamation?", "Abraham Lincoln", "person_name"),
        ("When did {v} sail to the Americas?", "Christopher Columbus", "person_name"),
        ("《红楼梦》的作者是{v}吗？", "曹雪芹", "person_name"),
        ("请介绍一下{v}的生平。", "孙中山", "person_name"),
        ("What did {v} discover about gravity?", "Isaac Newton", "person_name"),
        ("{v}是哪个朝代的皇帝？", "康熙", "person_name"),
        ("Summarize the plot of {v}'s Hamlet.", "William Shakespeare", "person_name"),
        ("{v}和颜真卿谁的书法更好？", "王羲之", "person_name"),
    ),
    "travel": (
        ("{v}有哪些值得去的景点？", "北京市", "postal_address"),
        ("从{v}到西湖怎么坐地铁？", "杭州东站", "postal_address"),
        ("去{v}旅游需要几天？", "上海市浦东新区", "postal_address"),
        ("What is there to see in {v}?", "San Francisco", "postal_address"),
        ("Is {v} worth a visit in winter?", "New York City", "postal_address"),
        ("{v}的天气怎么样？", "广东省深圳市", "postal_address"),
        ("How far is {v} from Heathrow?", "Oxford Street", "postal_address"),
        ("推荐一下{v}的美食。", "四川省成都市锦江区", "postal_address"),
        ("Plan a 3-day trip to {v}, Ontario.", "Toronto", "postal_address"),
        ("{v}附近有什么酒店？", "南京东路步行街", "postal_address"),
    ),
    "company": (
        ("{v}的股价今天涨了5%。", "李宁", "person_name"),
        ("我想买一瓶{v}凉茶。", "王老吉", "person_name"),
        ("{v} reported quarterly earnings today.", "Morgan Stanley", "person_name"),
        ("I opened an account at {v} Bank.", "Wells Fargo", "person_name"),
        ("{v}剪刀是老字号。", "张小泉", "person_name"),
        ("Compare the {v} F-150 with the Silverado.", "Ford", "person_name"),
        ("{v}是一家做电商的公司。", "阿里巴巴", "person_name"),
        ("Is {v} a good employer?", "Johnson & Johnson", "person_name"),
    ),
    "directions": (
        ("沿着{v}直走，第二个路口右转。", "中山路", "postal_address"),
        ("Turn left onto {v} and continue for 2 miles.", "Main Street", "postal_address"),
        ("在{v}和解放路的路口等我。", "人民路", "postal_address"),
        ("Take {v} north past the park.", "Oak Avenue", "postal_address"),
        ("地铁2号线到{v}站下车。", "南京东路", "postal_address"),
        ("The bus stops at 5th and {v}.", "Elm Street", "postal_address"),
        ("从{v}出口出来往东走200米。", "建国路", "postal_address"),
        ("Go down {v} for 300 yards, then left.", "High Street", "postal_address"),
    ),
    "passport_label": (
        ("passport no. {v}", "PENDING", "passport"),
        ("护照号码{v}", "待补充", "passport"),
        ("Passport Number: {v}", "TBD", "passport"),
        ("passport photo size {v}", "35x45mm", "passport"),
        ("护照有效期至{v}", "2031年5月", "passport"),
        ("passport #{v}", "N/A", "passport"),
        ("A passport number is {v} characters long.", "9", "passport"),
        ("护照号码为{v}位", "9", "passport"),
    ),
    "label_word": (
        ("收件人{v}写错了，请更正。", "信息", "person_name"),
        ("客户{v}是我们最重视的。", "满意度", "person_name"),
        ("我们要维护好客户{v}。", "关系", "person_name"),
        ("联系人{v}需要更新。", "列表", "person_name"),
        ("Dear {v},", "Customer Service Team", "person_name"),
        ("Contact: {v}", "Support Desk", "person_name"),
        ("Name: {v}", "N/A", "person_name"),
        ("姓名{v}不能为空。", "一栏", "person_name"),
        ("地址：{v}", "见附件", "postal_address"),
        ("请填写收货地址{v}。", "和电话", "postal_address"),
        ("Dear {v},", "Sir or Madam", "person_name"),
    ),
}
MORE_CLEAN_TEXTS: tuple[str, ...] = (
    "帮我写一个Python函数，计算列表中所有偶数的和。", "周末我们去爬山吧，天气预报说是晴天。",
    "How do I reverse a linked list in Java?", "红烧肉怎么做才不腻？", "请把这段话翻译成英文：我明天开会。",
    "What is the difference between TCP and UDP?", "马上就要考试了，有什么复习建议吗？",
    "解释一下什么是量子纠缠。", "Write a haiku about autumn leaves.", "黄金价格最近为什么涨这么多？",
    "高铁和飞机哪个更适合800公里的行程？", "Can you summarize the main causes of World War I?",
    "我们公司下周三开年会，帮我拟一个通知。", "王者荣耀新赛季有什么变化？",
    "The quick brown fox jumps over the lazy dog.",
    "张家界和九寨沟哪个更值得去？", "Which is better for a beginner, Python or JavaScript?",
    "司马光砸缸的故事告诉我们什么道理？", "请推荐几本关于宋朝历史的书。",
    "Dear team, the release is postponed to Monday.",
)

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
        self._subst(b, before)
        put()
        self._subst(b, after)

    def _subst(self, b: _Builder, s: str) -> None:
        """Write `s` into `b` with {name}, {company} and {bank} filled in; a name is a person_name label. The
        generators are called whether or not `s` has the field, as they always were (same corpus per seed)."""
        name = str(self.zh.name())
        s = s.replace("{company}", str(self.zh.company())).replace("{bank}", self.rng.choice(BANKS))
        for i, part in enumerate(s.split("{name}")):
            if i:
                b.value("person_name", Value(name, "zh_template"))
            b.text(part)

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
            self._subst(b, head)
            b.value("bank_card", card_value)
            b.text(mid)
            b.value(kind, other)
            self._subst(b, tail)

        self._wrap(b, body)
        return b

    def clean(self) -> _Builder:
        b = _Builder()
        b.text(self.rng.choice(OPENERS) + self.rng.choice(CLEAN_TEXTS) + self._filler())
        return b

    # issue 24 ---------------------------------------------------------------------------------------------

    def labelled(self, kind: str, v: Value, templates: Sequence[str]) -> _Builder:
        b = _Builder()
        template = self.rng.choice(templates)
        self._wrap(b, partial(self._fill, b, template, partial(b.value, kind, v)))
        return b

    def address(self) -> _Builder:
        if self.rng.random() < 0.25:  # labelled: it may start at its district or road
            v = self.values.zh_address(labelled=True)
            return self.labelled("postal_address", v, ADDRESS_LABELLED)
        return self.labelled("postal_address", self.values.postal_address(), ADDRESS_TEMPLATES)

    def shipping(self) -> _Builder:
        """A shipping label: name, mobile number and address, in Chinese or English."""
        b = _Builder()
        template = self.rng.choice(SHIPPING_TEMPLATES)
        en = "{en_name}" in template
        name = self.values.person_name()
        while (name.variant.startswith("en")) != en:
            name = self.values.person_name()
        values = {"name": ("person_name", name), "en_name": ("person_name", name),
                  "mobile": ("cn_mobile", Value(self.values.raw_mobile(), "plain")),
                  "address": ("postal_address", self.values.zh_address()),
                  "en_address": ("postal_address", self.rng.choice(
                      (self.values.us_address, self.values.uk_address, self.values.ca_address))())}

        def body() -> None:
            rest = template
            while "{" in rest:
                head, _, rest = rest.partition("{")
                field_name, _, rest = rest.partition("}")
                b.text(head)
                kind, v = values[field_name]
                b.value(kind, v)
            b.text(rest)

        self._wrap(b, body)
        return b

    def context_decoy(self, reason: str) -> _Builder:
        b = _Builder()
        template, value, kind = self.rng.choice(CONTEXT_DECOYS[reason])
        before, after = template.split("{v}")
        b.text(self.rng.choice(OPENERS) + before)
        b.decoy(kind, value, reason, False)
        b.text(after)
        return b

    def more_clean(self) -> _Builder:
        b = _Builder()
        b.text(self.rng.choice(OPENERS) + self.rng.choice(MORE_CLEAN_TEXTS) + self._filler())
        return b

    def _issue24_plan(self, per_kind: int, multi: int, per_decoy: int,
                      clean: int) -> list[tuple[str, Callable[[], _Builder]]]:
        v = self.values
        plan: list[tuple[str, Callable[[], _Builder]]] = []
        plan += [("cn_passport_more", lambda: self.labelled(
            "cn_passport", v.cn_passport_more(), TEMPLATES["cn_passport"] + PASSPORT_LABELLED))
            for _ in range(per_kind)]
        plan += [("passport", lambda: self.labelled("passport", v.passport(), PASSPORT_LABELLED))
                 for _ in range(per_kind)]
        plan += [("return_permit", lambda: self.labelled(
            "hk_macau_permit", Value(self.rng.choice("HM") + v.digits(8), "return_permit"),
            RETURN_PERMIT_TEMPLATES)) for _ in range(per_decoy)]
        plan += [("person_name", lambda: self.labelled("person_name", v.person_name(), NAME_TEMPLATES))
                 for _ in range(per_kind)]
        plan += [("postal_address", self.address) for _ in range(per_kind)]
        plan += [("shipping", self.shipping) for _ in range(multi // 3)]
        for reason in CONTEXT_DECOYS:
            plan += [(f"decoy_{reason}", partial(self.context_decoy, reason)) for _ in range(per_decoy)]
        plan += [("clean", self.more_clean) for _ in range(clean)]
        return plan

    def generate(self, per_kind: int = 220, multi: int = 300, per_decoy: int = 70,
                 clean: int = 150) -> list[Item]:
        plan: list[tuple[str, Callable[[], _Builder]]] = []
        for kind in BASE_KINDS:
            plan += [(kind, partial(self.single, kind)) for _ in range(per_kind)]
        for _ in range(multi):
            ks = self.rng.sample(BASE_KINDS, self.rng.randint(2, 4))
            plan.append(("multi", partial(self.multi, ks)))
        for reason in DECOY_KIND:
            plan += [(f"decoy_{reason}", partial(self.decoy, reason)) for _ in range(per_decoy)]
        plan += [("clean", self.clean) for _ in range(clean)]
        for reason in LATER_DECOY_KIND:
            plan += [(f"decoy_{reason}", partial(self.decoy, reason)) for _ in range(per_decoy)]
        plan += [("adjacent", self.adjacent) for _ in range(per_decoy)]
        plan += self._issue24_plan(per_kind, multi, per_decoy, clean)
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
