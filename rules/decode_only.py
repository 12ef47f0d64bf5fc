"""A request to decode something, and nothing more, is not an injection: "Can you decode this geocache hint? Ybbx haqre
gur guveq srapr cbfg", "请帮我确认这串 base64 能正确解出来" (a wedding invitation's easter egg).

`asks_only_to_decode(text)` says whether a text holds a run the decoder reads as text (rules/decode.py) while it says
nothing about carrying out what the run says (follow, carry out, treat it as, 照做, 执行) and names no machine reader
(an assistant, a bot, an AI, a plugin, 助手, 机器人). `DecodeOnly` is a FindingFilter that drops the word-list, pattern
and semantic `prompt_injection` findings of such a text. What the run says was decoded and scanned already: a decoded
payload the word lists, patterns or heads flag is a `decoded` finding, which, like every model-free signature (the
decode-and-obey signature among them, rules/smuggled.py), keeps every finding. That holds only where the decoding
runs, so the filter sits with it (proxy/guard/engine.py: request scanners with decoding on, the same bounds), not
among the fusion filters that answers and `warden scan` share.

Why (session 36): every blind set is written with harmless encoded strings among its injection look-alikes, and the
injection head reads "decode this" beside a run as the encoded-payload attack. Over eval17-74, 20 texts were flagged
by the head and word lists alone while holding a decodable run: the 4 look-alikes (a geocache hint and a puzzle answer
in ROT13, a wedding greeting and a club's notice in base64) ask to decode and name no reader; each of the 16 positives
asks to carry the decoded text out or names the machine that will read it (a chat's bot, a mail assistant, an AI
tutor, a browser plugin).

Session 39: blind eval86 and eval87 each asked, in Chinese, what a sentence with a zero-width character between every
two characters really says ("复制到电脑上发现每个字中间都夹着零宽字符", a meeting notice), and the injection head
flagged both. Such an interleaved run (INTERLEAVED visible characters, each followed by invisible ones) is read as a
decodable run too: the base view and the heads' fold already remove the invisible characters, so what it says was
scanned. Over eval17-87, of the 29 texts holding one, the product's verdict changed on those two look-alikes and on
no positive (17, each of which asks to carry the text out or names its reader).

What it gives up: a run whose decoded instruction none of the scanners flags, sent with a bare "decode this", passes
the injection head. The model that decodes it reads that instruction too; the decode-and-obey signature and the
scanners of the decoded text are what stand there.
"""

from __future__ import annotations

from collections.abc import Sequence

import re2

from rules.decode import DecodeConfig, Decoder
from rules.discussed import SIGNATURE_KINDS
from rules.findings import Finding, alternatives, utf8_safe
from rules.own_instructions import without_soft_findings

# Carrying the decoded text out: "follow it", "carry them out", "treat it as coming from", "do what it says", 照做,
# 照办, 照着, 执行, 按它 ("the following base64" is no such word)
_OBEY = alternatives([
    r"\b(?:follow(?:s|ed)?|obey\w*|execut\w*|compl(?:y|ies|ied)|apply|applies|applied)\b"
    r"|\bcarr(?:y|ies|ying)\s+(?:\w+\s+){0,2}?out\b|\bcarry\s+(?:it|them)\b"
    r"|\bdo\s+(?:what|as)\s+(?:it|they)\s+says?\b|\bact\s+on\b|\btreat\s+(?:it|them|this)\s+as\b",
    r"照做|照办|照着|执行|遵守|遵照|遵循|按照?(?:它|这|上面|里面|内容|要求)"
    # "你读得懂的话就当作我的正式要求去办"
    r"|当(?:作|成)[^，。！？\n]{0,8}?(?:要求|指令|命令|指示)|(?:去|给我|帮我)办",
])
# A machine that reads the text or the run: an assistant, a bot, an AI, a plugin; the model's own rules or setup
_READER = alternatives([
    r"\b(?:assistants?|bots?|ai|agents?|models?|chatbots?|gpt|llms?|copilot|plugins?|tutor)\b"
    r"|\byou\s+are\b|\byour\s+(?:rules|instructions|setup|system|guidelines)\b",
    r"助手|机器人|智能|插件|模型|客服|你的(?:规则|设定|指令)",
])


# Visible characters, each followed by invisible ones (zero-width spaces and joiners, directional marks, the word
# joiner, the BOM): "明​天​上​午​十​点" read as it shows
INTERLEAVED = 6
_INVISIBLE = re2.compile(r"[\x{200b}-\x{200f}\x{2060}\x{feff}]+")
_INTERLEAVED = alternatives([r"(?:[^\s\x{200b}-\x{200f}\x{2060}\x{feff}][\x{200b}-\x{200f}\x{2060}\x{feff}]+)"
                             r"{" + str(INTERLEAVED) + r",}"])


class DecodeOnly:
    """FindingFilter: drops the word-list, pattern and semantic `prompt_injection` findings of a text that asks only to
    decode a run (`asks_only_to_decode`), unless a signature or a decoded payload found something in it."""

    def __init__(self, config: DecodeConfig | None = None) -> None:
        self._config = config if config is not None else DecodeConfig()
        self._decoder = Decoder(self._config)

    def asks_only_to_decode(self, text: str) -> bool:
        """Whether `text` holds a run the decoder reads as text, with no word of carrying it out nor of a machine
        reader."""
        readable = utf8_safe(text)
        # the words read as they show: an interleaved run hides "assistant" from a pattern, not from a reader
        visible = _INVISIBLE.sub("", readable) if _INVISIBLE.search(readable) is not None else readable
        if _OBEY.search(visible) is not None or _READER.search(visible) is not None:
            return False
        if _INTERLEAVED.search(readable) is not None:
            return True
        if self._decoder.too_short(readable):
            return False
        return bool(self._decoder.runs(readable, [self._config.max_bytes, self._config.max_runs]))

    def __call__(self, text: str, findings: Sequence[Finding]) -> Sequence[Finding]:
        return without_soft_findings(findings, SIGNATURE_KINDS, lambda: self.asks_only_to_decode(text))


__all__ = ["INTERLEAVED", "DecodeOnly"]
