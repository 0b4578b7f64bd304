"""The in-process postings index (facts.postings): the top k of the SQL search for long
questions, kept exact while other connections write, replace and delete, private per end
user, and never used where it could be wrong (in a transaction that has written)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime

import numpy as np
import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from facts import postings, shards, terms
from facts.models import Fact, FactQuota
from facts.paths import Folder, Viewer
from facts.ranking import WHOLE
from facts.scope import REAL_MEMORY, FactScope
from facts.services.reading import search_facts
from memoryhub import prepared
from tests.facts.conftest import run_for, save
from tests.facts.test_ranking_property import (
    brute_force,
    insert,
    lexemes,
    load,
    load_users,
    vocabulary,
)
from tests.parallel import in_parallel

pytestmark = pytest.mark.django_db(transaction=True)
SEARCH = "/v0/memory/search"


def index_settings(**values):
    names = {"min_facts": "facts.index_min_facts", "max_postings": "facts.index_max_postings"}
    extra = {names[name]: value for name, value in values.items()}
    return override_settings(MEMORYHUB_SETTINGS={**settings.MEMORYHUB_SETTINGS, **extra})


@pytest.fixture(autouse=True)
def any_memory_indexed():
    """Every memory indexed, from its first fact; no index left from another test."""
    postings.forget()
    with index_settings(min_facts=0):
        yield
    postings.forget()


@pytest.fixture
def served(monkeypatch) -> Counter:
    """How searches went: answered by an index ("index"), or left to SQL ("sql")."""
    counts: Counter = Counter()
    original = postings.Postings.search

    def search(self, *args, **kwargs):
        found = original(self, *args, **kwargs)
        counts["sql" if found is None else "index"] += 1
        return found

    monkeypatch.setattr(postings.Postings, "search", search)
    return counts


@pytest.fixture
def every_query(monkeypatch) -> None:
    """The index answers short queries too, which the search otherwise leaves to SQL."""
    monkeypatch.setattr(postings, "FROM_COMMON", 0)


def counted_as_loaded(agent) -> None:
    """Counter rows holding the memory's facts, as the service keeps them."""
    shards.ensure(terms.Memory(agent.id, REAL_MEMORY), agent.workspace_id)
    FactQuota.objects.filter(agent_id=agent.id, shard=0).update(
        count=Fact.objects.filter(agent_id=agent.id).count()
    )


@pytest.fixture(params=["every match", "above a sample"])
def first_candidates(request, monkeypatch) -> Iterator[None]:
    """The first candidates sorted: every match, or those above the threshold of a sample
    of the scores (``postings._likely``), which otherwise only memories many times
    ``SAMPLE``'s size reach."""
    if request.param == "every match":
        yield
        return
    monkeypatch.setattr(postings, "SAMPLE", 64)
    found: Counter = Counter()
    original = postings._likely

    def likely(*args):
        first = original(*args)
        found["threshold" if first is not None else "none"] += 1
        return first

    monkeypatch.setattr(postings, "_likely", likely)
    yield
    assert found["threshold"] >= 10, found  # the sample's threshold was used


@pytest.fixture(params=["from the candidates' lexemes", "from the words' postings"])
def whole_counted(request, monkeypatch) -> None:
    """The words held whole counted one way or the other, whichever
    ``Postings._whole_counts`` would pick (for small memories, nearly always the first)."""

    def counts(self, held, slots):
        if request.param.endswith("postings"):
            return self._whole_from_postings(held)[slots]
        return self._whole_from_lexemes(held, slots)

    monkeypatch.setattr(postings.Postings, "_whole_counts", counts)


def question(rng: random.Random, words: list[str]) -> str:
    """A question: common words (from 2 on, the index answers), a rare one, a short
    prefix."""
    common = rng.sample(words[:30], rng.randint(2, 14))
    return " ".join([*common, rng.choice(words[150:]), rng.choice(words)[:2]])


def test_the_index_answers_questions_as_the_brute_force_ranking(
    agent, served, first_candidates, whole_counted
):
    rng = random.Random(20261205)
    words = vocabulary(rng)
    rng.shuffle(words)
    load(agent, rng, words)  # replaced and deleted facts too
    counted_as_loaded(agent)
    facts = lexemes(agent)
    scope = FactScope(agent.workspace_id, agent.id, REAL_MEMORY, Viewer(is_run=False))
    for _ in range(120):
        query, k = question(rng, words), rng.choice([1, 5, 10, 50])
        folder = rng.choice(["", "", "a/", "b/"])
        found = search_facts(scope, query, folders=[Folder(folder, None, False)], k=k)
        expected = brute_force(facts, query, k, folder)
        assert [(f.pk, f.score) for f in found] == expected, (query, k, folder)
    # The first search counts the memory in SQL; the index answers from then on.
    assert served["index"] >= 100, served


