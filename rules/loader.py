"""Rule files: parse YAML/JSON, validate every field, merge files in order (DESIGN section 3).

Accepted shapes (the seed formats as they are, plus the full form):

    {"rule": "CHN_ID_CARD", "mask_pattern": "****-****-****-####", "enabled": true}      # one rule
    [{"pattern": "(?i)(代[考]|替考|枪手)", "level": 3}]                                  # a list of rules
    {"version": 1, "normalize": {...}, "pii": [...], "words": [...], "patterns": [...]}  # full form

An entry with `pattern` is a pattern rule, one with `words` a word-list rule, otherwise it configures a PII
rule (its `kind`, or a known rule id such as CHN_ID_CARD). Entries with the same `rule` id in later files
override the given fields of earlier ones (so `{"rule": "CHN_ID_CARD", "enabled": false}` turns the builtin
off). Unknown fields are errors: a typo must not silently weaken the policy. Every error is a RuleFileError
naming the file, the rule and the field.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from rules.decode import DecodeConfig
from rules.errors import RuleFileError
from rules.findings import Action
from rules.normalize import NormalizeConfig
from rules.pii import KINDS
from rules.roles import Role, RoleAction, parse_roles

# Rule ids from the seed formats and other tools (Presidio entity names) -> our PII kinds.
ALIASES: dict[str, str] = {
    "CHN_ID_CARD": "cn_resident_id", "CN_ID_CARD": "cn_resident_id", "ID_CARD": "cn_resident_id",
    "CN_RESIDENT_ID": "cn_resident_id", "BANK_CARD": "bank_card", "CREDIT_CARD": "bank_card",
    "CHN_BANK_CARD": "bank_card", "CHN_MOBILE": "cn_mobile", "CN_MOBILE": "cn_mobile",
    "PHONE_NUMBER": "cn_mobile", "CHN_LANDLINE": "cn_landline", "CN_LANDLINE": "cn_landline",
    "CHN_USCC": "cn_uscc", "CN_USCC": "cn_uscc", "CHN_PASSPORT": "cn_passport", "CN_PASSPORT": "cn_passport",
    "HK_MACAU_PERMIT": "hk_macau_permit", "CHN_LICENSE_PLATE": "cn_license_plate",
    "CN_LICENSE_PLATE": "cn_license_plate", "EMAIL": "email", "EMAIL_ADDRESS": "email", "IPV4": "ipv4",
    "IP_ADDRESS": "ipv4", "IPV6": "ipv6", "US_SSN": "us_ssn", "IBAN": "iban", "IBAN_CODE": "iban",
    "SECRET": "secret", "API_KEY": "secret",
}  # fmt: skip

COMMON_FIELDS = frozenset({"rule", "enabled", "level", "action", "category", "min_score", "description", "roles"})
PII_FIELDS = COMMON_FIELDS | {"kind", "mask_pattern", "mask"}
WORD_FIELDS = COMMON_FIELDS | {"words", "allow", "reply"}
PATTERN_FIELDS = COMMON_FIELDS | {"pattern", "reply"}
TOP_FIELDS = frozenset({"version", "normalize", "pii", "words", "patterns", "rules"})
NORMALIZE_FIELDS = frozenset({"traditional_to_simplified", "skip_chars", "max_skip", "decode"})
DECODE_SWITCHES = ("base64", "base32", "hex", "url", "binary", "decimal", "html", "escapes", "qp", "tags",
                   "zero_width", "braille", "octal", "ascii85", "uuencode", "utf7", "upside_down", "rot13", "rot47",
                   "reverse", "spelled", "atbash", "vigenere", "a1z26", "bacon", "keyboard", "gb2312", "mojibake",
                   "punycode", "cjk_shift", "bubblebabble", "regional", "base45", "variation", "base100",
                   "core_values", "brainfuck", "ubbi_dubbi", "pinyin", "base36", "base16384", "hexagrams", "dna",
                   "whitespace", "runes", "substitution", "columnar", "zhuyin", "base62", "ganzhi", "mahjong",
                   "qianziwen", "ita2", "trifid", "playfair", "affine", "base91", "taixuan", "counting_rods", "jianpu",
                   "mansions", "hill", "checkerboard", "spiral", "shuangpin", "readings")
DECODE_FIELDS = frozenset({*DECODE_SWITCHES, "min_run", "max_bytes", "max_runs", "min_printable"})


@dataclass(frozen=True, slots=True)
class RuleEntry:
    """One validated rule after merging: `type` is pii|words|pattern; `fields` the checked values."""

    rule: str
    type: str
    fields: Mapping[str, Any]
    source: str


@dataclass(frozen=True, slots=True)
class LoadedRules:
    entries: tuple[RuleEntry, ...]
    normalize: NormalizeConfig
    sources: tuple[str, ...] = field(default=())
    decode: DecodeConfig = field(default=DecodeConfig())  # rules/decode.py: base64/hex runs in requests


def builtin_paths() -> list[Path]:
    base = resources.files("rules").joinpath("builtin")
    return sorted(Path(str(p)) for p in base.iterdir() if p.name.endswith((".yaml", ".yml")))


def _read(path: Path) -> Any:
    src = str(path)
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleFileError(src, f"cannot read: {exc}") from None
    if path.suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            where = f"line {exc.lineno} column {exc.colno}"
            raise RuleFileError(src, f"JSON syntax error at {where}: {exc.msg}") from None
        except ValueError as exc:  # an integer beyond int()'s digit limit
            raise RuleFileError(src, f"JSON value error: {exc}") from None
        except RecursionError:
            raise RuleFileError(src, "JSON nested deeper than the parser can follow") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        raise RuleFileError(src, f"YAML syntax error{where}: {getattr(exc, 'problem', exc)}") from None
    except RecursionError:
        raise RuleFileError(src, "YAML nested deeper than the parser can follow") from None
    except Exception as exc:  # only PyYAML runs inside the try
        # PyYAML's constructors let whatever a conversion raises escape: ValueError for `2001-13-45` (it looks
        # like a timestamp) or an integer beyond int()'s digit limit, AttributeError for `!!timestamp x`,
        # KeyError for `!!bool x`. All of them are a value the file cannot hold.
        raise RuleFileError(src, f"YAML value cannot be read: {type(exc).__name__}: {exc}") from None


def _field_names(mapping: dict[Any, Any], src: str, rule: str | None = None, where: str = "") -> None:
    """YAML allows keys of any type (`1: x`, `null: y`); ours are names, and a report sorts and prints them."""
    for key in mapping:
        if not isinstance(key, str):
            raise RuleFileError(src, f"field names must be strings, got {key!r}", rule=rule,
                                field=f"{where}{key!r}")


def _entries(doc: Any, src: str) -> tuple[list[tuple[str | None, Any, str]], dict[str, Any]]:
    """(declared section, raw entry, default id) triples and the raw normalize section."""
    if isinstance(doc, list):
        return [(None, e, f"{Path(src).name}#{i}") for i, e in enumerate(doc)], {}
    if not isinstance(doc, dict):
        raise RuleFileError(src, f"expected a mapping or a list of rules, got {type(doc).__name__}")
    words = doc.get("words")
    single_word_rule = isinstance(words, list) and any(isinstance(w, str) for w in words)
    if "rule" in doc or "pattern" in doc or single_word_rule:
        return [(None, doc, f"{Path(src).name}#0")], {}
    _field_names(doc, src)
    unknown = set(doc) - TOP_FIELDS
    if unknown:
        raise RuleFileError(
            src, f"unknown top-level field(s) {sorted(unknown)}; expected {sorted(TOP_FIELDS)}",
            field=sorted(unknown)[0],
        )
    if doc.get("version", 1) != 1:
        raise RuleFileError(src, f"unsupported version {doc.get('version')!r} (expected 1)", field="version")
    out: list[tuple[str | None, Any, str]] = []
    for section in ("pii", "words", "patterns", "rules"):
        items = doc.get(section) or []
        if not isinstance(items, list):
            raise RuleFileError(src, f"{section!r} must be a list", field=section)
        declared = None if section == "rules" else section
        out += [(declared, e, f"{Path(src).name}#{section}{i}") for i, e in enumerate(items)]
    norm = doc.get("normalize") or {}
    if not isinstance(norm, dict):
        raise RuleFileError(src, "'normalize' must be a mapping", field="normalize")
    return out, norm


def _type_of(section: str | None, entry: dict[str, Any]) -> str:
    if "pattern" in entry:
        return "pattern"
    if "words" in entry:
        return "words"
    if section == "patterns":
        return "pattern"
    if section == "words":
        return "words"
    return "pii"


def _check(entry: dict[str, Any], typ: str, rid: str, src: str) -> dict[str, Any]:
    allowed = {"pii": PII_FIELDS, "words": WORD_FIELDS, "pattern": PATTERN_FIELDS}[typ]
    _field_names(entry, src, rid)
    for key in entry:
        if key not in allowed:
            raise RuleFileError(
                src, f"unknown field for a {typ} rule; allowed: {sorted(allowed)}", rule=rid, field=key
            )
    out: dict[str, Any] = {}

    def need(name: str, ok: bool, what: str) -> None:
        if not ok:
            raise RuleFileError(src, f"expected {what}, got {entry[name]!r}", rule=rid, field=name)

    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    for key, given in entry.items():
        value = given
        if key == "enabled":
            need(key, isinstance(value, bool), "true or false")
        elif key == "level":
            need(key, is_int(value) and value in (1, 2, 3), "level 1, 2 or 3")
        elif key == "action":
            need(key, isinstance(value, str) and value in {a.value for a in Action}, "one of " + "|".join(Action))
            value = Action(value)
        elif key in ("category", "description", "rule"):
            need(key, isinstance(value, str) and value.strip() != "", "a non-empty string")
        elif key == "min_score":
            need(key, (is_int(value) or isinstance(value, float)) and 0 <= value <= 1, "a number in [0, 1]")
            value = float(value)
        elif key == "kind":
            need(key, isinstance(value, str) and value in KINDS, "one of " + ", ".join(KINDS))
        elif key == "mask_pattern":
            need(key, isinstance(value, str) and any(c in "*#" for c in value), "a mask like ***-####")
        elif key == "mask":
            ok = value in ("default", "full") or (
                isinstance(value, dict) and (
                    (set(value) <= {"keep_first", "keep_last"} and value != {}
                     and all(is_int(v) and 0 <= v <= 64 for v in value.values()))
                    or (set(value) == {"replace"} and isinstance(value["replace"], str))
                )
            )
            need(key, ok, "'default', 'full', {keep_first: N, keep_last: M} or {replace: TEXT}")
        elif key in ("words", "allow"):
            need(key, isinstance(value, list) and all(isinstance(w, str) and w.strip() for w in value)
                 and (key == "allow" or len(value) > 0), "a list of non-empty strings")
            value = tuple(w.strip() for w in value)
        elif key == "pattern":
            need(key, isinstance(value, str) and value != "", "a non-empty RE2 pattern string")
        elif key == "roles":
            # What the rule's findings do per role of the text (rules/roles.py): {tool: strip, user: block}.
            roles = parse_roles(value)
            need(key, roles is not None, "a mapping of role (" + "|".join(Role) + ") to action ("
                 + "|".join(RoleAction) + ")")
            value = roles
        elif key == "reply":
            # A blocked chat request answers with this text as the assistant's message instead of an error
            # (self-harm: the person may need help). One text, or one per language {zh: ..., en: ...}.
            if isinstance(value, str):
                value = {"zh": value, "en": value}
            need(key, isinstance(value, dict) and value != {} and set(value) <= {"zh", "en"}
                 and all(isinstance(v, str) and v.strip() for v in value.values()),
                 "a non-empty string or {zh: TEXT, en: TEXT}")
            value = {lang: value.get(lang) or next(iter(value.values())) for lang in ("zh", "en")}
        out[key] = value
    return out


def _normalize(raw: dict[str, Any], src: str, base: NormalizeConfig) -> NormalizeConfig:
    _field_names(raw, src, where="normalize.")
    unknown = set(raw) - NORMALIZE_FIELDS
    if unknown:
        allowed = sorted(NORMALIZE_FIELDS)
        raise RuleFileError(src, f"unknown normalize field; allowed: {allowed}", field=sorted(unknown)[0])
    # `decode` is read by `_decode`: it configures the decoding detector, not the normalized views.
    t2s = raw.get("traditional_to_simplified", base.traditional_to_simplified)
    skip = raw.get("skip_chars", base.skip_chars)
    max_skip = raw.get("max_skip", base.max_skip)
    if not isinstance(t2s, bool):
        raise RuleFileError(src, "expected true or false", field="normalize.traditional_to_simplified")
    if not isinstance(skip, str):
        raise RuleFileError(src, "expected a string of characters", field="normalize.skip_chars")
    if not isinstance(max_skip, int) or isinstance(max_skip, bool) or not 0 <= max_skip <= 8:
        raise RuleFileError(src, "expected an integer 0-8", field="normalize.max_skip")
    return NormalizeConfig(t2s, skip, max_skip)


def _decode(raw: Any, src: str, base: DecodeConfig) -> DecodeConfig:
    """`normalize.decode`: true/false, or a mapping overriding the given bounds of the earlier files'."""
    where = "normalize.decode"
    if raw is None:
        return base
    if isinstance(raw, bool):
        return dataclasses.replace(base, **dict.fromkeys(DECODE_SWITCHES, raw))
    if not isinstance(raw, dict):
        raise RuleFileError(src, "expected true, false or a mapping", field=where)
    _field_names(raw, src, where=where + ".")
    unknown = set(raw) - DECODE_FIELDS
    if unknown:
        raise RuleFileError(src, f"unknown decode field; allowed: {sorted(DECODE_FIELDS)}",
                            field=f"{where}.{sorted(unknown)[0]}")
    limits = {"min_run": (8, 4096), "max_bytes": (0, 1 << 20), "max_runs": (0, 1024)}
    for key, value in raw.items():
        if key in DECODE_SWITCHES:
            ok = isinstance(value, bool)
            what = "true or false"
        elif key == "min_printable":
            ok = isinstance(value, int | float) and not isinstance(value, bool) and 0.5 <= value <= 1
            what = "a number in [0.5, 1]"
        else:
            lo, hi = limits[key]
            ok = isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi
            what = f"an integer {lo}-{hi}"
        if not ok:
            raise RuleFileError(src, f"expected {what}, got {value!r}", field=f"{where}.{key}")
    if "min_printable" in raw:
        raw = {**raw, "min_printable": float(raw["min_printable"])}
    return dataclasses.replace(base, **raw)


