"""People's names and postal addresses (rules/names.py): found by their cues, never by a capital letter or a
place name alone; masked to their first characters or first administrative level; pseudonymized as
<PERSON_n>/<ADDRESS_n> and restored."""

from __future__ import annotations

from pathlib import Path

import pytest
import re2

from rules import masking, pii
from rules.pseudonym import PseudonymVault
from rules.scanner import Scanner

SCANNER = Scanner.load()


def found(text: str) -> list[tuple[str, str]]:
    return [(f.kind, text[f.start : f.end]) for f in SCANNER.scan(text).findings
            if f.kind in ("person_name", "postal_address")]


NAME_CASES = [
    ("收件人：张三，明天到", "张三"),
    ("联系人王小明电话见附件", "王小明"),
    ("客户欧阳娜娜反映网速很慢", "欧阳娜娜"),
    ("户名文涛，谢谢", "文涛"),  # a surname that is also a word: after a label only
    ("请联系陈静女士", "陈静"),
    ("李明老师的课", "李明"),
    ("诸葛亮亮的手机号换了", "诸葛亮亮"),
    ("张亮 18449473134", "张亮"),
    ("Name: Jane Doe", "Jane Doe"),
    ("Dear John A. Smith,", "John A. Smith"),
    ("Attn: Michelle Duke Thanks.", "Michelle Duke"),
    ("Mr. Smith will call you back", "Smith"),
    ("customer Mary-Ann O'Hara asked", "Mary-Ann O'Hara"),
    ("Jane Doe's phone number is on file", "Jane Doe"),
    ("Contact: 罗红梅，尽快处理", "罗红梅"),
    ("Vernon Reese女士，您的包裹已到", "Vernon Reese"),
    ("请联系周一鸣老师", "周一鸣"),  # a name that begins like a weekday
]
NAME_TEXTS = [text for text, _ in NAME_CASES]


@pytest.mark.parametrize(("text", "value"), NAME_CASES)
def test_names_with_a_cue(text: str, value: str) -> None:
    assert found(text) == [("person_name", value)]


@pytest.mark.parametrize("text", [
    "李白是唐朝最著名的诗人之一。", "George Washington was the first president.", "王老吉凉茶", "李宁的股价涨了",
    "Morgan Stanley reported earnings.", "客户关系要维护好", "客户满意度提升", "收件人信息写错了",
    "Dear Customer Service Team,", "Dear Sir or Madam,", "Name: N/A", "周末我们去爬山吧", "高中的地址在哪",
    "我和张先生", "The Quick Brown Fox Jumps", "司马光砸缸的故事", "并说这是任课老师推荐的", "我把猫托付给楼下阿姨了",
    "用来骗支付宝的账号", "下周六同学聚会", "方便同学参考", "4月11日前交给班主任。",
])
def test_no_name_without_a_cue(text: str) -> None:
    assert [k for k, _ in found(text) if k == "person_name"] == []


ADDRESS_CASES = [
    ("我家住在浙江省杭州市西湖区文三路90号", "浙江省杭州市西湖区文三路90号"),
    ("请寄到北京市朝阳区建国路88号SOHO现代城5号楼1203室，谢谢", "北京市朝阳区建国路88号SOHO现代城5号楼1203室"),
    ("寄到杭州市西湖区文三路90号3栋2单元501室", "杭州市西湖区文三路90号3栋2单元501室"),
    ("内蒙古自治区呼和浩特市新城区金融街66-11号。", "内蒙古自治区呼和浩特市新城区金融街66-11号"),
    ("地址：朝阳区建国路88号", "朝阳区建国路88号"),
    ("收货地址：东风路653号翠苑一区6层", "东风路653号翠苑一区6层"),
    ("Ship to 123 Main Street, Springfield, IL 62704.", "123 Main Street, Springfield, IL 62704"),
    ("I live at 42 Oak Ave, Apt 3B", "42 Oak Ave, Apt 3B"),
    ("10 High Street, London SW1A 2AA", "10 High Street, London SW1A 2AA"),
    ("1200 King Street, Toronto, ON M5V 2T6", "1200 King Street, Toronto, ON M5V 2T6"),
]
ADDRESS_TEXTS = [text for text, _ in ADDRESS_CASES]


