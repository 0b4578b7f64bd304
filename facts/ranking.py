"""The ranking of fact search: rarer words weigh more, newest first on ties.

Within one memory (an agent's real memory, or an eval's) of ``N`` facts, a query word
``w`` matches a fact when one of the fact's lexemes starts with it; ``df(w)`` is the
number of facts holding each lexeme that starts with ``w``, summed over those lexemes and
capped at ``N`` (the term statistics, ``facts.terms``). Then

    idf(w)   = ln(1 + (N - df(w) + 0.5) / (df(w) + 0.5))          (BM25's idf, always > 0)
    score(f) = the sum of idf(w) over the query words f matches, in query order

and results are ordered by score, then ``updated_at``, then id, all descending. How often
a word repeats in a fact and how long the fact is do not count: facts are short, and a
score that depends only on *which* words matched is what lets the search stop early.

Words are compared folded (``facts.search.fold``): case and accents, so ``Ayşe``, ``AYŞE``
and ``ayse`` are one word, in the facts and in the query. An exact-diacritic match ranks
exactly as a folded one: they are the same lexeme with one ``df``, and spellings tie
newest first. A query typed on an English keyboard must not rank a fact lower for being
spelled correctly, nor may one word's statistics be split across its spellings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Word:
    text: str  # folded, letters and digits only
    df: int
    idf: float


@dataclass(frozen=True)
class Hit:
    id: int
    updated_at: datetime
    score: float

    @property
    def order(self) -> tuple:
        return (self.score, self.updated_at, self.id)


def idf(total: int, df: int) -> float:
    return math.log1p((total - df + 0.5) / (df + 0.5))


def weigh(total: int, texts: list[str], frequencies: list[int]) -> list[Word]:
    return [Word(t, df, idf(total, df)) for t, df in zip(texts, frequencies, strict=True)]


def score(words: list[Word], matched: list[bool]) -> float:
    """The sum in query order, exactly as the SQL adds it up (so ties stay ties)."""
    return sum((w.idf if m else 0.0 for w, m in zip(words, matched, strict=True)), 0.0)


def best(hits: list[Hit], k: int) -> list[Hit]:
    return sorted(hits, key=lambda hit: hit.order, reverse=True)[:k]
