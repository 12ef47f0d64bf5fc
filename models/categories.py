"""Semantic categories defined by example phrases in YAML rule files (models/data/categories/*.yaml).

A file defines one category: `category` (id), `level` (1 warn, 2 block, 3 strong block with alert: the seed's
levels), `description`, `lexical_categories` (word-list categories it may clear or corroborate),
`keywords` (the plain keyword baseline of `warden models eval`), `positives` and `hard_negatives`, each
`{zh: [...], en: [...]}`. `models/data/benign.yaml` holds everyday requests, negatives for every category.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

import yaml

from models.errors import CategoryFileError

LANGS = ("zh", "en")
LEVELS = (1, 2, 3)


@dataclass(frozen=True, slots=True)
class Category:
    name: str
    level: int
    description: str
    lexical_categories: tuple[str, ...]
    keywords: Mapping[str, tuple[str, ...]]
    positives: Mapping[str, tuple[str, ...]]
    hard_negatives: Mapping[str, tuple[str, ...]]
    source: str


@dataclass(frozen=True, slots=True)
class Exemplar:
    """One training text: `label` is a category name or None (negative for every category)."""

    text: str
    lang: str
    label: str | None
    topic: str | None  # the category a hard negative is about, None for plain benign chat


def data_dir() -> Path:
    return Path(str(resources.files("models") / "data"))


def _by_lang(path: str, name: str, field: str, value: object, *, required: bool) -> dict[str, tuple[str, ...]]:
    if value is None and not required:
        return {lang: () for lang in LANGS}
    if not isinstance(value, Mapping):
        raise CategoryFileError(path, "expected a mapping {zh: [...], en: [...]}", category=name, field=field)
    out: dict[str, tuple[str, ...]] = {}
    for lang in LANGS:
        items = value.get(lang, [])
        if not isinstance(items, Sequence) or isinstance(items, str) or not all(
                isinstance(t, str) and t.strip() for t in items):
            raise CategoryFileError(path, f"{lang}: expected a list of non-empty strings", category=name,
                                    field=field)
        if required and not items:
            raise CategoryFileError(path, f"{lang}: at least one phrase is required", category=name, field=field)
        out[lang] = tuple(items)
    unknown = set(value) - set(LANGS)
    if unknown:
        raise CategoryFileError(path, f"unknown languages {sorted(unknown)}", category=name, field=field)
    return out


def load_category(path: Path) -> Category:
    where = str(path)
    try:
        doc = yaml.safe_load(path.read_text("utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise CategoryFileError(where, f"cannot read: {exc}") from exc
    if not isinstance(doc, Mapping):
        raise CategoryFileError(where, "expected a mapping at the top level")
    name = doc.get("category")
    if not isinstance(name, str) or not name.isidentifier():
        raise CategoryFileError(where, f"expected an identifier, got {name!r}", field="category")
    level = doc.get("level")
    if level not in LEVELS:
        raise CategoryFileError(where, f"expected one of {LEVELS}, got {level!r}", category=name, field="level")
    assert isinstance(level, int)
    lexical = doc.get("lexical_categories", [name])
    if not isinstance(lexical, list) or not all(isinstance(c, str) for c in lexical):
        raise CategoryFileError(where, "expected a list of strings", category=name, field="lexical_categories")
    known = {"category", "level", "description", "lexical_categories", "keywords", "positives", "hard_negatives"}
    unknown = set(doc) - known
    if unknown:
        raise CategoryFileError(where, f"unknown fields {sorted(unknown)}", category=name)
    return Category(
        name=name,
        level=level,
        description=str(doc.get("description", "")),
        lexical_categories=tuple(lexical),
        keywords=_by_lang(where, name, "keywords", doc.get("keywords"), required=False),
        positives=_by_lang(where, name, "positives", doc.get("positives"), required=True),
        hard_negatives=_by_lang(where, name, "hard_negatives", doc.get("hard_negatives"), required=False),
        source=where,
    )


def load_categories(directory: Path | None = None) -> tuple[Category, ...]:
    """Every `*.yaml` in the directory, sorted by category name; duplicate names are an error."""
    directory = directory or data_dir() / "categories"
    cats = [load_category(p) for p in sorted(directory.glob("*.yaml"))]
    seen: dict[str, str] = {}
    for c in cats:
        if c.name in seen:
            raise CategoryFileError(c.source, f"category also defined in {seen[c.name]}", category=c.name)
        seen[c.name] = c.source
    if not cats:
        raise CategoryFileError(str(directory), "no category files (*.yaml)")
    return tuple(sorted(cats, key=lambda c: c.name))


def load_benign(path: Path | None = None) -> dict[str, tuple[str, ...]]:
    path = path or data_dir() / "benign.yaml"
    doc = yaml.safe_load(path.read_text("utf-8"))
    if not isinstance(doc, Mapping):
        raise CategoryFileError(str(path), "expected a mapping at the top level")
    return _by_lang(str(path), "benign", "benign", doc.get("benign"), required=True)


def exemplars(categories: Sequence[Category], benign: Mapping[str, Sequence[str]]) -> list[Exemplar]:
    """All training texts in a fixed order: categories by name, positives, hard negatives, then benign."""
    out: list[Exemplar] = []
    for c in categories:
        for lang in LANGS:
            out += [Exemplar(t, lang, c.name, c.name) for t in c.positives[lang]]
            out += [Exemplar(t, lang, None, c.name) for t in c.hard_negatives[lang]]
    for lang in LANGS:
        out += [Exemplar(t, lang, None, None) for t in benign[lang]]
    return out


def with_exemplars(categories: Sequence[Category], benign: Mapping[str, Sequence[str]], more: Sequence[Exemplar]
                   ) -> tuple[tuple[Category, ...], dict[str, tuple[str, ...]]]:
    """The categories and benign texts with `more` added after their own, in `more`'s order: a positive to its
    label's positives, a hard negative to its topic's hard negatives, a text with neither to the benign texts. A
    label or topic that names no category is a ValueError (a set labelled for other categories)."""
    names = {c.name for c in categories}
    stray = sorted({str(e.label or e.topic) for e in more if (e.label or e.topic) is not None} - names)
    if stray:
        raise ValueError(f"exemplars for categories that are not trained here: {', '.join(stray)}")
    out = []
    for c in categories:
        pos = {lang: (*c.positives[lang], *(e.text for e in more if e.label == c.name and e.lang == lang))
               for lang in LANGS}
        neg = {lang: (*c.hard_negatives[lang],
                      *(e.text for e in more if e.label is None and e.topic == c.name and e.lang == lang))
               for lang in LANGS}
        out.append(replace(c, positives=pos, hard_negatives=neg))
    plain = {lang: (*benign[lang], *(e.text for e in more if e.label is None and e.topic is None and e.lang == lang))
             for lang in LANGS}
    return tuple(out), plain


_CJK_RUNS = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]+")
_ASCII_LETTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def language(text: str) -> str:
    """"zh" when at least a fifth of the letters are CJK ideographs, else "en" (the heads' two languages).

    Counted by runs, not character by character (a Python step per character cost ~130 us per KB of English
    and ~37 us per KB of Chinese; this 0.1 us for ASCII, ~17-20 us otherwise): every ideograph in these
    blocks is a letter (`str.isalpha`), so the letters are the ideographs plus the letters between them."""
    if text.isascii():
        return "en"
    cjk = sum(map(len, _CJK_RUNS.findall(text)))
    if not cjk:
        return "en"
    rest = _CJK_RUNS.sub("", text)
    if rest.isascii():
        data = rest.encode()
        others = len(data) - len(data.translate(None, _ASCII_LETTERS))
    else:
        others = sum(map(str.isalpha, rest))
    return "zh" if cjk * 5 >= cjk + others else "en"