def test_a_run_sees_only_its_share_through_the_index(
    agent, served, first_candidates, whole_counted
):
    rng = random.Random(20261206)
    words = vocabulary(rng)
    rng.shuffle(words)
    me = "usr_me"
    load_users(agent, rng, words, me)
    counted_as_loaded(agent)
    facts = lexemes(agent, [None, me])
    viewer = Viewer(is_run=True, end_user_id=me, end_user_external_id="me")
    scope = FactScope(agent.workspace_id, agent.id, REAL_MEMORY, viewer)
    for _ in range(60):
        query, k = question(rng, words), rng.choice([1, 5, 10])
        found = search_facts(scope, query, folders=[Folder("", None, False)], k=k)
        # Scores weigh only what the run may see: another user's facts never move them.
        assert [(f.pk, f.score) for f in found] == brute_force(facts, query, k, ""), query
        assert all(f.owner_id in (None, me) for f in found)
    assert served["index"] >= 50, served


def test_a_small_folder_is_answered_past_the_first_candidates(agent, monkeypatch):
    """The first candidates (above a sample's threshold) are mostly outside a small folder,
    so the answer comes from the later batches, chosen from every match: their scores
    count the words held whole there too."""
    monkeypatch.setattr(postings, "SAMPLE", 64)
    rng = random.Random(20261207)
    words = vocabulary(rng)
    rng.shuffle(words)
    load(agent, rng, words)
    moment = datetime(2025, 6, 1, tzinfo=UTC)  # older than the rest: never first by age
    insert(agent, [("c/", " ".join(rng.choices(words[:40], k=6)), moment) for _ in range(40)])
    counted_as_loaded(agent)
    facts = lexemes(agent)
    batches = Counter()
    original = postings.Postings._best

    def best(self, candidates, scores, want):
        batches[want > 64] += 1
        return original(self, candidates, scores, want)

    monkeypatch.setattr(postings.Postings, "_best", best)
    scope = FactScope(agent.workspace_id, agent.id, REAL_MEMORY, Viewer(is_run=False))
    search_facts(scope, "counted in sql", folders=[Folder("", None, False)], k=5)
    for _ in range(40):
        query, k = question(rng, words), rng.choice([5, 10])
        found = search_facts(scope, query, folders=[Folder("c/", None, False)], k=k)
        assert [(f.pk, f.score) for f in found] == brute_force(facts, query, k, "c/"), query
    assert batches[True] >= 10, batches  # later batches answered most of them


LONG = "where is the tall blue lighthouse of the harbour that the old captain painted"


def ids(api, query: str = LONG, k: int = 10) -> list[str]:
    response = api.post(SEARCH, {"query": query, "k": k})
    assert response.status_code == 200, response.content
    return [fact["id"] for fact in response.json()["facts"]]


def seed_harbour(api, count: int = 40) -> list[dict]:
    words = LONG.split()
    texts = [" ".join(words[i % 7 : i % 7 + 6]) + f" n{i}" for i in range(count)]
    return [save(api, "notes/", text) for text in texts]


def test_the_index_sees_new_replaced_and_deleted_facts(run_api, served, every_query):
    seed_harbour(run_api)
    ids(run_api)  # counted in SQL
    ids(run_api)  # the index is built
    new = save(run_api, "notes/", LONG + " zeppelin")
    assert ids(run_api)[0] == new["id"]  # every word: the best score, and the newest
    replaced = save(run_api, "notes/", "nothing remains", replaces=new["id"])
    assert new["id"] not in ids(run_api, k=50)  # its new text holds none of the words
    assert new["id"] in ids(run_api, f"{LONG} remains", k=50)
    assert run_api.delete(f"/v0/memory/facts/{replaced['id']}").status_code == 204
    assert new["id"] not in ids(run_api, f"{LONG} remains", k=50)
    assert served["index"] == 5 and served["sql"] == 0, served


def test_a_question_reads_the_stamps_and_its_statistics_in_one_round_trip(
    run_api, served, every_query, monkeypatch
):
    """Three round trips for a question in an unchanged memory: the run token, the
    counter shards' stamps with the statistics of the words the index does not hold, and
    the check of the best candidates."""
    seed_harbour(run_api)
    ids(run_api)  # counted in SQL
    ids(run_api)  # the index is built
    statements: list[str] = []
    original = prepared.fetch_all

    def fetch_all(sql, params):
        statements.append(sql)
        return original(sql, params)

    monkeypatch.setattr(prepared, "fetch_all", fetch_all)
    with CaptureQueriesContext(connection) as orm:
        found = ids(run_api, LONG + " zeppelin lighthouses")  # words it has no statistics of
    assert found and served["index"] == 2, served  # the second search and this one
    assert len(statements) + len(orm) == 3, [*statements, *(q["sql"] for q in orm)]


