"""An in-process postings index per memory: a question scored without reading its rows.

A query's common words match much of a memory, and PostgreSQL scores each match by
reading its row (about 4 µs each: 80 ms for a 32-word question over 100,000 facts). It
answers queries of two common words or more (``FROM_COMMON``). Each
server process keeps instead, for the memories searched most recently, every fact's
lexemes as posting lists (fact slots per lexeme) with its id, ``updated_at`` and owner.
A search then adds up ``facts.ranking``'s score for every fact in numpy, orders the
candidates exactly as the SQL does (score, ``updated_at``, id, all descending), and asks
PostgreSQL only whether the best few are still there and pass the search's conditions
(folders, visibility): the first ``k`` that do are the answer.

It stays exact by the change stamps of migration 0012. Before each search it reads the
memory's counter shards (one short query, with the statistics of the query words it does
not remember): if their ``changes`` are those it was built at, it holds every committed
fact; else it reads the facts stamped since, per shard. A
fact deleted since still sits in the index; the check in PostgreSQL drops it, and the
index is built anew once such leftovers pass a quarter of the memory. It is not used in a
transaction that has written (what it read could still be rolled back), for a memory
without counter rows, or for a memory smaller than ``facts.index_min_facts``; then the
search runs in SQL (``facts.topk``), with the same results.

Memory: about 28 bytes per posting (29 MB for the 1.06 million postings of 100,000 facts
of the benchmark's text). A process's indexes together hold at most
``facts.index_max_postings`` postings (the least recently searched memories are dropped
first); a memory bigger than that alone is searched in SQL; 0 turns the index off.
"""

from __future__ import annotations

import bisect
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

import numpy as np

from facts import terms
from facts.models import Fact
from facts.ranking import WHOLE, Word
from facts.terms import TOP, Frequencies, Memory
from memoryhub import prepared
from memoryhub.conf import setting

# The memory's counter shards, the statistics' epoch (bumped by a recount) and whether
# this transaction has written anything; then, in the same snapshot, the statistics of the
# query words the index does not remember (terms.FREQUENCY_ROWS).
_STAMPS_SQL = f"""
SELECT 0, shard, id, changes, count,
       (SELECT last_value + is_called::int FROM facts_search_epoch),
       pg_current_xact_id_if_assigned() IS NOT NULL, NULL, NULL, NULL, NULL
FROM facts_factquota WHERE agent_id = %(agent)s AND scope = %(scope)s
UNION ALL
SELECT 1, r.i, NULL, NULL, NULL, NULL, NULL, s.seen, s.every, w.seen, w.every
FROM {terms.FREQUENCY_ROWS}
ORDER BY 1, 2
"""  # noqa: S608 - constant SQL
# A first row (its id NULL) with the shards' changes and the facts counted, read in the
# same statement (one snapshot) as the facts that follow it.
_HEADER = """
SELECT NULL::bigint, NULL::bigint, NULL::text, NULL::text[],
       array_agg(shard ORDER BY shard), array_agg(changes ORDER BY shard), sum(count)::bigint
FROM facts_factquota WHERE agent_id = %(agent)s AND scope = %(scope)s
UNION ALL
"""
# updated_at in microseconds: exact (extract gives numeric), as the tie-break needs.
MICROS = "(extract(epoch FROM updated_at) * 1000000)::bigint"
_COLUMNS = f"id, {MICROS}, coalesce(owner_id, ''), tsvector_to_array(search_vector)"
_ALL_SQL = f"""{_HEADER}
SELECT {_COLUMNS}, NULL, NULL, NULL FROM facts_fact
WHERE agent_id = %(agent)s AND scope = %(scope)s
"""  # noqa: S608 - constant SQL
_CHANGED_SQL = f"""{_HEADER}
SELECT f.*, NULL, NULL, NULL FROM unnest(%(shards)s::smallint[], %(since)s::bigint[])
    AS c(shard, since)
CROSS JOIN LATERAL (
    SELECT {_COLUMNS} FROM facts_fact
    WHERE agent_id = %(agent)s AND scope = %(scope)s
      AND change_shard = c.shard AND change_no > c.since
) AS f
"""  # noqa: S608 - constant SQL
# The index answers queries of two common words or more. With one, the SQL walk (facts.topk)
# reads k rows newest first and is faster (measured over HTTP in process, per-query best of
# three, 100,000 facts: 1 common word p50 3.2 ms in SQL, 4.0 through the index; with 2-5
# common words the SQL's subsets cost 4.3-8.6 ms, the index 3.5-4.3).
FROM_COMMON = 2
# The query words whose matching facts an index remembers: at most MEMO_WORDS, holding
# together at most MEMO_SHARE times the index's postings (4 bytes a slot; 8 MB for the
# benchmark's 100,000 facts). With as many as the postings, a short prefix's union (2 ms
# to gather again) kept being dropped for rarer words: p95 of a 32-word question's scoring
# 2.8 ms against 1.5 ms.
MEMO_WORDS = 4096
MEMO_SHARE = 2
STALE_SHARE = 0.25  # old versions and deleted facts indexed, as a share, before a rebuild
STALE_SLACK = 1000  # ... and as many more, so that a small memory is not rebuilt too often

