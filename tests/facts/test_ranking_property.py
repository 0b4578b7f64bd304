"""The top k that facts.topk finds is the true top k of facts.ranking.

A few thousand facts of Zipf-distributed words, a few hundred random queries (common
words, rare words, short prefixes, mixes, folders), each checked against a brute-force
ranking in Python computed from the facts' own lexemes, not from the term statistics.
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from facts import ranking
from facts.paths import Folder, Viewer
from facts.scope import REAL_MEMORY, FactScope
from facts.services.reading import search_facts
from facts.topk import TopK

FACTS = 3000
QUERIES = 300
SYLLABLES = ["ba", "ke", "li", "mo", "nu", "ra", "se", "ti", "şe", "ğa", "ıl", "öz", "çi"]


def vocabulary(rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < 400:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3))))
    return sorted(words)


def load(agent, rng: random.Random, words: list[str]) -> None:
    """FACTS facts in folders a/ and b/, some sharing a moment; a hundred replaced (an
    UPDATE of their text) and some deleted, so the statistics have seen every write."""
    weights = [1 / (rank + 1) for rank in range(len(words))]
    base = datetime(2026, 1, 1, tzinfo=UTC)
    rows = []
    for n in range(FACTS):
        text = " ".join(rng.choices(words, weights, k=rng.randint(3, 12)))
        moment = base + timedelta(seconds=n // 3)  # ties on updated_at, broken by id
        rows.append((rng.choice(["a/", "a/x/", "b/"]), text, moment))
    insert(agent, rows)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE facts_fact SET search_text = lower(search_text) || ' extra' "
            "WHERE agent_id = %s AND id IN (SELECT id FROM facts_fact WHERE agent_id = %s "
            "ORDER BY id LIMIT 100)",
            [agent.id, agent.id],
        )
        cursor.execute("DELETE FROM facts_fact WHERE agent_id = %s AND id %% 17 = 0", [agent.id])


def insert(agent, rows: list[tuple], owners: list[str | None] | None = None) -> None:
    """rows: (path, text, moment); owners: each row's end user (None: shared, the default)."""
    from facts.search import fold

    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO facts_fact (workspace_id, agent_id, scope, owner_id, path, text, tags,
                confidence, version, run_id, written_by, created_at, updated_at, search_text)
            SELECT %s, %s, '', o, p, t, '{}', 1, 1, 'run_seed', 'code', m, m, s
            FROM unnest(%s::text[], %s::text[], %s::timestamptz[], %s::text[], %s::text[])
                AS r(p, t, m, s, o)
            """,
            [agent.workspace_id, agent.id, *map(list, zip(*rows, strict=True)),
             [fold(text) for _, text, _ in rows], owners or [None] * len(rows)],
        )  # fmt: skip


def lexemes(agent, owners: list[str | None] | None = None):
    """(id, path, updated_at, lexemes) of the agent's facts; of these owners' only if given."""
    visible = "" if owners is None else "AND coalesce(owner_id, '') = ANY(%s)"
    params = [agent.id] + ([] if owners is None else [[o or "" for o in owners]])
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, path, updated_at, tsvector_to_array(search_vector) FROM facts_fact "
            f"WHERE agent_id = %s AND scope = '' {visible}",  # noqa: S608
            params,
        )
        return [(i, path, at, frozenset(lex)) for i, path, at, lex in cursor.fetchall()]


def brute_force(facts, query: str, k: int, folder: str) -> list[tuple[int, float]]:
    from facts.search import query_words

    counts = Counter(lexeme for *_, lex in facts for lexeme in lex)
    total = len(facts)
    words = ranking.weigh(
        total,
        query_words(query),
        [min(total, sum(n for t, n in counts.items() if t.startswith(w)))
         for w in query_words(query)],
    )  # fmt: skip
    scored = []
    for fact_id, path, at, lex in facts:
        matched = [any(t.startswith(w.text) for t in lex) for w in words]
        whole = sum(w.text in lex for w in words)
        if any(matched) and path.startswith(folder):
            scored.append(ranking.Hit(fact_id, at, ranking.score(words, matched, whole)))
    return [(hit.id, hit.score) for hit in ranking.best(scored, k)]


def random_query(rng: random.Random, words: list[str]) -> str:
    common, rare = words[:30], words[150:]
    kind = rng.choice(["common", "rare", "prefix", "mixed", "many"])
    if kind == "common":
        return " ".join(rng.sample(common, rng.randint(1, 4)))
    if kind == "rare":
        return " ".join(rng.sample(rare, rng.randint(1, 3)))
    if kind == "prefix":
        return " ".join(rng.choice(words)[: rng.randint(1, 2)] for _ in range(rng.randint(1, 2)))
    if kind == "many":  # more common words than the subset walk takes
        return " ".join(rng.sample(common, rng.randint(5, 8)))
    pool = rng.sample(common, 2) + rng.sample(rare, 2) + [rng.choice(words)[:2]]
    return " ".join(rng.sample(pool, rng.randint(2, 5))).upper()


def count_plans(monkeypatch) -> Counter:
    """Which plans facts.topk ran, to be sure the random queries reach each of them."""
    plans: Counter = Counter()
    names = ("_rare_candidates", "_score_every_match", "_read_all", "_exactly", "_descend")
    for name in names:
        original = getattr(TopK, name)

        def counted(self, *args, _original=original, _name=name):
            driver = args[-1] if _name == "_exactly" else None
            found = _original(self, *args)
            if _name == "_exactly":
                plans[f"subset_{driver is None}"] += 1
                subset, whole = args[0]
                held = "whole" if whole == subset else "part" if whole else "longer"
                plans[f"pair_{held}"] += 1
            elif _name != "_descend" or found is not None:  # the descent found the top k
                plans[_name] += 1
            return found

        monkeypatch.setattr(TopK, name, counted)
    return plans


@pytest.mark.django_db
def test_top_k_is_the_brute_force_top_k(agent, tenant, monkeypatch):
    from tests.factories import create_agent

    rng = random.Random(20261202)
    words = vocabulary(rng)
    rng.shuffle(words)  # Zipf ranks independent of spelling
    load(agent, rng, words)
    load(create_agent(tenant.owner, {"name": "Noise"}), rng, words)
    facts = lexemes(agent)
    plans = count_plans(monkeypatch)
    scope = FactScope(agent.workspace_id, agent.id, REAL_MEMORY, Viewer(is_run=False))
    for _ in range(QUERIES):
        query, k = random_query(rng, words), rng.choice([1, 5, 5, 10, 50])
        folder = rng.choice(["", "", "a/", "b/"])
        found = search_facts(scope, query, folders=[Folder(folder, None, False)], k=k)
        expected = brute_force(facts, query, k, folder)
        assert [(f.pk, f.score) for f in found] == expected, (query, k, folder)
    assert plans.keys() >= {"_rare_candidates", "_descend", "subset_True", "subset_False",
                            "pair_whole", "pair_part", "pair_longer"}, plans  # fmt: skip


@pytest.mark.django_db
def test_a_walk_costlier_than_scoring_every_match_scores_every_match(agent, monkeypatch):
    """Five common words make up to 242 pairs: past the cost of scoring every match (each
    query counted with its round trip), the walk stops and every match is scored."""
    rng = random.Random(20261206)
    words = vocabulary(rng)
    rng.shuffle(words)
    load(agent, rng, words)
    facts = lexemes(agent)
    calls: list[str] = []
    for name in ("_exactly", "_score_every_match", "_descend"):
        original = getattr(TopK, name)

        def called(self, *args, _original=original, _name=name):
            calls.append(_name)
            return _original(self, *args)

        monkeypatch.setattr(TopK, name, called)
    scope = FactScope(agent.workspace_id, agent.id, REAL_MEMORY, Viewer(is_run=False))
    walked_then_scored = 0
    for _ in range(30):
        calls.clear()
        query = " ".join(rng.sample(words[:12], 5))
        found = search_facts(scope, query, folders=[Folder("", None, False)], k=10)
        assert [(f.pk, f.score) for f in found] == brute_force(facts, query, 10, ""), query
        assert len([c for c in calls if c == "_exactly"]) <= 30, (query, calls)
        walked_then_scored += calls[-1:] == ["_score_every_match"] and "_exactly" in calls
    assert walked_then_scored >= 3, "the walk gave way to scoring every match"


def load_users(agent, rng: random.Random, words: list[str], me: str) -> None:
    """FACTS facts, most in other end users' folders: a run sees a small share of them."""
    weights = [1 / (rank + 1) for rank in range(len(words))]
    base = datetime(2026, 1, 1, tzinfo=UTC)
    rows, owners = [], []
    for n in range(FACTS):
        owner = rng.choice([None, me, "usr_a", "usr_b", "usr_c", "usr_d", "usr_e", "usr_f"])
        text = " ".join(rng.choices(words, weights, k=rng.randint(3, 12)))
        path = "notes/" if owner is None else f"users/{owner}/"
        rows.append((path, text, base + timedelta(seconds=n // 3)))
        owners.append(owner)
    insert(agent, rows, owners)


@pytest.mark.django_db
def test_a_runs_top_k_is_the_brute_force_top_k_of_what_it_may_see(agent, monkeypatch):
    """A run weighs words by the shared facts and its own folder alone, and reads them each
    newest first on its own, or reads them all when the plan would cost more."""
    rng = random.Random(20261203)
    words = vocabulary(rng)
    rng.shuffle(words)
    me = "usr_me"
    load_users(agent, rng, words, me)
    facts = lexemes(agent, [None, me])
    plans = count_plans(monkeypatch)
    viewer = Viewer(is_run=True, end_user_id=me, end_user_external_id="me")
    scope = FactScope(agent.workspace_id, agent.id, REAL_MEMORY, viewer)
    for _ in range(QUERIES // 2):
        query, k = random_query(rng, words), rng.choice([1, 5, 5, 10])
        folder = rng.choice(
            [
                Folder("", None, False),
                Folder("", None, False),
                Folder("notes/", None, False),
                Folder(f"users/{me}/", me, True),
            ]
        )
        found = search_facts(scope, query, folders=[folder], k=k)
        expected = brute_force(facts, query, k, folder.path)
        assert [(f.pk, f.score) for f in found] == expected, (query, k, folder)
    assert {"_rare_candidates", "subset_True", "subset_False", "_read_all", "pair_whole",
            "pair_longer"} <= plans.keys(), plans  # fmt: skip