@pytest.mark.parametrize(("text", "value"), ADDRESS_CASES)
def test_addresses(text: str, value: str) -> None:
    assert found(text) == [("postal_address", value)]


@pytest.mark.parametrize("text", [
    "北京市有哪些值得去的景点？", "去上海市浦东新区旅游需要几天？", "四川省成都市锦江区的美食",
    "沿着中山路直走，第二个路口右转",
    "地铁2号线到南京东路站下车", "Turn left onto Main Street and go 2 miles.", "How far is Oxford Street from here?",
    "The bus stops at 5th and Elm Street.", "地址：见附件", "中山路5号",
])
def test_no_address_without_road_number_and_start(text: str) -> None:
    assert [k for k, _ in found(text) if k == "postal_address"] == []


@pytest.mark.parametrize(("text", "masked"), [
    ("收件人：张三，", "收件人：张*，"),
    ("Dear John Smith,", "Dear J*** S****,"),
    ("地址：北京市朝阳区建国路88号", "地址：北京市*********"),
    ("寄到广西壮族自治区南宁市青秀区五四路12号", "寄到广西壮族自治区************"),
    ("地址：朝阳区建国路88号", "地址：朝阳区******"),
    ("地址：中山路12号", "地址：******"),
    ("Ship to 123 Main Street, Springfield, IL 62704.", "Ship to *** **** ******, ***********, IL *****."),
])
def test_masks(text: str, masked: str) -> None:
    assert masking.apply(text, SCANNER.scan(text), None) == masked


def test_pseudonyms_are_restored(tmp_path: Path) -> None:
    rules = tmp_path / "p.yaml"
    rules.write_text("- {rule: PERSON_NAME, action: pseudonymize}\n- {rule: POSTAL_ADDRESS, action: pseudonymize}\n",
                     "utf-8")
    scanner = Scanner.load([rules])
    vault = PseudonymVault()
    text = "收件人：张三，地址：北京市朝阳区建国路88号。Dear John Smith, 张三先生"
    out = masking.apply(text, scanner.scan(text), vault)
    assert out == "收件人：<PERSON_1>，地址：<ADDRESS_1>。Dear <PERSON_2>, <PERSON_1>先生"
    assert vault.restore("<PERSON_1>的包裹寄到<ADDRESS_1>") == "张三的包裹寄到北京市朝阳区建国路88号"


GATED = [s for s in pii.BUILTIN_SPECS if s.gate]


@pytest.mark.parametrize("spec", GATED, ids=[s.name for s in GATED])
def test_a_gate_lets_through_every_text_its_spec_matches(spec: pii.PiiSpec) -> None:
    # The Set pass runs the gate instead of the pattern (PiiSpec.gate): a text the gate misses is never
    # searched with the pattern.
    texts = [*NAME_TEXTS, *ADDRESS_TEXTS, "客户John Smith的订单", "Dear 王芳,", "王芳 13812345678",
             "mail a.b-c@example.org now", "联系x@mail.cn", "7@1.co", "fe80::1", "ip:2001:db8::8a2e:370:7334",
             "::ffff:192.168.1.1", "２００１：ｄｂ８：：１", "1::", "::1"]
    full = re2.compile(spec.pattern)
    # A group's spec whose gate is GROUP_GATE is answered for by its group's first spec's gate.
    first = next(s for s in pii.BUILTIN_SPECS if spec.group and s.group == spec.group) if spec.group else spec
    gate = re2.compile(first.gate if spec.gate == pii.GROUP_GATE else spec.gate)
    matched = [t for t in texts if full.search(t)]
    assert matched
    assert [t for t in matched if not gate.search(t)] == []


def test_group_gate_matches_nothing_and_group_spec_is_found_by_its_run() -> None:
    # postal_address.zh_label carries GROUP_GATE: the Set never reports it, the group's run finds it.
    assert re2.compile(pii.GROUP_GATE).search("地址：朝阳区建国路88号 \x00 abc") is None
    scanner = Scanner.load()
    found = [(f.kind, f.start, f.end) for f in scanner.scan("收货地址：朝阳区建国路88号3单元").findings]
    assert found == [("postal_address", 5, 17)]
