"""The known-item test: a stored fact, a query of three of its words; is it found first?

The rule for a query (``known_item_query``): the fact's words as fact search splits them
(folded, letters and digits, distinct), those with at least three letters; three of them
drawn at random (a seeded ``random.Random``), kept in the fact's order. Facts with fewer
than three such words are not drawn.

A result counts as the fact when its text is the fact's text: the corpus repeats
sentences, and a copy is the same item to whoever searches.

Metrics over the items: success@1 (the fact is first), success@5 (in the first five) and
MRR@10 (the mean of 1/rank, 0 when the fact is not in the first ten).

``tie_breaks`` explains memoryhub's misses: a fact holds every word of its own query whole,
so it has the highest score memoryhub gives (the sum of the words' idf and the bonus of
three whole words), and only facts holding all three words whole too can rank above it: a
miss is always a tie, broken newest first. It replays each query on the facts with other
tie-breakers among the facts holding the three words by prefix (``newest_first`` is
memoryhub's ranking before whole words counted, ``whole_words_then_newest`` its ranking
now).
"""

from __future__ import annotations

import bisect
import random
import re
from collections import defaultdict
from collections.abc import Callable

from facts.search import fold

WORDS, MIN_LETTERS, DEPTH = 3, 3, 10
_WORD = re.compile(r"[^\W_]+")


def words_of(text: str) -> list[str]:
    """The fact's folded words, in order, as fact search splits text."""
    return _WORD.findall(fold(text))


def known_item_query(text: str, rng: random.Random) -> list[str] | None:
    """Three distinct words of ``text`` with at least three letters, drawn at random, in the
    text's order; None when it has fewer than three."""
    eligible = [
        w for w in dict.fromkeys(words_of(text)) if sum(c.isalpha() for c in w) >= MIN_LETTERS
    ]
    if len(eligible) < WORDS:
        return None
    chosen = set(rng.sample(eligible, WORDS))
    return [w for w in eligible if w in chosen]


def known_items(texts: list[str], count: int, seed: int) -> list[tuple[int, list[str]]]:
    """``count`` facts (their positions in ``texts``) drawn at random, each with its query."""
    rng = random.Random(seed)
    order = list(range(len(texts)))
    rng.shuffle(order)
    items = []
    for position in order:
        query = known_item_query(texts[position], rng)
        if query:
            items.append((position, query))
            if len(items) == count:
                break
    return items


def rank_of(target: str, found: list[str]) -> int | None:
    """The 1-based rank of the first result whose text is ``target``'s, or None."""
    for rank, text in enumerate(found[:DEPTH], 1):
        if text == target:
            return rank
    return None


def metrics(ranks: list[int | None]) -> dict:
    """success@1, success@5 and MRR@10 of the ranks (None: not in the first ten)."""
    n = len(ranks)
    if not n:
        return {"success_at_1": None, "success_at_5": None, "mrr_at_10": None, "n": 0}
    return {
        "success_at_1": round(sum(r == 1 for r in ranks if r) / n, 4),
        "success_at_5": round(sum(r <= 5 for r in ranks if r) / n, 4),
        "mrr_at_10": round(sum(1 / r for r in ranks if r and r <= DEPTH) / n, 4),
        "n": n,
    }