# A word matching more than this share of the facts is remembered as a mask: adding its
# idf to every fact (60 µs per 100,000) is cheaper than to its matches' slots.
DENSE = 0.2
SAMPLE = 2048  # scores sampled to find the first candidates (``_likely``)
# Below the least idf (5e-6, a word in all of 100,000 facts): a threshold lowered by it
# keeps every fact of the top, and few others.
SPREAD = 1e-6
MAX_CHECKED = 4096  # candidates checked in PostgreSQL before SQL is left to answer
MASKS = 16  # the end users whose visible slots an index keeps (one byte per fact each)
# Checks candidates in PostgreSQL: fact id -> (updated_at in µs, the fact), for the ids
# still present under the search's conditions.
Check = Callable[[list[int]], dict[int, tuple[int, Fact]]]


class Postings:
    """One memory's facts as posting lists; slots are never reused (a new version of a fact
    takes a new slot and its old one dies)."""

    def __init__(self, key: tuple) -> None:
        self.key = key  # the shard-0 counter row and the statistics' epoch it was built at
        self.stamps: dict[int, int] = {}  # shard -> changes seen
        self.size = self.live = self.postings = 0
        self.ids = np.empty(0, np.int64)
        self.updated = np.empty(0, np.int64)
        self.owners = np.empty(0, np.int32)
        self.alive = np.empty(0, bool)
        self.slot_of: dict[int, int] = {}
        self.owner_codes: dict[str, int] = {}
        self.lexemes: dict[str, array] = {}
        # Each slot's lexemes, as codes: codes[starts[slot]:starts[slot + 1]] (whole words).
        self.code_of: dict[str, int] = {}
        self.codes = array("i")
        self.starts = array("q", [0])
        self.sorted: list[str] = []
        self.memo: OrderedDict[str, np.ndarray] = OrderedDict()  # word -> matching slots
        self.memo_slots = 0  # the slots the memo holds
        # (owners, word) -> (seen, every, seen whole, every whole, longer seen)
        self.counts: dict[tuple, tuple] = {}
        self.drift = 0  # facts in the table the counter does not have (a drifted counter)
        self.masks: dict[tuple[str, ...], np.ndarray] = {}  # owners -> _visible's, until add()

    def load(self, rows: list[tuple]) -> tuple[dict[int, int], int]:
        """Index the facts of ``_ALL_SQL`` or ``_CHANGED_SQL``; answers their header: the
        shards' changes and the facts counted, as of the same snapshot."""
        header = next(row for row in rows if row[0] is None)
        self.add([row[:4] for row in rows if row[0] is not None])
        return dict(zip(header[4] or [], header[5] or [], strict=True)), int(header[6] or 0)

    def add(self, rows: list[tuple]) -> None:
        """Index rows of (id, updated_at in µs, owner, lexemes), new facts or new versions."""
        self._grow(self.size + len(rows))
        self.masks.clear()
        fresh: list[str] = []
        memo_hits: dict[str, list[int]] = {}
        for fact_id, updated, owner, lexemes in rows:
            old = self.slot_of.get(fact_id)
            if old is not None and self.alive[old]:
                self.alive[old] = False
                self.live -= 1
            slot = self.size
            self.size += 1
            self.live += 1
            self.ids[slot], self.updated[slot], self.alive[slot] = fact_id, updated, True
            self.owners[slot] = self.owner_codes.setdefault(owner, len(self.owner_codes))
            self.slot_of[fact_id] = slot
            for lexeme in lexemes:
                slots = self.lexemes.get(lexeme)
                if slots is None:
                    slots = self.lexemes[lexeme] = array("i")
                    self.code_of[lexeme] = len(self.code_of)
                    fresh.append(lexeme)
                slots.append(slot)
                self.codes.append(self.code_of[lexeme])
            self.starts.append(len(self.codes))
            self.postings += len(lexemes)
            if self.memo:
                for word in _prefixes_in(lexemes, self.memo):
                    memo_hits.setdefault(word, []).append(slot)
        self._sort(fresh)
        for word, hits in memo_hits.items():
            before = self.memo[word]
            if before.dtype == np.uint8:
                new = np.zeros(self.size, np.uint8)
                new[: len(before)] = before
                new[hits] = 1
            else:
                new = np.concatenate([before, np.array(hits, np.int32)])
            self.memo[word] = new
            self.memo_slots += _cost(new) - _cost(before)

    def _grow(self, size: int) -> None:
        if size <= len(self.ids):
            return
        capacity = max(size, 2 * len(self.ids), 1024)
        for name in ("ids", "updated", "owners", "alive"):
            old = getattr(self, name)
            new = np.zeros(capacity, old.dtype)
            new[: self.size] = old[: self.size]
            setattr(self, name, new)

    def _sort(self, fresh: list[str]) -> None:
        if len(fresh) > 64:
            self.sorted = sorted(self.lexemes)
        else:
            for lexeme in fresh:
                bisect.insort(self.sorted, lexeme)

    def matching(self, word: str) -> np.ndarray:
        """The facts holding a lexeme that starts with ``word``: their slots, ascending, or
        for a word most facts hold, a mask (``uint8``, 1 at their slots; it may be shorter
        than the index: the slots past its end are not the word's). For the one search
        under way: it may be a view of the index's own list."""
        found = self.memo.get(word)
        if found is not None:
            self.memo.move_to_end(word)
            return found
        low = bisect.bisect_left(self.sorted, word)
        high = bisect.bisect_left(self.sorted, word + TOP, low)
        lists = [self.lexemes[lexeme] for lexeme in self.sorted[low:high]]
        if not lists:
            return np.empty(0, np.int32)
        if len(lists) == 1 and len(lists[0]) <= DENSE * self.size:
            # One lexeme's own list, not remembered: free to find again. A view, valid
            # until the index changes (``add`` cannot grow a list while it is held).
            return np.frombuffer(lists[0], np.int32)
        if len(lists) == 1:
            found = np.array(lists[0], np.int32)
        else:  # a short prefix holds thousands of lexemes: marked, not sorted (10× faster)
            marked = np.zeros(self.size, bool)
            # Views of the lists, dropped before any of them grows again.
            marked[np.concatenate([np.frombuffer(s, np.int32) for s in lists])] = True
            found = np.flatnonzero(marked).astype(np.int32)
        if len(found) > DENSE * self.size:
            found = _mask(found, self.size)
        self.memo[word] = found
        self.memo_slots += _cost(found)
        budget = max(MEMO_SHARE * self.postings, 100_000)
        while len(self.memo) > MEMO_WORDS or self.memo_slots > budget:
            self.memo_slots -= _cost(self.memo.popitem(last=False)[1])
        return found

    def scores(self, words: list[Word]) -> np.ndarray:
        """The idf sum of ``facts.ranking``'s score for every slot, added in query order as
        the SQL adds it, so that ties stay ties (adding 0.0 where a mask has 0 changes no
        score). The words held whole are added by ``_add_whole``."""
        scores = np.zeros(self.size)
        spare = np.empty(self.size)
        found = None
        try:
            for word in words:
                found = self.matching(word.text)
                if found.dtype == np.uint8:
                    part = spare[: len(found)]
                    np.multiply(found, word.idf, out=part)
                    scores[: len(found)] += part
                else:
                    scores[found] += word.idf
        finally:
            found = None  # a view of a list, which the next add() could not grow
        return scores

    def _add_whole(self, words: list[Word], scores: np.ndarray, slots: np.ndarray) -> None:
        """Add to the scores at ``slots`` WHOLE times the words each holds whole, as the SQL
        adds it (idf sum + count × WHOLE, so ties stay ties)."""
        # As the SQL counts them: the words some fact the searcher sees holds whole.
        held = [w.text for w in words if w.held_whole and w.text in self.code_of]
        if held and len(slots):
            scores[slots] += self._whole_counts(held, slots) * WHOLE

    def _whole_counts(self, held: list[str], slots: np.ndarray) -> np.ndarray:
        """How many of the words each of ``slots`` holds whole: read from the slots' own
        lexemes (a few hundred candidates), or from the words' posting lists where those are
        shorter (the 51,721 facts matching ``the``: 0.23 ms against 5.05)."""
        per_slot = len(self.codes) / max(self.size, 1)
        if sum(len(self.lexemes[t]) for t in held) < len(slots) * per_slot:
            return self._whole_from_postings(held)[slots]
        return self._whole_from_lexemes(held, slots)

    def _whole_from_postings(self, held: list[str]) -> np.ndarray:
        """How many of the words each slot holds whole, from the words' posting lists."""
        counts = np.zeros(self.size, np.int64)
        for text in held:  # a lexeme is once in a fact: its slots are distinct
            counts[np.frombuffer(self.lexemes[text], np.int32)] += 1
        return counts

    def _whole_from_lexemes(self, held: list[str], slots: np.ndarray) -> np.ndarray:
        """How many of the words each of ``slots`` holds whole, from the slots' lexemes."""
        is_wanted = np.zeros(len(self.code_of), bool)
        is_wanted[[self.code_of[t] for t in held]] = True
        starts = np.frombuffer(self.starts, np.int64)
        low, lengths = starts[slots], starts[slots + 1] - starts[slots]
        ends = np.cumsum(lengths)
        at = np.arange(ends[-1]) + np.repeat(low - (ends - lengths), lengths)
        hits = is_wanted[np.frombuffer(self.codes, np.int32)[at]]
        return np.bincount(np.repeat(np.arange(len(slots)), lengths)[hits], minlength=len(slots))

    def ranked(
        self, words: list[Word], owners: list[str] | None, first: int
    ) -> Iterable[tuple[np.ndarray, np.ndarray]]:
        """The candidates best first, in growing batches: by score, then the tie-breaks.

        The words held whole are counted first at the likely candidates' slots only (a few
        hundred, against every match of a question's common words): each slot left out
        scores less than they, even with every word held whole (``_likely``'s slack)."""
        scores = self.scores(words)
        visible = self._visible(owners)
        likely = _likely(scores, visible, first, WHOLE * len(words))
        matches = np.flatnonzero((scores > 0) & visible) if likely is None else likely
        self._add_whole(words, scores, matches)
        candidates = matches
        done, want = 0, first
        while done < len(candidates):
            batch = self._best(candidates, scores, min(want, len(candidates)))
            yield batch[done:], scores[batch[done:]]
            done, want = len(batch), want * 16
            if candidates is likely:  # the next batches are chosen from all of them
                candidates = np.flatnonzero((scores > 0) & visible)
                self._add_whole(words, scores, np.setdiff1d(candidates, likely, True))

    def _visible(self, owners: list[str] | None) -> np.ndarray:
        """Which slots are alive and, for ``owners``, theirs (a mask, not to be changed).
        Kept per owners until facts are added: 0.15 ms a search of 100,000 facts."""
        alive = self.alive[: self.size]
        if owners is None:
            return alive
        mask = self.masks.get(tuple(owners))
        if mask is None:
            if len(self.masks) >= MASKS:
                self.masks.clear()
            theirs = np.zeros(len(self.owner_codes), bool)  # by code (np.isin is 5× slower)
            theirs[[self.owner_codes[o] for o in owners if o in self.owner_codes]] = True
            mask = self.masks[tuple(owners)] = alive & theirs[self.owners[: self.size]]
        return mask

    def frequencies(
        self, memory: Memory, words: list[str], owners: list[str] | None
    ) -> Frequencies:
        """``terms.document_frequencies``, remembered until the memory changes."""
        who = None if owners is None else tuple(owners)
        missing = self.missing(words, owners)
        if missing or (who, "") not in self.counts:
            self.remember(missing, owners, terms.document_frequencies(memory, missing, owners))
        total, memory_total = self.counts[(who, "")]
        seen, every, whole, every_whole, longer = (
            zip(*[self.counts[(who, w)] for w in words], strict=True) if words else ((),) * 5
        )
        return Frequencies(
            total, [*seen], memory_total, [*every], [*whole], [*every_whole], [*longer]
        )

    def missing(self, words: list[str], owners: list[str] | None) -> list[str]:
        """The words whose statistics for ``owners`` are not remembered."""
        who = None if owners is None else tuple(owners)
        if len(self.counts) > MEMO_WORDS * 8:
            self.counts.clear()
        return [w for w in words if (who, w) not in self.counts]

    def remember(self, words: list[str], owners: list[str] | None, found: Frequencies) -> None:
        """Keep the words' statistics until the memory changes."""
        who = None if owners is None else tuple(owners)
        self.counts[(who, "")] = (found.total, found.memory_total)
        columns = (found.dfs, found.postings, found.whole_dfs, found.whole_postings)
        for word, *counts in zip(words, *columns, found.longer, strict=True):
            self.counts[(who, word)] = tuple(counts)

    def search(
        self, words: list[Word], owners: list[str] | None, k: int, check: Check
    ) -> list[tuple[Fact, float]] | None:
        """The exact top ``k``, each with its score: the first candidates PostgreSQL finds
        as indexed and within the search's conditions. None when SQL should answer."""
        found: list[tuple[Fact, float]] = []
        checked = 0
        for batch, scores in self.ranked(words, owners, first=k + 4):
            ids = self.ids[batch].tolist()
            present = check(ids)
            for slot, fact_id, score in zip(batch.tolist(), ids, scores.tolist(), strict=True):
                row = present.get(fact_id)
                if row is None:
                    continue  # deleted since, or outside the search's folders
                if row[0] != self.updated[slot]:
                    return None  # written after the index was read: let SQL answer
                found.append((row[1], score))
                if len(found) == k:
                    return found
            checked += len(ids)
            if checked > MAX_CHECKED:
                return None  # conditions few of the memory's facts pass: SQL does better
        return found

    def _best(self, candidates: np.ndarray, scores: np.ndarray, want: int) -> np.ndarray:
        """The ``want`` best candidates in order (a few more when the last ones tie)."""
        if want < len(candidates):
            candidates = _top(candidates, scores, want)
        if want < len(candidates):  # those tied with the want-th best: the newest of them
            mine = scores[candidates]
            least = np.sort(mine)[len(mine) - want]
            better, tied = candidates[mine > least], candidates[mine == least]
            candidates = np.concatenate([better, _top(tied, self.updated, want - len(better))])
        order = np.lexsort((self.ids[candidates], self.updated[candidates], scores[candidates]))
        return candidates[order[::-1]]


