"""The exact top k of ``facts.ranking`` without scoring every fact that matches.

Query words are split by their document frequency in the memory:

* **rare** words (few facts each) produce candidates through ``fact_memory_terms_gin``,
  which holds only this memory's postings; the candidates are scored in full;
* **common** words never produce candidates in bulk. A fact matching none of the rare
  words scores the sum of the common words it matches, plus the bonus of those it holds
  whole, so it is one of the subsets of the common words with one part of it held whole
  (a *pair*; every fact of a pair scores alike). The pairs are visited best score first,
  and each asks for its ``k`` newest facts matching exactly that pair; the walk stops as
  soon as the next pair scores below the k-th result (MaxScore's bound, per pair). Each
  pair's query reads newest first until it has ``k`` rows, or, when the pair is too rare
  for that, lets the GIN index intersect its rarest words: whichever the statistics say
  costs less. A walk that would cost more than scoring every match scores every match.

Staff, and a run that sees most of the memory, read it newest first along
``fact_agent_newest``. A run in a memory that is mostly other users' folders reads the
shared facts and its own end user's folder, each a range of ``fact_owner_newest``, never
through the others'; and when the plan would cost more than reading all of that share,
it reads it all.

More common words than ``MAX_COMMON`` (a question) fall back to scoring every match,
which is exact and slow; the in-process index (``facts.postings``) answers queries of two
common words or more where it can.
"""

from __future__ import annotations

import math
from itertools import combinations

from django.db import connection

from facts.ranking import WHOLE, Hit, Word, best, score
from facts.terms import Frequencies, Memory, exact, keyed, quoted

MAX_COMMON = 5
# A question's rarest words, in at most MAX_SETS conjunctions of at most MAX_DRIVERS words
# (or each alone), find the facts that could reach the k-th score of its rare words'
# candidates.
MAX_DRIVERS, MAX_SETS = 16, 1000
EPSILON = 1e-9  # the bound is summed in another order than the score: cover rounding
# Rough costs in microseconds, measured on PostgreSQL 15 (bench/bench_search.py): a row
# read newest first and tested, a posting read from GIN, a row fetched from a GIN bitmap.
SCAN_ROW, POSTING, FETCH_ROW = 1.6, 0.4, 4.0
QUERY = 150.0  # one more query of the walk: its round trip, parsing and planning

_NEWEST = "ORDER BY updated_at DESC, id DESC LIMIT %s"
# The same order within one owner's facts. owner_id leads so that only fact_owner_newest
# gives it: for "owner_id IS NULL" the planner would otherwise read along
# fact_agent_newest, through every user's folder.
_OWNER_NEWEST = "ORDER BY owner_id, updated_at DESC, id DESC LIMIT %s"
_KEYED = (
    "(SELECT * FROM facts_fact WHERE facts_memory_terms(agent_id, scope, search_vector) "
    "@@ %s::tsquery OFFSET 0) AS facts_fact"  # OFFSET 0: the GIN alone drives this scan
)


Where = tuple[str, list]  # an SQL condition on facts_fact and its parameters
# The facts' columns a search loads: as SQL, and their attnames (``id`` and ``updated_at``
# among them).
Columns = tuple[str, tuple[str, ...]]
KEYS: Columns = ("id, updated_at", ("id", "updated_at"))
# Common words matched, and those of them held whole: its facts all score alike.
Pair = tuple[tuple[Word, ...], tuple[Word, ...]]