class Facts:
    """The facts' words for replaying queries: which facts a query word prefix-matches."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.words = [words_of(t) for t in texts]
        postings: dict[str, set[int]] = defaultdict(set)
        for n, words in enumerate(self.words):
            for word in words:
                postings[word].add(n)
        self.vocabulary = sorted(postings)
        self.postings = postings

    def matching(self, word: str) -> set[int]:
        start = bisect.bisect_left(self.vocabulary, word)
        found: set[int] = set()
        for term in self.vocabulary[start:]:
            if not term.startswith(word):
                break
            found |= self.postings[term]
        return found

    def holding_all(self, query: list[str]) -> set[int]:
        """The facts every query word prefix-matches: those tied at the top score."""
        sets = sorted((self.matching(w) for w in query), key=len)
        return set.intersection(*sets)


# Tie-breakers over the facts holding every word, best first (all descending; the fact's
# position, its age, breaks what is left: newest first, as memoryhub does).
OURS = "whole_words_then_newest"  # memoryhub's score: the whole words' bonus, then newest
TIE_BREAKS: dict[str, Callable[[list[str], list[str], int], tuple]] = {
    "newest_first": lambda words, query, n: (n,),
    "fewest_words": lambda words, query, n: (-len(words), n),
    "whole_words_then_newest": lambda words, query, n: (sum(w in words for w in query), n),
    "whole_words_then_fewest": lambda words, query, n: (
        sum(w in words for w in query),
        -len(words),
        n,
    ),
}


def replay_rank(facts: Facts, position: int, query: list[str], key: Callable) -> int:
    """The target's rank among the facts tied with it at the top score, a tie-breaker
    ``key`` ordering them: 1 + the facts of other texts ordered before its best copy."""
    target = facts.texts[position]
    tied = [(facts.texts[n], key(facts.words[n], query, n)) for n in facts.holding_all(query)]
    best = max(order for text, order in tied if text == target)
    return 1 + sum(order > best for text, order in tied if text != target)


def tie_breaks(facts: Facts, items: list[tuple[int, list[str]]]) -> dict:
    """success@1 and MRR@10 of memoryhub's score with each tie-breaker, and the size of
    the tied groups, replayed on the facts."""
    replayed: dict = {}
    for name, key in TIE_BREAKS.items():
        ranks = [replay_rank(facts, position, query, key) for position, query in items]
        replayed[name] = metrics([r if r <= DEPTH else None for r in ranks])
    tied = sorted(
        sum(facts.texts[n] != facts.texts[p] for n in facts.holding_all(q)) for p, q in items
    )
    replayed["tied_other_facts_median"] = tied[len(tied) // 2] if tied else None
    replayed["items_with_a_tie"] = sum(t > 0 for t in tied)
    return replayed


def _holds_all(facts: Facts, text: str, query: list[str]) -> bool:
    words = words_of(text)
    return all(any(w.startswith(q) for w in words) for q in query)


def _whole(text: str, query: list[str]) -> bool:
    words = set(words_of(text))
    return all(q in words for q in query)


def explain(
    facts: Facts,
    items: list[tuple[int, list[str]]],
    found: dict[str, list[list[str]]],
    scores: list[list[float]],
    ours: str = "memoryhub",
) -> dict:
    """Why memoryhub misses at @1 where it does, and how its misses meet the peers'.

    ``found``: each engine's result texts per item; ``scores``: memoryhub's scores."""
    misses = {i for i, (p, _) in enumerate(items) if rank_of(facts.texts[p], found[ours][i]) != 1}
    counts: dict = defaultdict(int)
    for i in misses:
        position, query = items[i]
        target, top = facts.texts[position], found[ours][i][:1]
        rank = rank_of(target, found[ours][i])
        if not top:
            counts["no_result"] += 1
            continue
        if rank is None:
            counts["target_below_10"] += 1
        elif scores[i][rank - 1] == scores[i][0]:
            counts["tie_at_top_score"] += 1
        else:
            counts["target_scored_lower"] += 1
        counts["top_holds_all_three_by_prefix"] += _holds_all(facts, top[0], query)
        counts["top_holds_all_three_whole"] += _whole(top[0], query)
        size, target_size = len(words_of(top[0])), len(words_of(target))
        counts["top_longer" if size > target_size else
               "top_shorter" if size < target_size else "top_same_length"] += 1  # fmt: skip
        replayed = replay_rank(facts, position, query, TIE_BREAKS[OURS])
        counts["replay_agrees"] += replayed == rank or (rank is None and replayed > DEPTH)
        for name, key in TIE_BREAKS.items():
            counts[f"first_with_{name}"] += replay_rank(facts, position, query, key) == 1
    result: dict = {"misses_at_1": len(misses), **counts}
    for peer, texts in found.items():
        if peer == ours:
            continue
        hits = [rank_of(facts.texts[p], texts[i]) == 1 for i, (p, _) in enumerate(items)]
        peer_misses = [i for i, hit in enumerate(hits) if not hit and i not in misses]
        result[peer] = {
            "hits_where_ours_misses": sum(hits[i] for i in misses),
            "misses_where_ours_hits": len(peer_misses),
            "of_those_top_lacks_a_word": sum(
                bool(texts[i]) and not _holds_all(facts, texts[i][0], items[i][1])
                for i in peer_misses
            ),
        }
    return result
