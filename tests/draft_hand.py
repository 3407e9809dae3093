"""Where each claim of the hand transcriptions stands in its article, written by hand.

``derivations/i_love_ai.toml`` and ``derivations/birds_build_nests.toml`` were
transcribed from the two source articles without the draft. Their claims carry
no article line, so this table gives, for each claim label, the line of the
article where its numbers are printed (read off the article by a person). A
claim of the transcription that the article does not print as such (a sum the
transcriber wrote out, a prose statement turned into arithmetic) has ``None``.

The draft is compared with a transcription by these lines: a claim is covered
when the draft's report has, at that line, checks of the same printed strings.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

#: i_love_ai.toml: claim label → article line (000_…txt).
SEED_LINES: dict[str, int | None] = {
    "d_head = d_model / n_heads": 27,
    "token ids": 51,
    "X_emb": 65,
    "pos_0": 77,
    "pos_1": 77,
    "pos_2": 77,
    "X sum I: embedding row": 91,
    "X sum I: position row": 91,
    "X sum I: result": 91,
    "X sum love: embedding row": 92,
    "X sum love: position row": 92,
    "X sum love: result": 92,
    "X sum AI: embedding row": 93,
    "X sum AI: position row": 93,
    "X sum AI: result": 93,
    "X": 95,
    "Query of I: input row": 125,
    "Query of I": 125,
    "Q_1": 127,
    "K_1": 127,
    "V_1": 127,
    "love.love: query of love": 135,
    "love.love: key of love": 135,
    "love.love: first product": 135,
    "love.love: second product": 135,
    "love.love: sum of products": 135,
    "love.love": 135,
    "Q_1 K_1^T": 137,
    "d_k": 141,
    "sqrt(2)": 141,
    "S_1": 143,
    "S_1 + M": 157,
    "A_1": 167,
    "H_1 AI row: weights": 175,
    "H_1 AI row: value of I": 175,
    "H_1 AI row: value of love": 175,
    "H_1 AI row: value of AI": 175,
    "H_1 AI row, first entry, as written": 175,
    "H_1 AI row, second entry, as written": 175,
    "H_1 AI row": 175,
    "H_1": 177,
    "A_2": 189,
    "H_2": 189,
    "head 2: love attends to itself": 191,
    "Q_3": 199,
    "K_3": 199,
    "V_3": 199,
    "head 3: largest raw score": 201,
    "A_3": 203,
    "H_3": 203,
    "H (heads concatenated)": 211,
    "O = H W_O = H": 211,
    "R_1 I: X row": 229,
    "R_1 I: O row": 229,
    "R_1 I": 229,
    "R_1 love: X row": 230,
    "R_1 love: O row": 230,
    "R_1 love": 230,
    "R_1 AI: X row": 231,
    "R_1 AI: O row": 231,
    "R_1 AI": 231,
    "R_1 I, as written": 229,
    "R_1 love, as written": 230,
    "R_1 AI, as written": 231,
    "LN1 I: input row": 241,
    "LN1 I: mean as a fraction": 241,
    "LN1 I: mean, rounded": 241,
    "LN1 I: centered": 241,
    "LN1 I: variance": 241,
    "LN1 I: standard deviation": 241,
    "LN1 I: normalized": 241,
    "LN1 I: mean, as written": 241,
    "LN1 I: sigma from the displayed variance": 241,
    "LN1 I: normalized, as written": 241,
    "Y": 243,
    "ReLU I: input": 257,
    "ReLU I: output": 257,
    "ReLU love: input": 258,
    "ReLU love: output": 258,
    "ReLU AI: input": 259,
    "ReLU AI: output": 259,
    "F": 261,
    "R_2 I": 269,
    "R_2 love": 270,
    "R_2 AI": 271,
    "Y_final": 275,
    "Y_final (block output)": 275,
    "h_AI": 287,
    "logit I: selected feature": 301,
    "logit I": 301,
    "logit love: selected feature": 302,
    "logit love": 302,
    "logit AI: selected feature": 303,
    "logit AI": 303,
    "logit and, as written": 304,
    "logit and": 304,
    "logit data, as written": 305,
    "logit data": 305,
    "logit math, as written": 306,
    "logit math": 306,
    "logit too, as written": 307,
    "logit too": 307,
    "z": 311,
    "largest logit": 313,
    "largest logit's word": 313,
    "most probable word": 323,
    "runner-up word": 323,
    "predicted next word": 325,
}

#: birds_build_nests.toml: claim label → article line (003_…txt).
BIRDS_LINES: dict[str, int | None] = {
    "embedding Birds": 92,
    "embedding build": 93,
    "embedding nests": 94,
    "X": 96,
    "Q": 112,
    "K": 112,
    "V": 112,
    "score Birds->nests": 116,
    "score Birds->Birds": 116,
    "score Birds->build": 116,
    "sqrt(d_k)": 118,
    "scaled Birds row": 126,
    "exp Birds->Birds": 128,
    "exp Birds->build": 129,
    "exp Birds->nests": 130,
    "softmax denominator, Birds row": 132,
    "weight Birds->Birds": 134,
    "weight Birds->build": 135,
    "weight Birds->nests": 136,
    "pattern Birds row": 134,
    "pattern build row (from its output line)": 148,
    "pattern nests row (from its output line)": 149,
    "row sum Birds": 140,
    "row sum build": 140,
    "row sum nests": 140,
    "output Birds (displayed sum)": 147,
    "output build (displayed sum)": 148,
    "output nests (displayed sum)": 149,
    "output Birds": 147,
    "output build": 148,
    "output nests": 149,
    "BERT head width": 168,
    "BERT heads side by side": None,  # written out by the transcriber from prose
    "ReLU(3)": 214,
    "ReLU(-2)": 215,
    "mean (displayed)": 241,
    "mean": 241,
    "deviations (displayed)": 242,
    "deviations": 242,
    "squared deviations (displayed)": None,  # the squares appear only inside line 243's sum
    "variance (displayed, from the deviations)": 243,
    "variance (displayed, from the squares)": 243,
    "variance": 243,
    "standard deviation (displayed)": 244,
    "standard deviation": 244,
    "normalized row (displayed)": 246,
    "normalized row": 246,
}


#: Expression claims of the transcriptions that write out a statement of the prose (the
#: article displays no such arithmetic): "Its variance is 0.472, so σ ≈ 0.687", "each row
#: sums to 1.0". The draft checks those numbers, but not as displayed lines.
PROSE = {
    "LN1 I: sigma from the displayed variance",
    "LN1 I: normalized, as written",
    "H_1 AI row, first entry, as written",
    "H_1 AI row, second entry, as written",
    "row sum Birds",
    "row sum build",
    "row sum nests",
}


def printed_strings(claim: dict[str, Any]) -> list[str]:
    """A transcription claim's printed strings, in order (a word claim's word)."""
    printed = claim.get("printed", "")
    if isinstance(printed, list):
        return [str(x) for row in printed for x in (row if isinstance(row, list) else [row])]
    return str(printed).split()


def coverage(
    hand: list[dict[str, Any]], lines: dict[str, int | None], checks: list[dict[str, Any]]
) -> tuple[int, int, list[str]]:
    """Printed numbers of a transcription the draft checks at the same article line.

    Args:
        hand: The transcription's claims (TOML tables).
        lines: Its label → article line table.
        checks: The draft's JSON checks (``source_line``, ``printed``).

    Returns:
        Numbers covered, numbers in all, and the labels of claims not covered.
    """
    at: dict[int, Counter[str]] = {}
    for c in checks:
        if c.get("source_line") is not None:
            at.setdefault(c["source_line"], Counter())[c["printed"].replace("−", "-")] += 1
    covered = total = 0
    missed = []
    for claim in hand:
        strings = printed_strings(claim)
        total += len(strings)
        line = lines[claim["label"]]
        have = at.get(line, Counter()) if line is not None else Counter()
        if all(have[s] >= n for s, n in Counter(strings).items()):
            covered += len(strings)
        else:
            missed.append(claim["label"])
    return covered, total, missed
