"""What the decoder tests share (tests/rules/test_decode_*.py): a decoder's runs of a text, the texts the default
decoder reads, and a detector that scans decoded text with the builtin word lists."""

from __future__ import annotations

from rules.decode import DecodeConfig, Decoder, DecodingDetector
from rules.scanner import Scanner


def runs(text: str, **config: object) -> list[tuple[str, int, int, str]]:
    """(encoding, start, end, decoded text) of each run a decoder of `config` reads in `text`."""
    found = Decoder(DecodeConfig(**config)).runs(text, [8192, 16])  # type: ignore[arg-type]
    return [(r.encoding, r.start, r.end, r.text) for r in found]


_DEFAULT = Decoder(DecodeConfig())


def decoded(text: str) -> list[str]:
    """The texts the default configuration's decoder reads in `text`."""
    return [t for _, _, t in _DEFAULT.decoded_texts(text)]


def detector(config: DecodeConfig | None = None) -> DecodingDetector:
    """A decoding detector whose decoded text the builtin word lists and patterns scan."""
    scanner = Scanner.load([], builtin=True)
    return DecodingDetector(config or DecodeConfig(), [lambda t: scanner.scan(t).findings])