def test_a_word_most_facts_hold_is_found_in_facts_written_after_it_was_searched(
    run_api, served, every_query
):
    """The index remembers such a word's facts as a mask (``postings.DENSE``), which the
    facts written since must join."""
    seed_harbour(run_api)  # every fact holds a word starting with n: n0 to n39
    ids(run_api, "n")  # counted in SQL
    assert len(ids(run_api, "n", k=50)) == 40  # remembered by the index
    new = save(run_api, "notes/", "n99 a late note")
    found = ids(run_api, "n", k=50)
    assert len(found) == 41 and found[0] == new["id"]  # ties: the newest first
    assert served["index"] == 2 and served["sql"] == 0, served


def test_writers_on_other_connections_are_seen_at_once(tenant, agent, run_api, served, every_query):
    seed_harbour(run_api)
    ids(run_api)
    writers = [run_for(tenant, agent, "alice")[1] for _ in range(4)]

    def write(i: int) -> list[str]:
        return [save(writers[i], "notes/", f"{LONG} writer{i} w{n}")["id"] for n in range(10)]

    written = in_parallel(4, write)
    assert not [w for w in written if isinstance(w, Exception)], written
    for i, mine in enumerate(written):
        found = ids(run_api, f"{LONG} writer{i}")
        assert set(found) == set(mine), (i, found)  # all ten, and no one else's
    assert served["index"] >= 4, served


def test_a_transaction_that_wrote_searches_in_sql(agent, run_api, running_run, served, every_query):
    seed_harbour(run_api)
    ids(run_api)
    ids(run_api)
    from facts.scope import for_run
    from facts.services.writing import write_fact
    from memoryhub.principals import Principal

    run = running_run[0]
    principal = Principal.for_run(run)
    scope = for_run(principal)
    with pytest.raises(RuntimeError), transaction.atomic():
        write_fact(principal, scope, path="notes/", text=f"{LONG} ghost")
        found = search_facts(scope, f"{LONG} ghost", folders=[Folder("", None, False)], k=1)
        assert "ghost" in found[0].text  # its own write, seen in SQL
        raise RuntimeError("roll back")
    assert served["sql"] == 0 and served["index"] == 1, served  # the index was not asked
    # The next committed write takes the change number the rolled back one had.
    kept = save(run_api, "notes/", f"{LONG} kept")
    found = ids(run_api, f"{LONG} ghost kept")
    assert found[0] == kept["id"]
    assert not Fact.objects.filter(text__contains="ghost").exists()


def test_a_bulk_load_past_the_triggers_is_seen_after_the_recount(
    agent, run_api, served, every_query
):
    seed_harbour(run_api)
    ids(run_api)
    ids(run_api)
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")  # no triggers, no stamps
        cursor.execute(
            "INSERT INTO facts_fact (workspace_id, agent_id, scope, path, text, tags, "
            "confidence, version, run_id, written_by, created_at, updated_at, search_text) "
            "SELECT workspace_id, agent_id, scope, path, text || ' bulkload', tags, "
            "confidence, version, run_id, written_by, now(), now(), search_text || ' bulkload' "
            "FROM facts_fact WHERE agent_id = %s",
            [agent.id],
        )
        cursor.execute("SET session_replication_role = origin")
        cursor.execute(terms.RECOUNT_SQL)
    counted_as_loaded(agent)
    found = ids(run_api, f"{LONG} bulkload")
    assert found and all(
        Fact.objects.get(pk=int(i[2:])).text.endswith("bulkload") for i in found
    ), found
    assert served["index"] >= 2, served


def test_a_memory_bigger_than_the_index_may_hold_is_searched_in_sql(
    run_api, served, every_query, builds
):
    seed_harbour(run_api)
    expected = ids(run_api)
    with index_settings(min_facts=0, max_postings=50):
        assert ids(run_api) == expected
        assert ids(run_api) == expected
        assert ids(run_api) == expected
    assert served["index"] == 0, served
    assert builds["built"] == 1  # found too big once, not built again for each search
    assert ids(run_api) == expected
    assert served["index"] == 1, served


@pytest.mark.parametrize("want", [1, 5, 16])
def test_the_threshold_keeps_the_best_among_many_equal_scores(want):
    """Most facts of a question hold only its commonest word and score alike: every fact of
    the true top ``want`` (and every one tied with the last) is kept, few others."""
    rng = np.random.default_rng(want)
    scores = np.full(70_000, 5e-6)
    better = rng.choice(70_000, 300, replace=False)
    scores[better] += rng.choice([4.14, 3.55, 2.8, 2.29, 3.45], 300)
    candidates = np.arange(70_000)
    kept = set(postings._top(candidates, scores, want).tolist())
    least = np.sort(scores)[-want]
    assert set(np.flatnonzero(scores >= least).tolist()) == kept


