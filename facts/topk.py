"""The exact top k of ``facts.ranking`` without scoring every fact that matches.

Query words are split by their document frequency in the memory:

* **rare** words (few facts each) produce candidates through ``fact_memory_terms_gin``,
  which holds only this memory's postings; the candidates are scored in full;
* **common** words never produce candidates in bulk. A fact matching none of the rare
  words scores the sum of the common words it matches, so it is one of the subsets of the
  common words. The subsets are visited best score first, and each asks for its ``k``
  newest facts matching exactly that subset; the walk stops as soon as the next subset
  scores below the k-th result (MaxScore's bound, per subset). Each subset query reads
  newest first along ``fact_agent_newest`` until it has ``k`` rows, or, when the subset
  is too rare for that, lets the GIN index intersect its rarest words: whichever the
  statistics say costs less.

More common words than ``MAX_COMMON`` (a query of many short prefixes) fall back to
scoring every match, which is exact and slow.
"""

from __future__ import annotations

import math
from itertools import combinations

from django.db import connection

from facts.ranking import Hit, Word, best, score
from facts.terms import Memory, keyed, quoted

MAX_COMMON = 5
# Rough costs in microseconds, measured on PostgreSQL 15 (bench/bench_search.py): a row
# read newest first and tested, a posting read from GIN, a row fetched from a GIN bitmap.
SCAN_ROW, POSTING, FETCH_ROW = 1.6, 0.4, 4.0

_NEWEST = "ORDER BY updated_at DESC, id DESC LIMIT %s"
_KEYED = (
    "(SELECT * FROM facts_fact WHERE facts_memory_terms(agent_id, scope, search_vector) "
    "@@ %s::tsquery OFFSET 0) AS facts_fact"  # OFFSET 0: the GIN alone drives this scan
)


class TopK:
    def __init__(self, memory: Memory, where: tuple[str, list], total: int, k: int) -> None:
        self.memory, self.total, self.k = memory, total, k
        self.where_sql, self.where_params = where

    def rare_threshold(self) -> float:
        """Where fetching a word's df facts costs what finding its k newest would: a
        newest-first scan reads about k * total / df rows for them."""
        return math.sqrt(self.k * self.total * SCAN_ROW / (POSTING + FETCH_ROW))

    def run(self, words: list[Word]) -> list[Hit]:
        present = [w for w in words if w.df > 0]
        if not present:
            return []
        rare = [w for w in present if w.df <= self.rare_threshold()]
        common = [w for w in present if w.df > self.rare_threshold()]
        if len(common) > MAX_COMMON:
            return self._score_every_match(words, present)
        hits = self._rare_candidates(words, rare) if rare else []
        for subset in self._subsets(words, common):
            subset_score = score(words, [w in subset for w in words])
            if len(hits) >= self.k and subset_score < hits[self.k - 1].score:
                break
            others = [w for w in present if w not in subset]
            rows = self._exactly(subset, others)
            hits = best(hits + [Hit(i, at, subset_score) for i, at in rows], self.k)
        return hits

    def _subsets(self, words: list[Word], common: list[Word]) -> list[tuple[Word, ...]]:
        subsets = [s for size in range(1, len(common) + 1) for s in combinations(common, size)]
        return sorted(subsets, key=lambda s: score(words, [w in s for w in words]), reverse=True)

    def _score_sql(self, words: list[Word]) -> tuple[str, list]:
        case = "CASE WHEN search_vector @@ %s::tsquery THEN %s::float8 ELSE 0::float8 END"
        cases = " + ".join(case for _ in words)
        params = [value for w in words for value in (quoted(w.text), w.idf)]
        return f"({cases})", params

    def _rare_candidates(self, words: list[Word], rare: list[Word]) -> list[Hit]:
        score_sql, score_params = self._score_sql(words)
        driver = " | ".join(keyed(self.memory, w.text) for w in rare)
        sql = (
            f"SELECT id, updated_at, {score_sql} AS score FROM {_KEYED} "  # noqa: S608
            f"WHERE {self.where_sql} ORDER BY score DESC, updated_at DESC, id DESC LIMIT %s"
        )
        rows = self._fetch(sql, [*score_params, driver, *self.where_params, self.k])
        return [Hit(*row) for row in rows]

    def _exactly(self, subset: tuple[Word, ...], others: list[Word]) -> list[tuple]:
        """The k newest facts matching every word of ``subset`` and no word of ``others``."""
        operands = [quoted(w.text) for w in subset] + [f"!{quoted(w.text)}" for w in others]
        exact = " & ".join(operands)
        driver = self._gin_driver(subset, others)
        if driver is None:
            sql = (
                f"SELECT id, updated_at FROM facts_fact WHERE {self.where_sql} "  # noqa: S608
                f"AND ts_match_vq(search_vector, %s::tsquery) {_NEWEST}"
            )
            return self._fetch(sql, [*self.where_params, exact, self.k])
        sql = (
            f"SELECT id, updated_at FROM {_KEYED} WHERE {self.where_sql} "  # noqa: S608
            f"AND search_vector @@ %s::tsquery {_NEWEST}"
        )
        keys = " & ".join(keyed(self.memory, w.text) for w in driver)
        return self._fetch(sql, [keys, *self.where_params, exact, self.k])

    def _gin_driver(self, subset: tuple[Word, ...], others: list[Word]) -> list[Word] | None:
        """The rarest words of ``subset`` to intersect in GIN, or None to scan newest first."""
        share = math.prod(w.df / self.total for w in subset)
        share *= math.prod(1 - w.df / self.total for w in others)
        cost, driver = min(self.total, self.k / max(share, 1e-12)) * SCAN_ROW, None
        rarest = sorted(subset, key=lambda w: w.df)
        for size in range(1, len(rarest) + 1):
            words = rarest[:size]
            fetched = self.total * math.prod(w.df / self.total for w in words)
            gin_cost = sum(w.df for w in words) * POSTING + fetched * FETCH_ROW
            if gin_cost < cost:
                cost, driver = gin_cost, words
        return driver

    def _score_every_match(self, words: list[Word], present: list[Word]) -> list[Hit]:
        score_sql, score_params = self._score_sql(words)
        any_word = " | ".join(quoted(w.text) for w in present)
        sql = (
            f"SELECT id, updated_at, {score_sql} AS score FROM facts_fact "  # noqa: S608
            f"WHERE {self.where_sql} AND search_vector @@ %s::tsquery "
            "ORDER BY score DESC, updated_at DESC, id DESC LIMIT %s"
        )
        rows = self._fetch(sql, [*score_params, *self.where_params, any_word, self.k])
        return [Hit(*row) for row in rows]

    @staticmethod
    def _fetch(sql: str, params: list) -> list[tuple]:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()
