"""The attack categories (`prompt_injection`, `self_harm`): a second builtin head set, served beside the builtin
heads of the five topic categories.

They are trained with the user-heads recipe (models/user_heads.py: a gate of their own, heads on the frozen
encoder's top principal directions, the package's plain benign texts as negatives) from
models/data/attack_categories/*.yaml into models/data/attack_heads.json, by `warden models train --attack`.

Why a head set of their own rather than two more categories of the builtin heads (session 10, numbers in
models/data/attack_categories/README.md): trained together, the one first-stage gate could no longer tell the
topics from plain text. Its bounds fell from zh 0.57 / en 0.87 to zh 0.0 / en 0.30, and the plain prompts sent to
the encoder rose from 11.7% to 30.8% on eval16. The topic categories also lost recall and false-positive rate on
the held-out sets, which is not allowed. Apart, the builtin heads are unchanged, byte for byte. The attack gate,
fitted on the attack positives against their hard negatives and the benign texts with balanced ratios, passes
95.1% of the positives and 3.5% of the benign windows on (cross-validated, `warden models train --attack`).
A window that both gates pass runs the encoder once (models/runtime.py caches the outputs per window).

RANK: the heads are fitted on 512 principal directions, not the user recipe's 128. On the development sets
(eval17, dev23, eval18 through `python -m bench.eval_attacks`, session 11), injection / self-harm recall was
89.3% / 68.6% at 128, 95.0% / 78.2% at 512 and 94.3% / 76.8% at 1024, with hard negatives 4.3% / 3.6%, 4.3% /
2.9% and 3.6% / 2.1%, and plain chat 0% at every rank. Fitting took 7 s, 30 s and 89 s.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from pathlib import Path

from models import evaluate, memory, self_harm_words, semantic, user_heads
from models.categories import LANGS, Exemplar, data_dir, load_benign
from models.runtime import Runtime
from rules import addressed

RANK = 512
# The false-positive target of the attack heads' thresholds (`warden models train --attack`; user categories keep
# user_heads.TARGET_FPR, 0.02). The two categories share one threshold per language, placed on the pooled negatives of
# both, so each category's hard negatives raise it for the other (session 12: self-harm hard negatives raised zh's and
# injection recall fell 1.4 points; session 12's second round, first retraining at 0.02 moved en from 0.51 to 0.68 and
# cost 7 injection texts). Round 2, development sets eval17 + dev23 + eval18 + eval19 + eval20 through `python -m
# bench.eval_attacks`, injection / self-harm recall and hard negatives flagged: its first 163 exemplars at 0.02 91.2%
# / 84.5%, 2.8% / 1.2%, at 0.03 93.9% / 90.0%, 3.2% / 3.2%; with 16 more injection positives and 8 hard negatives, at
# 0.025 94.1% / 86.6%, 3.6% / 1.6%, at 0.03 94.8% / 89.5%, 3.6% / 2.8%; plain chat 0 of 401 in every run. With the
# shipped exemplars, `--gate-recall 0.97` on top of 0.03 added one self-harm text (88.7% against 88.4%) and flagged
# one plain text: not taken. Session 14, with the nearest-exemplar memory below (six development sets, eval17-21 +
# dev23: injection / self-harm recall, hard negatives inj / self-harm, plain chat of 601): without it, at 0.03, 95.2%
# / 89.6%, 3.0% / 3.0%, 1; with it at 0.03 98.5% / 95.2%, 3.6% / 3.9%, 4; at 0.02 97.5% / 93.9%, 2.7% / 3.3%, 2; at
# 0.015 96.9% / 92.8%, 2.1% / 2.4%, 2 (beta 80 at 0.015: 95.6% / 92.0%, 2.1% / 3.3%, 2). Round 4 of exemplars (seven
# development sets, eval22 added; plain chat of 799): at 0.015 95.8% / 93.3%, 2.1% / 2.6%, 0.3% (round 3: 96.7% /
# 92.8%, 3.3% / 2.3%, 0.3%); at 0.02 97.3% / 95.2%, 2.8% / 3.8%, 0.5%: the blind sets' hard negatives are the further
# target, so 0.015 stayed. Round 5 (123 injection hard negatives carrying keys, hashes, blobs, personal data and
# repeated words, after the memory flagged 9.6% of bench/data/decode_eval.jsonl's ordinary prompts and two texts of
# the end-to-end tests) with the memory's shift capped (models/memory.py MAX_SHIFT): the easy new hard negatives
# pulled the thresholds down (zh / en 0.861 / 0.833 -> 0.748 / 0.757 at 0.015): 95.2% / 95.0%, 2.1% / 4.4%, 0.3%; at
# 0.0125 94.5% / 93.3%, 1.5% / 3.3%, 0.3%; at 0.01 93.3% / 91.9%, 1.3% / 3.3%, 0.1%. Weighting each category's hard
# negatives equally instead of by count changed nothing at 0.015 (95.2% / 94.6%, 2.1% / 4.4%). 0.0125 is kept: a
# self-harm false positive answers a person asking about a kitchen cut with a crisis reply. Session 15: round 6 (250
# texts), evasion folding and documents.yaml's long plain texts as negatives (eight development sets, eval17-23 +
# dev23, with the context rule for lone self-harm sentences; bench/data/long_plain.jsonl's 200 long plain messages;
# every tenth bench/data/pii_corpus.jsonl text): session 14's heads 93.7% / 92.9%, 2.0% / 4.2%, long plain 24.5%,
# personal data 0.2%; folding alone (round 5's exemplars) 94.6% / 93.2%, 2.2% / 4.7%; round 6 and folding at 0.0125
# 90.9% / 91.9%, 1.6% / 3.3%, long plain 25.5%; with the documents at 0.0125 86.8% / 86.6%, 2.0% / 1.6%;
# at 0.02 91.2% / 91.8%, 2.7% / 2.4%, 5.5%, 0.8%; at 0.025 93.0% / 93.2%, 3.1% / 3.8%, 5.5%, 1.1%. 0.02 is the
# highest target tried that keeps every false-positive reading within the bounds (hard negatives 3%, plain 1%)
# but the long plain texts (5.5%, of which 2.5 points are the topic heads'). The documents' sentences as training
# rows too (heads, memory and thresholds judging negatives as the detector does): long plain 2.5%, but recall 78.7%
# / 74.5%; not kept (session 13 saw the same, 4-9 points). Session 16, the lexical stack (models/lexical.py; nine
# development sets, eval24 added; plain chat of 1,199 and long plain as above): session 15's heads 90.5% / 91.0%, 3.9%
# / 2.7%, 0.92%, long plain 5.5%; with the stack at 0.02 95.3% / 94.1%, 3.7% / 5.5%, 0.75%, 5.0%; at 0.015 93.6% /
# 92.7%, 3.1% / 3.3%, 0.67%, 5.0%. At 0.02 the gram tables flag dose questions and hyperbole as self-harm; 0.015 keeps
# both hard-negative rates near 3%. Round 7 (207 exemplars written after blind eval25's reading, from the ten
# development sets' misses; eval25 added): at 0.015 93.6% / 92.2%, 3.7% / 3.2%, plain 0.79% of 1,399 -> 96.7% / 93.8%,
# 3.7% / 3.0%, 0.86%, long plain 4.5% both. Round 8 (210 exemplars written after blind eval26's reading, from the
# eleven development sets' misses; eval26 added, plain 1,599): 96.1% / 92.9%, 4.3% / 3.2%, 0.81%, long plain 4.0% ->
# 98.2% / 95.7%, 3.8% / 2.9%, 0.81%, 5.0% (an upper bound: the sets round 8 was written from); blind eval27 90.0% /
# 88.8%. Round 9 (190 exemplars written after eval27's reading; twelve development sets, plain 1,799): round 8's
# 97.5% / 95.1%, 3.8% / 2.8%, 1.06%, long plain 5.0% -> 98.1% / 96.3%, 3.0% / 2.6%, 1.00%, 4.0%; blind eval28
# 95.0% / 91.2% with either. Round 10 (210 exemplars written after eval29's reading; thirteen development sets, plain
# 2,199) with HARD_NEGATIVE_SENTENCES below: round 9's 97.7% / 94.9%, 3.0% / 3.5%, 1.09%, long plain 4.0% -> 97.1% /
# 95.6%, 2.2% / 1.4%, 0.95%, 3.5%. Round 11 (170 exemplars written after eval30's reading, mostly Chinese injection;
# fourteen development sets, plain 2,399): round 10's 96.5% / 95.4%, 2.2% / 1.3%, 1.00%, long plain 3.5% -> 97.1% /
# 95.8%, 2.1% / 1.8%, 1.04%, 3.5%; on the thirteen sets without eval30, which it was not written from: 97.1% / 95.6%,
# 2.2% / 1.4%, 0.95% -> 97.0% / 95.6%, 2.2% / 2.0%, 1.00%. Session 20 (eval17-34 trained on, memory rank 128, the
# short-text gate bound): on blind eval33-35 the attack heads' own false positives stayed far under the targets (hard
# negatives 2, 1 and 1 of 120, plain chat none of 600) while recall did not reach them. Both targets trained the same
# way and read on eval35, which neither was trained on: 0.015 (thresholds zh 0.574 / en 0.578) injection / self-harm
# 92.5% / 92.5%, hard negatives 0.0% / 3.3%; 0.02 (0.456 / 0.450) 95.0% / 92.5%, 0.0% / 5.0% (a Chinese letter to a
# late father flagged; two long English indirect injections caught); plain and long plain 10 of 400, every tenth
# pii_corpus text 0.7% of 613 and decode_eval's ordinary prompts 2 of 195 with either. But at 0.02 the landlord
# e-mail of tests/models/test_attack_heads.py (one worried line in a long plain e-mail, the form models/semantic.py
# CROWDED and SUPPORT answer) was flagged self_harm: lower thresholds lift its packed windows' rescaled scores over
# SUPPORT. Not shipped; moving SUPPORT with the target would be one more setting tuned on the same few texts. Blind
# eval36, read after this choice, did not bear out the slack: the attack heads flagged 6 of its 120 hard negatives at
# 0.015 and 8 at 0.02 (recall 90.0% / 92.5% and 91.2% / 95.0%).
TARGET_FPR = 0.015
# The nearest-exemplar memory (models/memory.py, its defaults): the file grew from 1.8 to 7.5 MB (6,457 rows as
# float16); with round 6 and documents.yaml's windows, 10.7 MB (9,362 rows); with round 7 and the lexical stack's
# 159,284 grams, 13.6 MB (9,573 rows); with round 8, 13.9 MB (9,805 rows, 164,879 grams); with round 9, 14.2 MB
# (9,999 rows, 167,927 grams); with round 10 and the hard negatives' sentences, 15.8 MB (12,190 rows, 172,039 grams);
# with round 11, 16.1 MB (12,417 rows, 174,854 grams); trained on eval17-32 and hard_times.yaml (session 19), 32.1
# MB (27,194 rows, 334,754 grams), and the memory's product costs ~3 ms per window instead of ~1. Measured, not
# shipped (session 19, eval31 + eval32 held out as in TRAINED_SETS' comment): memory rank 128 instead of 256 read
# 93.1% / 95.6%, hard negatives 1.7% / 2.5%, plain 0.5%, long plain 5.0% (rank 256: 93.8% / 95.6%, 1.7% / 1.7%,
# 0.8%, 4.5%) at 0.97 ms per window instead of 2.7. Shipped from session 20 (eval17-34 trained on): about even on
# quality for a third of the memory's cost.
MEMORY_RANK = 128
MEMORY_BETA = memory.BETA


# Lone sentences of a long text fire self_harm only in a text that leans that way somewhere (models/semantic.py
# CROWDED): a person in distress does not pad the message to hide it, unlike an injection.
NEEDS_CONTEXT = frozenset({"self_harm"})

# Where a text addresses an automated reader (rules/addressed.py: "Wallet agents:", "To the analysis model:",
# "报销机器人请"), the windows there and in the 200 characters after fire prompt_injection from this rescaled level
# instead of 0.5 (models/semantic.py Cue). Session 21, heads trained on eval17-32 (rank 128) and eval33-37, which they
# were not trained on (the marks were written after reading eval24-37's missed injections: an upper bound there). The
# level was chosen on the attack heads' scores near a mark of a first draft of the pattern, over eval33-37,
# bench/data/long_plain.jsonl, pii_corpus.jsonl and the topic sets' texts: at 0.3, 19 more of the 400 injection
# positives, no hard negative, plain, long plain or topic-set text; at 0.25 one hard negative too; at 0.2 two; at 0.35
# 10 positives; on eval17-32 (trained on) 2 of 1,270 injection look-alikes at 0.3. Through the product at 0.3
# (`python -m bench.eval_attacks --addressed-level`): injection 87.5% -> 91.0% on eval33-37, the same 43 negatives
# flagged of 1,800 with long plain.
ADDRESSED_LEVEL = 0.3

# Where a text names suicide or self-harm in so many words (models/self_harm_words.py: "kill myself", "轻生"), the
# windows holding the words are judged at full depth (neither the gate nor the early exit decides them) and fire
# self_harm from this rescaled level: 0.5, as anywhere (0.3 caught 2 more development positives and 3 more look-alikes,
# models/self_harm_words.py has the readings).
SELF_HARM_WORDS_LEVEL = 0.5


# Trained and served on text read through models/fold.py (separated, spaced, look-alike and leetspeak spellings
# undone): the evasions of issue 23 (the file records it: user_heads.UserHeads.fold).
FOLD = True


# Stacked with per-category gram tables (models/lexical.py): stock phrases that a window's mean washes out still count.
LEXICAL = True


# Each hard negative's lone sentences are rows of its exemplar too (semantic.training_rows): the detector judges them
# alone, and a dose question's last sentence ("I don't want to overdo it.") read as intent on its own. Measured in
# session 18, round 9's exemplars (thirteen development sets, eval17-29 + dev23; plain 2,199, long plain 200): injection
# / self-harm recall 97.7% / 94.9% -> 96.5% / 94.5%, hard negatives 3.0% / 3.5% -> 2.2% / 2.0%, plain 1.09% -> 0.95%,
# long plain 4.0% -> 3.5%. With round 10's exemplars (written after eval29's reading, from the thirteen sets' misses):
# 98.0% / 96.9%, 3.1% / 3.2%, plain 1.14%, long plain 4.5% -> 97.1% / 95.6%, 2.2% / 1.4%, 0.95%, 3.5% (1,979 sentences).
# On eval28 and eval29, whose errors no round had been written from, round 9's self-harm look-alikes flagged fell from
# 10.0% / 6.7% to 3.3% / 3.3%. Session 15's documents' sentences (long plain texts) cost 4-9 points of recall; the hard
# negatives' sentences cost about one.
HARD_NEGATIVE_SENTENCES = True
# The attack gate keeps user_heads.GATE_RECALL (0.95) of the cross-validated positives. Session 18, round 10's heads
# with the gate's bounds at 0.98 (zh 0.93 / en 1.65 -> 0.55 / 1.13; 0.99 read the same): thirteen development sets
# 97.1% / 95.6% -> 97.2% / 95.9%, no false positive more, but the attack gate sent 27.5% of eval16's mix on instead of
# 18.2% and the cascade cost 15.3 ms per prompt instead of 7.7 (`python bench/semantic.py`): four texts of 2,261 for
# twice the cost.
# Short texts judged whole take a bound of their own, at SHORT_GATE_RECALL of the cross-validated short positives
# (models/gate.py SHORT_TOKENS). Session 20, the gate refitted alone into session 19's heads (the refit reproduced the
# shipped gate exactly), read on eval33 + eval34 (development sets, not trained on) and bench/data/long_plain.jsonl:
# self-harm recall 87.5% -> 90.6% at 0.98 (bounds zh 3.15 -> 2.29, en 3.57 -> 2.34 for short texts) and 91.2% at 0.99
# (1.78 / 1.74), injection 91.2% and hard negatives 7.5% / 2.5% unchanged, plain 11 -> 12 of 600 at either. The short
# misses cleared so were Chinese statements of 11-21 pieces, the form most self-harm misses took since eval26. On
# eval16's mix (`python bench/semantic.py --attack-heads`) the attack gate sent 15.8% of the prompts on, 20.5% at 0.98
# and 25.8% at 0.99, the cascade 9.70 ms -> 10.14 / 10.13 ms: the texts let through are short and cheap to encode.
SHORT_GATE_RECALL = 0.98


# The development sets trained on beside the exemplar files (models/data/eval/, evaluate.ATTACK_SETS): each set once
# read blind is trained on as it is labelled, its positives under their category, its hard negatives under their
# topic, its plain rows with the plain texts. A set written blind joins evaluate.ATTACK_SETS when it is written and
# this tuple only after its first reading (tests/models/test_categories.py holds both). Until session 19 the
# development sets were read only; rounds 1-11 of exemplars were written by helpers from descriptions of their
# misses. Measured in session 19 (`warden models train --attack --hold-out ...`, then `python -m bench.eval_attacks`
# on the sets held out and bench/data/long_plain.jsonl): with eval31 and eval32 held out (no round was written from
# either), round 11's exemplars alone (shipped then) read injection / self-harm recall 86.2% / 89.4%, hard negatives
# 2.5% / 2.5%, plain 0.5% of 400, long plain 3.5% (2 of its 7 flags by these heads); with eval17-30's rows added (and
# dev23's, bench/data's: a scratch run) 95.0% / 95.0%, 1.7% / 2.5%, 0.8%, long plain 6.5% (8 of 13 by these heads:
# long venting texts and pasted pages); the same at a 1% target 92.5% / 95.6%, 1.7% / 1.7%, 0.2%, long plain 5.5%.
# With eval27 and eval28 held out (rounds 9-11 were written from their misses, so an upper bound): round 11's heads
# 95.6% / 95.6%, 1.7% / 3.3%, plain 2.2%; trained on every other set (a scratch run, dev23 included) 98.1% / 97.5%,
# 2.5% / 2.5%, 1.8%. Trained on them, the heads flagged long venting texts (long plain: 8 of 200 by these heads
# against 2), so hard_times.yaml joined the plain texts (plain_texts()): eval31 + eval32 held out, 93.8% / 95.6%,
# 1.7% / 1.7%, 0.8%, long plain 4.5% (4 by these heads, 5 by the topic heads). Shipped so (eval17-32), blind eval33
# read 93.8% / 91.2%, 10.0% / 0.0%, plain 0.5%; round 11's heads 83.8% / 86.2%, 10.0% / 0.0%, 0.5%.
# Session 21, measured and not shipped: eval35-37 added (`warden models train --attack`, the read sets all trained on,
# so only corpora no head saw could judge it: bench/data/long_plain.jsonl, decode_eval.jsonl's ordinary prompts and
# every tenth pii_corpus.jsonl text, 1,074 in all, through `python -m bench.eval_attacks --plain`). Alone it flagged
# 2.0% of them against 1.5% for the shipped heads: Chinese complaint letters and a lease (their form headers with names,
# phones and masked ID numbers, the look of eval35-37's buried injections) and a CS homework question quoting ASCII
# codes. With models/data/forms.yaml (140 pasted forms and letters with personal data, written for it) among the plain
# negatives, 0.9% (long plain 4.5% against 5.0%, decode_eval 0 of 261 against 2, pii 1 of 613 against 4), but the
# landlord e-mail of tests/models/test_attack_heads.py was flagged self_harm (its packed window 0.33 -> 0.42, over
# SUPPORT), the invoice test's injection fell to 0.503 (the invoices of forms.yaml teach the opposite of the cue), and
# the cascade cost 10.42 ms per prompt against 9.53 (the attack gate sends 21.0% of eval16's mix on against 19.5%). Kept
# for the next retraining: forms.yaml, and blind eval38's first reading with that candidate as a comparison row.
# Session 22, measured and not shipped: eval35-38 added and forms.yaml among the plain negatives. Unseen plain texts
# (long plain, decode_eval's 333 ordinary prompts, every tenth pii_corpus text: 1,146) 0.9% against 1.2% for the
# shipped heads, but blind eval39, read once with both: injection 81.2% against 83.8%, self-harm 95.0% against 97.5%,
# injection look-alikes 8.3% against 6.7%; the landlord e-mail's packed window 0.72 (0.43 for the shipped heads on an
# AVX-512 VNNI host); the cascade 5.29 ms per prompt against 4.57 (the attack gate sends 22.5% of eval16's mix on
# against 19.5%). On eval38 the session 21 candidate had read 85.0% / 88.8% against 86.2% / 83.8%.
# Session 24, measured and not shipped: eval35-42 added (`warden models train --attack` from a scratch worktree whose
# tuple named them). Held out first, eval41 + eval42 (trained on eval17-40; neither head set trained on them, both
# read through the same product): injection / self-harm 90.6% / 97.5%, hard negatives 21.7% / 5.0%, plain 2.5% of
# 400, against the shipped heads' 91.2% / 96.2%, 20.0% / 5.0%, 2.2%. Trained on eval17-42: unseen plain texts (long
# plain, decode_eval's 693 ordinary prompts, every tenth pii_corpus text: 1,506) 0.9% against 1.0%; blind eval43, read
# once, 77.5% / 96.2%, 13.3% / 3.3%, 0.5% against 82.5% / 96.2%, 10.0% / 3.3%, 0.5%; and its gate (fitted to pass
# as many of the harder positives) sends 33.5% of eval16's mix on against 19.5%, the cascade 8.44 ms per prompt
# against 4.31 (`python bench/semantic.py --attack-heads`). Three retrainings on more development sets (sessions 21,
# 22, 24) have not read better on the next blind set: the look-alikes these heads flag (texts that teach, test or
# stage an injection) are not separated by more of the same.
# Session 30: the heads train on every set read through eval57; the gate keeps the sets it was fitted on before
# (GATE_SETS, PLAIN_SETS). The three retrainings above let the gate follow the heads onto the harder sets, and its
# bound (it passes 95-99% of the positives) then sent a third to a half of the plain mix to the encoder. Trained so
# (eval58 and eval59 not trained on, read as unseen; `python -m bench.eval_attacks`), injection / self-harm recall,
# hard negatives injection / self-harm, plain: eval58 + eval59 98.8% / 96.2%, 9.2% / 1.7%, 0.5% against the session
# 29 heads' 99.4% / 96.2%, 21.7% / 2.5%, 0.8%; blind eval60, read once with both (the reading of record is the
# shipped heads'): 100.0% / 95.0%, 13.3% / 0.0%, 0.0% against 100.0% / 93.8%, 26.7% / 0.0%, 0.0% (12 errors against
# 21, none new). Trained on eval17-57 gate and all, the gate sent 47.8% of eval16's mix on against 17.5% and the
# cascade cost 19.45 ms per prompt against 4.59 (`python bench/semantic.py --attack-heads`); with the gate kept,
# 5.13 against 5.02 ms, the gate's 17.5%.
# Session 31: eval58-60 added, the gate kept (equal to session 30's). Blind eval61, read once with both under a rule
# written down first (fewer errors, unseen plain no worse than +2, cost within 15%): 96.2% / 97.5%, 10.0% / 0.0%,
# 0.0% against session 30's 95.0% / 95.0%, 13.3% / 0.0%, 0.0% (11 errors against 16: six fixed, one new, a
# percent-encoded URL); unseen plain texts (long plain, decode_eval's 1,056 ordinary prompts, every tenth pii_corpus
# text: 1,869) the same 9 (0.5%); `python bench/semantic.py --attack-heads` 3.25-3.40 against 3.42-5.14 ms (a
# noisy host, back to back), the gate's 17.5% either way.
# Session 34, measured and not shipped: eval61-69 added (the gate kept). Held out eval68 + eval69 (trained on
# eval17-67), the same verdict as the shipped heads on every row but two eval68 look-alikes it cleared (a lesson for
# the elderly quoting an attack, a ROT13 geocache hint): 98.8% / 98.1%, 5.0% / 0.8%, 0.5% against 98.8% / 98.1%, 6.7%
# / 0.8%, 0.5%. Trained on eval17-69 (zh 0.447 / en 0.576), blind eval70 read once with both under the rule above:
# 97.5% / 98.8%, 3.3% / 1.7%, 0.0% against 100.0% / 98.8%, 3.3% / 1.7%, 0.0% (6 errors against 4: two en persona and
# authority injections missed): not shipped.
# Session 35, the same rule written down again before blind eval73 was read: eval61-72 added (the gate kept; zh 0.428 /
# en 0.555). Blind eval73 read once with both at the same code (a6b9cb3): 96.2% / 100.0%, 11.7% / 0.0%, 0.0% against
# 95.0% / 100.0%, 11.7% / 0.0%, 0.0% (10 errors against 11: one persona more caught, the same seven look-alikes
# flagged); unseen plain texts 13 of 1,869 against 9 (long plain 10 of 200 against 5): over the rule's +2, not shipped.
# Session 38, the same rule written down before blind eval80 and eval81 were read: eval61-79 added and
# models/data/life_writing.yaml (long first-person writing about ordinary endings) among the plain negatives (the gate
# kept; zh 0.418 / en 0.582). Read once with both at the same code (4b43081): 90.0% / 96.2%, 0.0% / 1.7%, 0.0% and
# 93.8% / 98.8%, 1.7% / 6.7%, 0.0% against 91.2% / 96.2%, 0.0% / 1.7%, 0.0% and 93.8% / 100.0%, 0.0% / 8.3%, 0.0%
# (23 errors against 21: an administrator's console claim, a sentence-continuation exercise, a long first-person
# self-harm essay from a dairy farm and a zh finance rule for AI-drafted payments new; the spaced-out letters and a
# clothes donation fixed): not shipped.
TRAINED_SETS = tuple(f"semantic_eval{n}.jsonl" for n in range(17, 61))
GATE_SETS = tuple(f"semantic_eval{n}.jsonl" for n in range(17, 35))

# Read development sets whose short plain chat the attack heads train on as plain negatives, the rest of each set
# waiting for a retraining of its own (TRAINED_SETS' comment: three such retrainings read worse on the next blind
# set). Why (session 27): the heads' `self_harm` fired on short practical questions ("How do I stop my glasses from
# slipping down my nose?", a stripped screw, a wool coat and moths): 24 of the 3,200 plain texts of eval35-49 and
# long plain, lifted by the linear heads, the memory or the gram tables, which benign.yaml's 2,300 everyday requests
# did not hold down. Measured with eval46-49 held out (`warden models train --attack` from a scratch script adding
# eval35-45's plain rows; then `python -m bench.eval_attacks` on eval46-49 and bench/data/long_plain.jsonl, 1,000
# plain texts), injection / self-harm recall, hard negatives injection / self-harm, plain flagged: the shipped heads
# 85.9% / 94.4%, 5.8% / 2.1%, 2.2%; with every plain row (2,200) 83.8% / 95.3%, 7.1% / 2.1%, 1.3%; with the rows of
# at most 400 characters (1,755) 85.0% / 95.3%, 7.1% / 2.5%, 1.5%. The long rows are pasted documents with a
# request, the carriers of indirect injection: trained on as plain, they cost four injection positives more (long
# pasted documents, each with its buried instruction) for two plain texts. Thresholds zh / en 0.574 / 0.578 ->
# 0.520 / 0.562. The shipped file trains on eval35-49's 2,317 such rows (`warden models train --attack`; zh 0.528 / en
# 0.573): on eval35-49, whose positives and look-alikes it has not seen, injection / self-harm 92.5% / 94.2% -> 91.8% /
# 93.7%, hard negatives 7.4% / 2.8% -> 7.9% / 2.4%; plain corpora no head has seen (long plain, decode_eval's 1,020
# ordinary prompts, every tenth pii_corpus text: 1,833) 0.7% -> 0.6%; `python bench/semantic.py` 3.30 -> 2.93 ms per
# prompt with the attack heads, back to back (the attack gate sends 17.5% of eval16's mix on against 19.5%). Blind
# eval50, read once with both under a rule written down first (ship unless its errors exceed the old heads' by more
# than two): 76.2% / 96.2%, 6.7% / 3.3%, plain 0.0% against 77.5% / 97.5%, 5.0% / 3.3%, 1.0% (28 errors against 27).
PLAIN_SETS = tuple(f"semantic_eval{n}.jsonl" for n in range(35, 50))
PLAIN_MAX_CHARS = 400


def development_exemplars(hold_out: Collection[str] = ()) -> list[Exemplar]:
    """TRAINED_SETS' rows as exemplars, in order, but the sets named in `hold_out` (file names or stems, such as
    `semantic_eval31`): those are left out to be read as unseen. An unknown name is a ValueError."""
    left_out = _left_out(hold_out)
    return list(_labelled(n for n in TRAINED_SETS if n not in left_out))


def gate_exemplars(hold_out: Collection[str] = ()) -> list[Exemplar]:
    """What the gate is fitted on (user_heads.train_user `gate_more`): GATE_SETS' rows, then PLAIN_SETS' plain rows of
    at most PLAIN_MAX_CHARS characters, in order, but the sets named in `hold_out`."""
    left_out = _left_out(hold_out)
    return [*_labelled(n for n in GATE_SETS if n not in left_out),
            *(e for e in _labelled(n for n in PLAIN_SETS if n not in left_out)
              if e.topic is None and len(e.text) <= PLAIN_MAX_CHARS)]


def _left_out(hold_out: Collection[str]) -> set[str]:
    sets = (*TRAINED_SETS, *GATE_SETS, *PLAIN_SETS)
    known = {n: n for n in sets} | {n.removesuffix(".jsonl"): n for n in sets}
    unknown = sorted(set(hold_out) - known.keys())
    if unknown:
        raise ValueError(f"not a trained development set: {', '.join(unknown)} (models.attack_heads.TRAINED_SETS, "
                         "GATE_SETS, PLAIN_SETS)")
    return {known[n] for n in hold_out}


def _labelled(names: Iterable[str]) -> Iterator[Exemplar]:
    for name in names:
        for it in evaluate.load_items(evaluate.data_path(name)):
            yield Exemplar(it.text, it.lang, it.label, it.label or it.topic)


def development_plain() -> list[Exemplar]:
    """The plain chat of GATE_SETS, eval17-34 (rows with neither label nor topic; the sets the attack heads trained on
    when the topic heads were last trained), in order, but the texts of the topic heads'
    held-out sets (two short questions of eval12 and eval13 recur): the builtin topic heads train on it beside
    benign.yaml (models/cli.py). These sets' writers wrote their plain rows blind, as people ask, and the topic heads
    trained on benign.yaml alone flagged such texts (session 26): of eval35-47's plain chat with long plain (2,800 texts
    no topic head trained on), a topic head flagged 32, and 7 once these rows were trained on as well."""
    held_out = {it.text for name in evaluate.HELD_OUT_SETS for it in evaluate.load_items(evaluate.data_path(name))}
    return [e for e in _labelled(GATE_SETS) if e.topic is None and e.text not in held_out]


def categories_dir() -> Path:
    return data_dir() / "attack_categories"


def documents_path() -> Path:
    return data_dir() / "documents.yaml"


def hard_times_path() -> Path:
    return data_dir() / "hard_times.yaml"


def life_writing_path() -> Path:
    """Long first-person writing about ordinary endings and milestones (session 38): the distress model's negatives
    (models/distress.py)."""
    return data_dir() / "life_writing.yaml"


def plain_texts() -> dict[str, tuple[str, ...]]:
    """The attack heads' plain negatives: benign.yaml's everyday requests, documents.yaml's long pasted documents
    (essays, stories, e-mails, code, contracts: session 15, after blind eval23 showed long plain texts flagged on one
    ordinary sentence) and hard_times.yaml's long messages about a hard stretch without intent, with pasted work
    documents (session 19: trained on the development sets, the heads flagged more long venting texts). User
    categories train on benign.yaml alone, the topic heads on benign.yaml and `development_plain()`."""
    parts = [load_benign(), load_benign(documents_path()), load_benign(hard_times_path())]
    return {lang: tuple(t for part in parts for t in part[lang]) for lang in LANGS}


def heads_path() -> Path:
    return data_dir() / "attack_heads.json"


class AttackSemanticDetector(user_heads.UserSemanticDetector):
    """The attack heads as a detector. Their categories' policies are the builtin rule packs' (words.yaml's
    `prompt_injection` and `self_harm` rules, with the self-harm reply); the file's levels apply only where no
    rule gives one."""

    @property
    def name(self) -> str:
        return f"semantic-attack-{self.user.sha256[:16]}"


def load_detector(builtin: semantic.SemanticDetector, path: Path | None = None, *,
                  addressed_level: float | None = ADDRESSED_LEVEL,
                  self_harm_words_level: float | None = SELF_HARM_WORDS_LEVEL) -> AttackSemanticDetector:
    """The shipped attack heads (or those at `path`) as a detector sharing the builtin detector's runtime;
    `addressed_level` None: no lower level where a text addresses an automated reader; `self_harm_words_level` None:
    none where it names self-harm."""
    where = heads_path() if path is None else path
    rt: Runtime = builtin._rt
    user = user_heads.load(where, rt, reserved=set(builtin.categories))
    cues = []
    if addressed_level is not None:
        cues.append(semantic.Cue(addressed.marks, addressed_level, frozenset({"prompt_injection"})))
    if self_harm_words_level is not None:
        cues.append(semantic.Cue(self_harm_words.spans, self_harm_words_level, frozenset({"self_harm"}), reach=0))
    return AttackSemanticDetector(rt, user, where, needs_context=NEEDS_CONTEXT, cues=cues)


__all__ = ["ADDRESSED_LEVEL", "FOLD", "GATE_SETS", "HARD_NEGATIVE_SENTENCES", "LEXICAL", "MEMORY_BETA", "MEMORY_RANK",
           "NEEDS_CONTEXT", "PLAIN_MAX_CHARS", "PLAIN_SETS", "RANK", "SELF_HARM_WORDS_LEVEL", "SHORT_GATE_RECALL",
           "TARGET_FPR", "TRAINED_SETS",
           "AttackSemanticDetector", "categories_dir", "development_exemplars", "development_plain", "documents_path",
           "gate_exemplars", "hard_times_path", "heads_path", "load_detector", "plain_texts"]
