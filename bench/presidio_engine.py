"""Presidio's analyzer with its pattern recognizers only: no spaCy model, nothing downloaded.

`AnalyzerEngine` needs an NLP engine; `StubNlpEngine` returns empty artifacts (no tokens, no entities), so
only the regex/checksum recognizers (and the phonenumbers-based PhoneRecognizer) produce results, and the
context enhancer finds no context words. The spaCy NER recognizer is dropped from the registry.

tldextract (used by Presidio's EmailRecognizer) would fetch the public suffix list on first use; we point it
at its bundled snapshot before Presidio is imported.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

from presidio_analyzer import AnalyzerEngine, EntityRecognizer, RecognizerRegistry
from presidio_analyzer.nlp_engine import NlpArtifacts, NlpEngine
from presidio_analyzer.predefined_recognizers import (
    CreditCardRecognizer,
    EmailRecognizer,
    IbanRecognizer,
    IpRecognizer,
    PhoneRecognizer,
    UsSsnRecognizer,
)

# Presidio entity -> our kind. IP_ADDRESS splits into ipv4/ipv6 by the match; PHONE_NUMBER has no CN split.
ENTITY_KIND: dict[str, str] = {
    "CREDIT_CARD": "bank_card",
    "EMAIL_ADDRESS": "email",
    "IP_ADDRESS": "ip",
    "US_SSN": "us_ssn",
    "IBAN_CODE": "iban",
    "PHONE_NUMBER": "phone",
}
PHONE_REGIONS = ("CN", *PhoneRecognizer.DEFAULT_SUPPORTED_REGIONS)


class StubNlpEngine(NlpEngine):
    """An NLP engine that does no NLP: empty tokens and entities for every text."""

    def load(self) -> None:
        pass

    def is_loaded(self) -> bool:
        return True

    def process_text(self, text: str, language: str) -> NlpArtifacts:
        no_tokens: Any = []  # NlpArtifacts wants a spaCy Doc; an empty list iterates the same way
        return NlpArtifacts(entities=[], tokens=no_tokens, tokens_indices=[], lemmas=[], nlp_engine=self,
                            language=language)

    def process_batch(self, texts: Iterable[str], language: str, batch_size: int = 1, n_process: int = 1,
                      **kwargs: Any) -> Iterator[tuple[str, NlpArtifacts]]:
        for t in texts:
            yield t, self.process_text(t, language)

    def is_stopword(self, word: str, language: str) -> bool:
        return False

    def is_punct(self, word: str, language: str) -> bool:
        return False

    def get_supported_entities(self) -> list[str]:
        return []

    def get_supported_languages(self) -> list[str]:
        return ["en"]


@dataclass(frozen=True, slots=True)
class Hit:
    entity: str
    start: int
    end: int
    score: float


def pii_recognizers() -> list[EntityRecognizer]:
    """The recognizers whose entities have a counterpart among our kinds (CN phone region added)."""
    return [CreditCardRecognizer(), EmailRecognizer(), IpRecognizer(), UsSsnRecognizer(), IbanRecognizer(),
            PhoneRecognizer(supported_regions=PHONE_REGIONS)]


def all_pattern_recognizers() -> list[EntityRecognizer]:
    """Presidio's default English registry minus the spaCy NER recognizer (17 recognizers in 2.2.366)."""
    registry = RecognizerRegistry()
    registry.load_predefined_recognizers(languages=["en"])
    return [r for r in registry.recognizers if type(r).__name__ != "SpacyRecognizer"]


class Presidio:
    """An `AnalyzerEngine` over the given recognizers and the stub NLP engine."""

    def __init__(self, recognizers: Sequence[EntityRecognizer]) -> None:
        registry = RecognizerRegistry(recognizers=list(recognizers), supported_languages=["en"])
        self.engine = AnalyzerEngine(registry=registry, nlp_engine=StubNlpEngine(),
                                     supported_languages=["en"])
        self.recognizers = recognizers

    def analyze(self, text: str) -> list[Hit]:
        return [Hit(r.entity_type, r.start, r.end, r.score) for r in self.engine.analyze(text, language="en")]

    @staticmethod
    def kind_of(hit: Hit, text: str) -> str | None:
        kind = ENTITY_KIND.get(hit.entity)
        if kind == "ip":
            return "ipv6" if ":" in text[hit.start:hit.end] else "ipv4"
        return kind