def question_scores(rng, size: int, common: float, rare: int) -> np.ndarray:
    """A two-word question's idf sums over ``size`` facts: a common word in a ``common``
    share of them, a word in ``rare`` of them, some in both."""
    scores = np.zeros(size)
    scores[rng.random(size) < common] += 0.59
    scores[rng.choice(size, rare, replace=False)] += 5.8
    return scores


@pytest.mark.parametrize("seed", range(40))
def test_the_first_candidates_hold_every_fact_that_can_reach_the_top(seed):
    """Whatever the sample makes of the scores: every visible fact that could still reach
    the ``want``-th best score by the words it holds whole is among the first candidates."""
    rng = np.random.default_rng(seed)
    size = int(rng.integers(10_000, 120_000))
    scores = question_scores(rng, size, rng.random(), int(rng.integers(0, 3000)))
    visible = rng.random(size) < rng.choice([0.3, 0.9, 1.0])
    want, slack = int(rng.choice([1, 5, 14, 54])), 2 * WHOLE
    likely = postings._likely(scores, visible, want, slack)
    if likely is None:
        return  # every match is a candidate
    mine = np.sort(scores[visible])
    if len(mine) < want or mine[-want] <= 0:
        pytest.fail(f"a threshold without {want} matches: {len(likely)} candidates")
    reaching = np.flatnonzero(visible & (scores + slack >= mine[-want]))
    assert set(reaching.tolist()) <= set(likely.tolist())


def test_a_rare_word_beside_a_common_one_keeps_the_first_candidates_few():
    """A two-word question, one word in half the facts and one in 300 of 100,000: the
    first candidates are the rare word's facts, not the common word's 50,000 (whose words
    held whole cost 6 ms to count)."""
    rng = np.random.default_rng(18)
    scores = question_scores(rng, 100_000, 0.55, 300)
    visible = np.ones(100_000, bool)
    likely = postings._likely(scores, visible, 14, 2 * WHOLE)
    assert likely is not None
    assert 14 <= len(likely) <= 300
    assert set(np.flatnonzero(scores >= 5.8).tolist()) >= set(likely.tolist())


@pytest.fixture
def builds(monkeypatch) -> Counter:
    """How many times an index was built from the whole memory."""
    counts: Counter = Counter()
    original = postings.Postings.__init__

    def counted(self, *args):
        counts["built"] += 1
        original(self, *args)

    monkeypatch.setattr(postings.Postings, "__init__", counted)
    return counts


def test_a_write_committed_during_a_build_is_in_it_and_no_reason_to_build_again(
    tenant, agent, run_api, served, every_query, builds, monkeypatch
):
    seed_harbour(run_api)
    ids(run_api)  # counted in SQL
    writer = run_for(tenant, agent, "alice")[1]
    written: list[dict] = []
    original = prepared.fetch_all

    def fetch_all(sql, params):
        if sql is postings._ALL_SQL and not written:  # after the stamps, before the facts
            written.extend(in_parallel(1, lambda i: save(writer, "notes/", f"{LONG} meanwhile")))
        return original(sql, params)

    monkeypatch.setattr(prepared, "fetch_all", fetch_all)
    ids(run_api)
    assert ids(run_api, f"{LONG} meanwhile")[0] == written[0]["id"]
    ids(run_api)
    assert builds["built"] == 1, builds
    assert served["index"] == 3 and served["sql"] == 0, served


def test_old_versions_past_a_share_of_the_memory_make_it_build_anew(
    run_api, served, every_query, builds, monkeypatch
):
    monkeypatch.setattr(postings, "STALE_SLACK", 0)
    facts = seed_harbour(run_api)
    ids(run_api)
    ids(run_api)
    for n in range(8):  # each version a new slot, its old one dead: 8 of 40 live
        save(run_api, "notes/", f"{LONG} version {n}", replaces=facts[0]["id"])
        assert ids(run_api)[0] == facts[0]["id"]
    assert builds["built"] == 1, builds
    for n in range(8, 12):  # past a quarter (10 of 40)
        save(run_api, "notes/", f"{LONG} version {n}", replaces=facts[0]["id"])
        assert ids(run_api)[0] == facts[0]["id"]
    assert builds["built"] == 2, builds


def test_near_ties_at_the_last_place_keep_their_order():
    """Two facts whose scores differ by a rounding step (the same idfs added in another
    order) at the last place of a batch: ordered, not an error."""
    index = postings.Postings(key=None)
    index.add([(i, 1000 + i, "", [f"w{i}"]) for i in range(15)])
    scores = np.array([9.0] * 13 + [5.0, 5.0 - 2e-15])
    best = index._best(np.arange(15), scores, 14)
    assert best.tolist() == [*range(12, -1, -1), 13]