class TopK:
    """``where``: the facts searched. ``parts``: the same facts split by owner (the shared
    ones, the searcher's own folder), each a range of ``fact_owner_newest``, so that newest
    first reads only what the searcher may see, however many other users' facts there are;
    None (staff, or a run that sees most of the memory) reads the memory newest first along
    ``fact_agent_newest``, skipping what ``where`` leaves out. ``columns``: what each of
    its queries loads of the facts it finds (at most k each), kept in ``rows`` by id, so
    that the answer needs no query more.
    """

    def __init__(
        self,
        memory: Memory,
        where: Where,
        parts: list[Where] | None,
        stats: Frequencies,
        k: int,
        columns: Columns = KEYS,
    ) -> None:
        self.memory, self.parts, self.k = memory, parts, k
        self.columns, names = columns
        self._id, self._at = names.index("id"), names.index("updated_at")
        self.rows: dict[int, tuple] = {}  # fact id -> its columns, of every fact found
        self.where_sql, self.where_params = where
        self.total, self.memory_total = stats.total, stats.memory_total
        self.stats = stats
        self.postings: dict[str, int] = {}  # word -> every owner's facts holding it
        self.whole: dict[str, tuple[int, int]] = {}  # word -> the same held whole (seen, every)

    def _is_rare(self, word: Word) -> bool:
        """Fetching the word's postings (every owner's: GIN holds them all) costs less than
        finding its k newest facts, for which a newest-first scan reads k * total / df."""
        fetching = self.postings[word.text] * (POSTING + FETCH_ROW)
        return fetching <= self.k * self.total / word.df * SCAN_ROW

    def _split(self, words: list[Word]) -> tuple[list[Word], list[Word], list[Word]]:
        """The words present in the memory, and those of them rare and common."""
        self.postings = {w.text: p for w, p in zip(words, self.stats.postings, strict=True)}
        held = zip(self.stats.whole_dfs, self.stats.whole_postings, strict=True)
        self.whole = {w.text: counts for w, counts in zip(words, held, strict=True)}
        present = [w for w in words if w.df > 0]
        rare = [w for w in present if self._is_rare(w)]
        return present, rare, [w for w in present if not self._is_rare(w)]

    def common(self, words: list[Word]) -> int:
        """How many of the words are common: from two on, the in-process index
        (``facts.postings``) is faster than this plan's subsets or, past MAX_COMMON, its
        scoring of every fact holding a driver word (20,000 of 100,000 for a question)."""
        return len(self._split(words)[2])

    def run(self, words: list[Word]) -> list[Hit]:
        present, rare, common = self._split(words)
        if not present:
            return []
        producing = rare if len(common) <= MAX_COMMON else present
        spent = sum(self.postings[w.text] for w in producing) * (POSTING + FETCH_ROW)
        if spent > self._read_all_cost():
            return self._read_all(words, present)
        if len(common) > MAX_COMMON:
            hits = self._descend(words, present)
            return hits if hits is not None else self._score_every_match(words, present)
        hits = self._rare_candidates(words, rare) if rare else []
        for pair in self._pairs(words, common):
            pair_score = _pair_score(words, pair)
            if len(hits) >= self.k and pair_score < hits[self.k - 1].score:
                break
            others = [w for w in present if w not in pair[0]]
            cost, driver = self._pair_plan(pair, others)
            spent += cost + QUERY
            if spent > self._read_all_cost():  # the walk would cost more than reading it all
                return self._read_all(words, present)
            if spent > self._every_match_cost(present):  # ... or than scoring every match
                return self._score_every_match(words, present)
            hits = best(hits + self._hits(self._exactly(pair, others, driver), pair_score), self.k)
        return hits

    def _read_all_cost(self) -> float:
        """What reading every fact a run may see costs (without ``parts``: never chosen)."""
        return self.total * SCAN_ROW if self.parts is not None else math.inf

    def _pairs(self, words: list[Word], common: list[Word]) -> list[Pair]:
        """Every subset of the common words with each part of it that could be held whole
        (a word no fact holds whole, or only whole, leaves out the pairs that need it)."""
        pairs = [
            (subset, whole)
            for size in range(1, len(common) + 1)
            for subset in combinations(common, size)
            for n in range(size + 1)
            for whole in combinations(subset, n)
            if all(w.held_whole for w in whole)
            and all(w.held_longer for w in subset if w not in whole)
        ]
        return sorted(pairs, key=lambda pair: _pair_score(words, pair), reverse=True)

    def _score_sql(self, words: list[Word]) -> tuple[str, list]:
        """``facts.ranking.score`` in SQL, added up in the same order."""
        case = "CASE WHEN search_vector @@ %s::tsquery THEN %s::float8 ELSE 0::float8 END"
        cases = " + ".join(case for _ in words)
        params: list = [value for w in words for value in (quoted(w.text), w.idf)]
        held = [w for w in words if w.held_whole]
        if not held:
            return f"({cases})", params
        count = " + ".join("CASE WHEN search_vector @@ %s::tsquery THEN 1 ELSE 0 END" for _ in held)
        params += [*(exact(w.text) for w in held), WHOLE]
        return f"(({cases}) + ({count})::float8 * %s::float8)", params

    def _rare_candidates(self, words: list[Word], rare: list[Word]) -> list[Hit]:
        return self._candidates(words, " | ".join(keyed(self.memory, w.text) for w in rare))

    def _descend(self, words: list[Word], present: list[Word]) -> list[Hit] | None:
        """Many common words (a question): the k-th score of the rare words' candidates is a
        threshold, and only facts holding enough of the rarest words can reach it (MaxScore).
        Exact: those facts hold every fact scoring at least the threshold, and k of them do.
        None when that costs more than scoring every match."""
        ordered = sorted(present, key=lambda w: w.idf, reverse=True)
        seeds = [w for w in ordered if self._is_rare(w)] or ordered[:1]
        hits = self._candidates(words, " | ".join(keyed(self.memory, w.text) for w in seeds))
        if len(hits) < self.k:
            return None
        total = sum(w.most for w in present)
        sets = sufficient_sets(present, hits[-1].score - EPSILON * max(total, 1.0))
        if sets is None or self._sets_cost(sets) > self._every_match_cost(present):
            return None
        driver = " | ".join(
            "(" + " & ".join(keyed(self.memory, w.text) for w in each) + ")" for each in sets
        )
        return self._candidates(words, driver)

    def _every_match_cost(self, present: list[Word]) -> float:
        missing = math.prod(1 - self.postings[w.text] / self.memory_total for w in present)
        return self.memory_total * (1 - missing) * FETCH_ROW

    def _sets_cost(self, sets: list[tuple[Word, ...]]) -> float:
        """Reading the postings of the sets' words, fetching the facts holding a whole set."""
        read = {w.text for each in sets for w in each}
        fetched = sum(
            self.memory_total * math.prod(self.postings[w.text] / self.memory_total for w in each)
            for each in sets
        )
        return sum(self.postings[t] for t in read) * POSTING + fetched * FETCH_ROW

    def _candidates(self, words: list[Word], driver: str) -> list[Hit]:
        """The top k of the facts the keyed tsquery ``driver`` finds, each scored in full."""
        score_sql, score_params = self._score_sql(words)
        sql = (
            f"SELECT {score_sql} AS score, {self.columns} FROM {_KEYED} "  # noqa: S608
            f"WHERE {self.where_sql} ORDER BY score DESC, updated_at DESC, id DESC LIMIT %s"
        )
        return self._hits(self._fetch(sql, [*score_params, driver, *self.where_params, self.k]))

    def _exactly(self, pair: Pair, others: list[Word], driver: list[Word] | None) -> list[tuple]:
        """The k newest facts matching every word of the pair's subset (those of its whole
        part whole, the others only by a longer word) and no word of ``others``, found
        through the GIN ``driver`` words, or newest first when there are none."""
        subset, whole = pair
        operands = [
            exact(w.text) if w in whole else f"{quoted(w.text)} & !{exact(w.text)}" for w in subset
        ]
        matching = " & ".join(operands + [f"!{quoted(w.text)}" for w in others])
        if driver is None:
            return self._newest(matching)
        sql = (
            f"SELECT {self.columns} FROM {_KEYED} WHERE {self.where_sql} "  # noqa: S608
            f"AND search_vector @@ %s::tsquery {_NEWEST}"
        )
        keys = " & ".join(keyed(self.memory, w.text, w in whole) for w in driver)
        return self._fetch(sql, [keys, *self.where_params, matching, self.k])

    def _newest(self, exact: str) -> list[tuple]:
        """The k newest facts matching ``exact``: each part read newest first, then merged."""
        select = (
            f"SELECT {self.columns} FROM facts_fact "  # noqa: S608
            "WHERE {} AND ts_match_vq(search_vector, %s::tsquery) {}"
        )
        if self.parts is None:
            sql = select.format(self.where_sql, _NEWEST)
            return self._fetch_unsorted(sql, [*self.where_params, exact, self.k])
        selects, params = [], []
        for part_sql, part_params in self.parts:
            selects.append(f"({select.format(part_sql, _OWNER_NEWEST)})")
            params += [*part_params, exact, self.k]
        union = " UNION ALL ".join(selects)
        sql = f"SELECT * FROM ({union}) AS parts {_NEWEST}"  # noqa: S608 - our own SQL
        return self._fetch_unsorted(sql, [*params, self.k])

    def _pair_plan(self, pair: Pair, others: list[Word]) -> tuple[float, list[Word] | None]:
        """The cheaper way to the pair's k newest facts, and its cost: (cost, GIN driver),
        or (cost, None) to scan newest first.

        The scan reads only visible facts (``parts``); GIN reads every owner's postings and
        fetches every owner's matching rows (``postings``, ``memory_total``). A word of the
        whole part drives by its own lexeme's postings, any other by its prefix's.
        """
        subset, whole = pair

        def seen(w: Word) -> int:  # the visible facts that can match w as the pair does
            held = self.whole[w.text][0]
            return held if w in whole else max(w.df - held, 1)

        def postings_of(w: Word) -> int:
            return self.whole[w.text][1] if w in whole else self.postings[w.text]

        share = math.prod(seen(w) / self.total for w in subset)
        share *= math.prod(1 - w.df / self.total for w in others)
        cost, driver = min(self.total, self.k / max(share, 1e-12)) * SCAN_ROW, None
        rarest = sorted(subset, key=postings_of)
        for size in range(1, len(rarest) + 1):
            words = rarest[:size]
            counts = [postings_of(w) for w in words]
            fetched = self.memory_total * math.prod(p / self.memory_total for p in counts)
            gin_cost = sum(counts) * POSTING + fetched * FETCH_ROW
            if gin_cost < cost:
                cost, driver = gin_cost, words
        return cost, driver

    def _read_all(self, words: list[Word], present: list[Word]) -> list[Hit]:
        """Every fact the run may see read along ``fact_owner_newest`` and scored: for a
        share of the memory small enough that reading it costs less than the plan would."""
        assert self.parts, "only a run's share, owner by owner, is read whole"
        score_sql, score_params = self._score_sql(words)
        any_word = " | ".join(quoted(w.text) for w in present)
        selects, params = [], []
        for part_sql, part_params in self.parts:
            selects.append(
                f"SELECT {score_sql} AS score, {self.columns} FROM facts_fact "  # noqa: S608
                f"WHERE {part_sql} AND ts_match_vq(search_vector, %s::tsquery)"
            )
            params += [*score_params, *part_params, any_word]
        union = " UNION ALL ".join(selects)
        sql = f"SELECT * FROM ({union}) AS parts ORDER BY score DESC, updated_at DESC, id DESC "  # noqa: S608
        return self._hits(self._fetch(sql + "LIMIT %s", [*params, self.k]))

    def _score_every_match(self, words: list[Word], present: list[Word]) -> list[Hit]:
        """Every fact holding a present word, scored: the matches alone through the GIN
        index, unless reading the memory's range costs less. Not the planner's choice: with
        statistics that predate the memory's facts, it read the whole range for a word in
        433 of 100,000 facts (27 ms instead of 2)."""
        read = sum(self.postings[w.text] for w in present) * POSTING
        if read + self._every_match_cost(present) < self.memory_total * SCAN_ROW:
            return self._candidates(words, " | ".join(keyed(self.memory, w.text) for w in present))
        score_sql, score_params = self._score_sql(words)
        any_word = " | ".join(quoted(w.text) for w in present)
        sql = (
            f"SELECT {score_sql} AS score, {self.columns} FROM facts_fact "  # noqa: S608
            f"WHERE {self.where_sql} AND search_vector @@ %s::tsquery "
            "ORDER BY score DESC, updated_at DESC, id DESC LIMIT %s"
        )
        return self._hits(self._fetch(sql, [*score_params, *self.where_params, any_word, self.k]))

    def _hits(self, rows: list[tuple], score: float | None = None) -> list[Hit]:
        """Rows of a fact's columns, each after its score or all scoring ``score``, as
        hits; their columns kept in ``rows``."""
        hits = []
        for row in rows:
            fact = row[1:] if score is None else row
            self.rows[fact[self._id]] = fact
            hits.append(Hit(fact[self._id], fact[self._at], row[0] if score is None else score))
        return hits

    @staticmethod
    def _fetch_unsorted(sql: str, params: list) -> list[tuple]:
        """A newest-first read that stops at k, whatever the statistics say.

        With statistics that predate a memory's facts (after a bulk load, or a fast-growing
        agent) the planner expects one row in the memory's range of ``fact_agent_newest``,
        so it reads the whole range and sorts it: 100,000 rows for k. Without sorting it can
        only follow the index's order, and the LIMIT stops the scan at k matches.

        One round trip, not four (BEGIN, SET LOCAL, the query, COMMIT): statements sent in
        one query string run as one transaction, which SET LOCAL lasts for. In the
        caller's transaction it would last until that ends, so it is reset after.
        """
        reset = "; RESET enable_sort" if connection.in_atomic_block else ""
        # Django's cursors bind parameters on the client, so one execute() sends them all.
        with connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL enable_sort = off; {sql}{reset}", params)
            cursor.nextset()  # the query's rows, after the SET's
            return cursor.fetchall()

    @staticmethod
    def _fetch(sql: str, params: list) -> list[tuple]:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()


