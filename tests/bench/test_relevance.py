"""The known-item test's pure parts: its queries, its metrics and its replayed tie-breaks."""

from __future__ import annotations

import random

import pytest

from bench import relevance


def test_a_known_item_query_is_three_distinct_words_of_three_letters_in_the_facts_order():
    text = "İstanbul ofisi 2026 ile ab ab İSTANBUL şirket müdürü toplantı"
    for seed in range(20):
        words = relevance.known_item_query(text, random.Random(seed))
        eligible = ["istanbul", "ofisi", "ile", "sirket", "muduru", "toplanti"]  # folded
        assert len(set(words)) == 3
        assert set(words) <= set(eligible)
        assert words == sorted(words, key=eligible.index)


def test_a_fact_with_fewer_than_three_such_words_makes_no_query():
    assert relevance.known_item_query("an ox is 42 or 1234 it it", random.Random(1)) is None
    assert relevance.known_item_query("alpha alpha beta BETA", random.Random(1)) is None


def test_known_items_are_reproducible_and_skip_short_facts():
    texts = ["one two", "alpha beta gamma", "red green blue cyan", "ab cd"] * 5
    items = relevance.known_items(texts, 6, seed=3)
    assert items == relevance.known_items(texts, 6, seed=3)
    assert len(items) == 6
    assert all(len(texts[p].split()) >= 3 and len(q) == 3 for p, q in items)


def test_a_copy_of_the_fact_counts_as_the_fact_and_only_the_first_ten_count():
    assert relevance.rank_of("b", ["a", "b", "b"]) == 2
    assert relevance.rank_of("z", [str(n) for n in range(10)] + ["z"]) is None
    assert relevance.rank_of("z", []) is None


def test_metrics_on_a_hand_made_ranking():
    figures = relevance.metrics([1, 2, None, 5, 1])
    assert figures == {"success_at_1": 0.4, "success_at_5": 0.8, "mrr_at_10": 0.54, "n": 5}
    assert relevance.metrics([])["success_at_1"] is None


@pytest.fixture
def facts():
    return relevance.Facts(
        [
            "alpha beta gamma delta and a long sentence here",  # 0, oldest
            "alpha beta gamma",  # 1: the target
            "alphabet beta gammas newer",  # 2: holds the words by prefix only
            "beta gamma only",  # 3: lacks alpha
            "alpha beta gamma",  # 4: a copy of the target, newer still
        ]
    )


def test_only_facts_holding_every_word_by_prefix_are_tied(facts):
    assert facts.holding_all(["alpha", "beta", "gamma"]) == {0, 1, 2, 4}


def test_a_newer_copy_of_the_target_wins_its_tie_for_it(facts):
    query = ["alpha", "beta", "gamma"]
    for key in relevance.TIE_BREAKS.values():
        assert relevance.replay_rank(facts, 1, query, key) == 1
    # The oldest, longest fact: every other tied fact (copies of one text each count) first,
    # but for the one holding "alpha" and "gamma" only by prefix when whole words count.
    ranks = {n: relevance.replay_rank(facts, 0, query, k) for n, k in relevance.TIE_BREAKS.items()}
    assert ranks == {
        "newest_first": 4,
        "fewest_words": 4,
        "whole_words_then_newest": 3,
        "whole_words_then_fewest": 3,
    }


@pytest.mark.parametrize(
    ("older", "newer", "ranks"),
    [
        ("alpha beta gamma", "alphabet beta gammas newer", (2, 1, 1, 1)),
        ("alpha beta gamma x y", "alphabet beta gammas", (2, 2, 1, 1)),
        ("alpha beta gamma", "alpha beta gamma x", (2, 1, 2, 1)),
    ],
)
def test_the_tie_breakers_replayed(older, newer, ranks):
    facts = relevance.Facts([older, newer])
    query = ["alpha", "beta", "gamma"]
    found = tuple(relevance.replay_rank(facts, 0, query, k) for k in relevance.TIE_BREAKS.values())
    assert found == ranks
    scored = relevance.tie_breaks(facts, [(0, query)])
    assert scored["newest_first"]["success_at_1"] == (ranks[0] == 1)
    assert scored["items_with_a_tie"] == 1


def test_a_miss_is_explained_as_a_tie_lost_to_a_newer_longer_fact(facts):
    items = [(0, ["alpha", "delta", "sentence"]), (1, ["alpha", "beta", "gamma"])]
    texts = facts.texts
    found = {
        "memoryhub": [[texts[0]], [texts[2], texts[1]]],
        "peer": [[texts[0]], [texts[1], texts[2]]],
    }
    scores = [[3.0], [2.5, 2.5]]
    why = relevance.explain(facts, items, found, scores)
    assert why["misses_at_1"] == 1
    assert why["tie_at_top_score"] == 1
    assert why["top_longer"] == 1
    assert why["top_holds_all_three_by_prefix"] == 1
    assert why.get("top_holds_all_three_whole", 0) == 0
    assert why["peer"] == {
        "hits_where_ours_misses": 1,
        "misses_where_ours_hits": 0,
        "of_those_top_lacks_a_word": 0,
    }