def _mask(slots: np.ndarray, size: int) -> np.ndarray:
    mask = np.zeros(size, np.uint8)
    mask[slots] = 1
    return mask


def _cost(found: np.ndarray) -> int:
    """What a memo entry holds, in slots (4 bytes each; a mask has one byte per fact)."""
    return len(found) // 4 if found.dtype == np.uint8 else len(found)


def _likely(scores: np.ndarray, visible: np.ndarray, want: int, slack: float) -> np.ndarray | None:
    """The visible slots that could still be among the best ``want`` once ``slack`` (the
    most a score can still gain) is added: those scoring at least a bound, less ``slack``,
    where the bound is a score ``want`` visible slots reach. It comes from a sample of the
    scores: first its few best (the sample holds one in ``step`` of the true top), kept when
    ``want`` slots are counted reaching them; else its ``want``-th best, which the sample's
    own slots reach. For a rare word beside a common one, that is the rare word's 150
    facts, not the common word's 50,000. Sorting those instead of every match saves a
    millisecond per 100,000 facts. None when the sample is too small to tell."""
    step = len(scores) // SAMPLE
    if step < 2:
        return None
    sample = scores[::step][visible[::step]]
    if len(sample) < want:
        return None
    for nth in sorted({min(want, want // step + 2), want}):
        least = _least_of_top(sample, nth) - SPREAD
        if nth == want or np.count_nonzero((scores >= least) & visible) >= want:
            break
    least -= slack
    if not least > 0:
        return None
    return np.flatnonzero((scores >= least) & visible)


def _top(candidates: np.ndarray, values: np.ndarray, want: int) -> np.ndarray:
    """The candidates whose value is at least the ``want``-th greatest (all the tied ones)."""
    mine = values[candidates]
    if mine.dtype.kind == "f":
        return candidates[mine >= _least_of_top(mine, want) - SPREAD]
    return candidates[mine >= np.partition(mine, len(mine) - want)[len(mine) - want]]


def _least_of_top(values: np.ndarray, want: int) -> float:
    """At most ``SPREAD`` above the ``want``-th greatest value. numpy's partition crawls over
    many equal values (9 ms for 70,000 facts scoring alike, against 0.5 ms for distinct
    ones), so it runs on the values each raised by its own amount below ``SPREAD``."""
    raised = values + np.arange(len(values)) * (SPREAD / len(values))
    return float(np.partition(raised, len(values) - want)[len(values) - want])


def _prefixes_in(lexemes: list[str], words: OrderedDict[str, np.ndarray]) -> set[str]:
    """The remembered query words that start one of ``lexemes``."""
    return {lx[:i] for lx in lexemes for i in range(1, len(lx) + 1) if lx[:i] in words}


_CACHE: OrderedDict[Memory, Postings] = OrderedDict()
_LOCK = threading.RLock()  # note() runs within opened()
# Memories last counted at facts.index_min_facts or more: only their searches read the
# stamps, so a small memory's search costs no query more than without an index.
_BIG: OrderedDict[Memory, None] = OrderedDict()
BIG_MEMORIES = 10_000
# Memories found bigger than the limit in force (the value): not built again for it.
_TOO_BIG: OrderedDict[Memory, int] = OrderedDict()


def note(memory: Memory, memory_total: int) -> None:
    """What a search in SQL counted: from this size on, the memory's next search uses an
    index."""
    if memory_total >= setting("facts.index_min_facts"):
        with _LOCK:
            _BIG[memory] = None
            _BIG.move_to_end(memory)
            if len(_BIG) > BIG_MEMORIES:
                _BIG.popitem(last=False)


@contextmanager
def opened(memory: Memory, words: list[str], owners: list[str] | None) -> Iterator[Postings | None]:
    """The memory's index, up to date, held for one search of ``words`` by a searcher who
    sees ``owners``' facts, with their statistics; None where it must not be used (see the
    module's docstring), and then the search runs in SQL."""
    limit = setting("facts.index_max_postings")
    if not limit or memory not in _BIG or _TOO_BIG.get(memory) == limit:
        yield None
        return
    with _LOCK:
        yield _current(memory, limit, words, owners)


def _current(
    memory: Memory, limit: int, words: list[str], owners: list[str] | None
) -> Postings | None:
    cached = _CACHE.get(memory)
    wanted = words if cached is None else cached.missing(words, owners)
    fetched = prepared.fetch_all(_STAMPS_SQL, terms.parameters(memory, wanted, owners))
    rows = [row[1:7] for row in fetched if row[0] == 0]  # shard, id, changes, count, epoch
    if not rows or rows[0][0] != 0 or rows[0][5]:
        return None  # no counter rows, or this transaction has written
    counted = sum(row[3] for row in rows)
    if counted < setting("facts.index_min_facts"):
        _BIG.pop(memory, None)
        _CACHE.pop(memory, None)
        return None
    key = (rows[0][1], rows[0][4])
    stamps = {row[0]: row[2] for row in rows}
    index = _CACHE.pop(memory, None)
    if index is None or index.key != key or not _caught_up(index, memory, stamps, counted):
        index = Postings(key)
        params = {"agent": memory.agent_id, "scope": memory.scope}
        index.stamps, counted = index.load(prepared.fetch_all(_ALL_SQL, params))
        index.drift = index.live - counted
        if index.postings > limit:  # searched in SQL from now on
            _TOO_BIG[memory] = limit
            if len(_TOO_BIG) > BIG_MEMORIES:
                _TOO_BIG.popitem(last=False)
            return None
    _CACHE[memory] = index
    while sum(p.postings for p in _CACHE.values()) > limit:
        _CACHE.popitem(last=False)
    if index.stamps == stamps:  # it holds what the statistics count: the same snapshot
        index.remember(wanted, owners, terms.frequencies_of([r[7:] for r in fetched if r[0]]))
    return index


def _caught_up(index: Postings, memory: Memory, stamps: dict[int, int], counted: int) -> bool:
    """Read the facts stamped since the index last looked. False when only a rebuild will
    do: a counter went back (its rows were made anew), facts are missing (written past the
    triggers), too many old versions or deleted facts are left, or it outgrew the limit."""
    if any(n < index.stamps.get(s, 0) for s, n in stamps.items()):
        return False
    changed = [s for s, n in stamps.items() if n != index.stamps.get(s, 0)]
    if changed:
        params = {
            "agent": memory.agent_id,
            "scope": memory.scope,
            "shards": changed,
            "since": [index.stamps.get(s, 0) for s in changed],
        }
        seen, counted = index.load(prepared.fetch_all(_CHANGED_SQL, params))
        index.stamps = seen
        index.counts.clear()
    # Every fact counted is in the index, as are the deleted ones it has not seen go.
    expected = counted + index.drift
    return (
        expected <= index.live <= expected * (1 + STALE_SHARE) + STALE_SLACK
        and index.size - index.live <= index.live * STALE_SHARE + STALE_SLACK
        and index.postings <= setting("facts.index_max_postings")
    )


def forget() -> None:
    """Drop every index (tests; a process about to hold other data)."""
    with _LOCK:
        _CACHE.clear()
        _BIG.clear()
        _TOO_BIG.clear()