def load_files(paths: Iterable[str | Path]) -> LoadedRules:
    """Parse and validate `paths` in order and merge them (later files override fields of earlier rules)."""
    merged: dict[str, tuple[str, dict[str, Any], str]] = {}
    norm = NormalizeConfig()
    decode = DecodeConfig()
    sources: list[str] = []
    for p in paths:
        path = Path(p)
        src = str(path)
        sources.append(src)
        raw_entries, raw_norm = _entries(_read(path), src)
        norm = _normalize(raw_norm, src, norm)
        decode = _decode(raw_norm.get("decode"), src, decode)
        seen: set[str] = set()
        for section, entry, default_id in raw_entries:
            if not isinstance(entry, dict):
                got = type(entry).__name__
                raise RuleFileError(src, f"a rule must be a mapping, got {got}", rule=default_id)
            rid = entry.get("rule", default_id)
            if not isinstance(rid, str) or not rid.strip():
                raise RuleFileError(src, "expected a non-empty string", rule=default_id, field="rule")
            if rid in seen:
                raise RuleFileError(src, "duplicate rule id in one file", rule=rid, field="rule")
            seen.add(rid)
            previous = merged.get(rid)
            typ = _type_of(section, entry)
            if previous is not None and section is None and "pattern" not in entry and "words" not in entry:
                typ = previous[0]  # an override such as {"rule": "exam_fraud", "level": 1} keeps its type
            checked = _check(entry, typ, rid, src)
            if previous is not None and previous[0] != typ:
                raise RuleFileError(src, f"rule was a {previous[0]} rule in {previous[2]}, here a {typ} rule",
                                    rule=rid, field="rule")
            fields = {**previous[1], **checked} if previous is not None else checked
            merged[rid] = (typ, fields, src)
    entries = []
    for rid, (typ, merged_fields, src) in merged.items():
        fields = merged_fields
        if typ == "pii" and "kind" not in fields:
            kind = ALIASES.get(rid.upper(), rid if rid in KINDS else None)
            if kind is None:
                kinds = ", ".join(KINDS)
                raise RuleFileError(
                    src, f"unknown PII rule: give a 'kind' (one of {kinds}), a 'pattern' or 'words'",
                    rule=rid, field="kind",
                )
            fields = {**fields, "kind": kind}
        entries.append(RuleEntry(rid, typ, fields, src))
    return LoadedRules(tuple(entries), norm, tuple(sources), decode)


def load(paths: Sequence[str | Path] = (), *, builtin: bool = True) -> LoadedRules:
    """Builtin packs first (when asked), then `paths` in order."""
    return load_files([*(builtin_paths() if builtin else []), *paths])
