"""Writes rules/decode_pinyin_data.py: the pinyin of every character of the builtin word lists' Chinese phrases
(rules/builtin/words.yaml), for rules/decode_pinyin.py. Run once when the word lists change (a test says when):

    pip install --target /tmp/pypinyin_gen pypinyin==0.55.0
    PYTHONPATH=/tmp/pypinyin_gen .venv/bin/python -m bench.pinyin_table

pypinyin is needed here only; the product reads the written table and never imports it. Each character gets all its
readings (heteronyms), tone numbers 1-5 (5: neutral), `v` for ü.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from pypinyin import Style, pinyin  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parent.parent
WORDS = ROOT / "rules" / "builtin" / "words.yaml"
OUT = ROOT / "rules" / "decode_pinyin_data.py"
_HANZI = re.compile(r"[\u4e00-\u9fff]")


def phrases() -> list[str]:
    """The builtin word lists' phrases with an ideograph, lower case, in file order."""
    data = yaml.safe_load(WORDS.read_text("utf-8"))
    out: list[str] = []
    for rule in data["words"]:
        out += [w.lower() for w in rule["words"] if _HANZI.search(w) and w.lower() not in out]
    return out


def main() -> None:
    listed = phrases()
    chars = sorted({c for p in listed for c in p if _HANZI.match(c)})
    table = {c: tuple(pinyin(c, style=Style.TONE3, heteronym=True, neutral_tone_with_five=True)[0]) for c in chars}
    lines = [
        '"""The pinyin of the builtin word lists\' Chinese phrases\' characters (rules/decode_pinyin.py). Written by',
        "bench/pinyin_table.py from rules/builtin/words.yaml with pypinyin 0.55.0: do not edit by hand.",
        '"""',
        "",
        "PHRASES = (",
        *(f'    "{p}",' for p in listed),
        ")",
        "READINGS: dict[str, tuple[str, ...]] = {",
        *(f'    "{c}": {table[c]!r},' for c in chars),
        "}",
        "",
    ]
    OUT.write_text("\n".join(lines), "utf-8")
    print(f"wrote {OUT} ({len(listed)} phrases, {len(chars)} characters)")


if __name__ == "__main__":
    main()