def _pair_score(words: list[Word], pair: Pair) -> float:
    return score(words, [w in pair[0] for w in words], len(pair[1]))


def sufficient_sets(present: list[Word], threshold: float) -> list[tuple[Word, ...]] | None:
    """The least sets of the rarest words that a fact scoring ``threshold`` must hold one of.

    The rarest words whose complement sums below the threshold drive; a fact's score is at
    most the drivers it holds plus every other word (each at its ``most``), so it holds a
    set of drivers that reaches the threshold with all the others. With more than
    MAX_DRIVERS drivers, or more than MAX_SETS sets, each driver alone is a set (MaxScore's
    essential words: a fact holding none of them scores below the threshold). None when
    the other words alone could reach it.
    """
    ordered = sorted(present, key=lambda w: w.most, reverse=True)
    rest = sum(w.most for w in ordered)
    drivers: list[Word] = []
    for word in ordered:
        if rest < threshold:
            break
        drivers.append(word)
        rest -= word.most
    if rest >= threshold:
        return None
    if len(drivers) > MAX_DRIVERS:
        return [(word,) for word in drivers]
    sets: list[tuple[Word, ...]] = []
    # Rarest first: a set is complete when it reaches the need, and then it is least, for
    # leaving out its last (lightest) word would fall short, and so would any other.
    tails = [sum(w.most for w in drivers[i:]) for i in range(len(drivers) + 1)]
    stack: list[tuple[int, tuple[Word, ...], float]] = [(0, (), threshold - rest)]
    while stack:
        start, chosen, need = stack.pop()
        for i in range(start, len(drivers)):
            if tails[i] < need:
                break  # the remaining words cannot reach it
            if drivers[i].most >= need:
                sets.append((*chosen, drivers[i]))
            else:
                stack.append((i + 1, (*chosen, drivers[i]), need - drivers[i].most))
        if len(sets) > MAX_SETS:
            return [(word,) for word in drivers]
    return sets
