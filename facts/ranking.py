"""The ranking of fact search: rarer words weigh more, whole words a little more, newest
first on ties.

Within one memory (an agent's real memory, or an eval's) of ``N`` facts, a query word
``w`` matches a fact when one of the fact's lexemes starts with it; ``df(w)`` is the
number of facts holding each lexeme that starts with ``w``, summed over those lexemes and
capped at ``N`` (the term statistics, ``facts.terms``). Then

    idf(w)   = ln(1 + (N - df(w) + 0.5) / (df(w) + 0.5))          (BM25's idf, always > 0)
    score(f) = the sum of idf(w) over the query words f matches, in query order,
               + WHOLE × the number of query words f holds whole

and results are ordered by score, then ``updated_at``, then id, all descending. A fact
holds ``w`` whole when one of its lexemes is ``w`` itself, not only a longer word starting
with it: ``direct`` ranks a fact saying ``direct`` before one saying only ``directors``.
WHOLE is small (0.001) beside a word's idf (0.69 for a word in half the facts, 3.0 in one
in twenty), so matching more words counts first but for words in nearly every fact, and
which words matched counts first but for idf sums within 0.001 a word of each other
(common words of close frequencies). Among facts matching the same words it puts those
holding them whole before those that only start with them: what a reader expects of a
word typed in full, and what lifted the known-item test's success@1 (issue 18; docs/performance.md
has the figures).

How often a word repeats in a fact and how long the fact is do not count: facts are short,
and a score that depends only on *which* words matched, and how, is what lets the search
stop early.

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

# What a query word held whole adds to a fact's score (see the module's docstring).
WHOLE = 0.001


@dataclass(frozen=True)
class Word:
    text: str  # folded, letters and digits only
    df: int
    idf: float
    # Whether facts the searcher may see hold the word itself, and a longer word starting
    # with it (each True when not known: a plan then skips nothing).
    held_whole: bool = True
    held_longer: bool = True

    @property
    def most(self) -> float:
        """The most this word adds to a fact's score."""
        return self.idf + (WHOLE if self.held_whole else 0.0)


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


def weigh(
    total: int,
    texts: list[str],
    frequencies: list[int],
    whole: list[bool] | None = None,
    longer: list[bool] | None = None,
) -> list[Word]:
    """The query's words with their idf; ``whole`` and ``longer``: whether the searcher's
    facts hold each word itself and a longer word starting with it (None: not known)."""
    whole = whole or [True] * len(texts)
    longer = longer or [True] * len(texts)
    return [
        Word(t, df, idf(total, df), w, lo)
        for t, df, w, lo in zip(texts, frequencies, whole, longer, strict=True)
    ]


def score(words: list[Word], matched: list[bool], whole: int = 0) -> float:
    """The idf sum in query order plus ``whole`` × WHOLE, exactly as the SQL and the index
    add it up (so ties stay ties)."""
    base = sum((w.idf if m else 0.0 for w, m in zip(words, matched, strict=True)), 0.0)
    return base + whole * WHOLE


def best(hits: list[Hit], k: int) -> list[Hit]:
    return sorted(hits, key=lambda hit: hit.order, reverse=True)[:k]
