"""Writers of one memory in parallel: its counter and term statistics are split in shards,
so a writer does not wait for another's transaction, and the limit and statistics stay
exact (real connections, real open transactions)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connection, transaction

from facts import terms
from facts.models import Fact, FactTerm
from facts.scope import for_run
from facts.services import checks
from facts.services.writing import delete_fact, write_fact
from memoryhub.principals import Principal
from tests.facts.conftest import counted, run_for, save, token_for
from tests.parallel import in_parallel
from tests.protocol import round_trips

FACTS = "/v0/memory/facts"
pytestmark = pytest.mark.django_db(transaction=True)


@contextmanager
def writing_in_another_transaction(run, text: str, path: str = "notes/") -> Iterator[None]:
    """Another connection writes a fact with ``text`` and keeps its transaction open."""
    written, release = threading.Event(), threading.Event()
    failure: list[BaseException] = []

    def write() -> None:
        try:
            with transaction.atomic():
                principal = Principal.for_run(run)
                write_fact(principal, for_run(principal), path=path, text=text)
                written.set()
                release.wait(30)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failure.append(exc)
            written.set()
        finally:
            connection.close()

    writer = threading.Thread(target=write)
    writer.start()
    assert written.wait(30) and not failure, failure
    try:
        yield
    finally:
        release.set()
        writer.join(30)
    assert not failure, failure


@contextmanager
def lock_timeout(value: str) -> Iterator[None]:
    """This connection gives up on a lock after ``value`` instead of waiting for it."""
    with connection.cursor() as cursor:
        cursor.execute(f"SET lock_timeout = '{value}'")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")


def _frequency(agent, word: str) -> int:
    return terms.document_frequencies(terms.Memory(agent.id, ""), [word]).dfs[0]


def test_a_writer_does_not_wait_for_another_writers_open_transaction(tenant, agent):
    run, token = token_for(tenant, agent, "alice")
    _, alice = run_for(tenant, agent, "alice")
    save(alice, "notes/", "the first fact")
    # The same common words: before shards, the counter row and these term rows were locked
    # by the open transaction until it committed.
    with writing_in_another_transaction(run, "the tea is green"), lock_timeout("3s"):
        response = alice.post(FACTS, {"path": "notes/", "text": "the tea is black"})
        assert response.status_code == 201, response.content
    assert counted(agent) == 3
    assert _frequency(agent, "tea") == 2 and _frequency(agent, "the") == 3
    assert checks.term_differences() == [] and checks.counter_differences() == []


def test_the_limit_is_exact_for_sixteen_writers_of_one_memory(tenant, agent, settings):
    settings.MEMORYHUB_SETTINGS = {**settings.MEMORYHUB_SETTINGS, "facts.max_facts_per_agent": 30}
    apis = [run_for(tenant, agent, f"user{i}")[1] for i in range(16)]

    def write(i: int) -> list[int]:
        return [
            apis[i].post(FACTS, {"path": "race/", "text": f"writer {i} fact {n}"}).status_code
            for n in range(4)
        ]

    results = in_parallel(16, write)
    statuses = Counter(status for result in results for status in result)
    assert statuses == {201: 30, 409: 34}, results
    assert Fact.objects.filter(agent=agent).count() == 30 and counted(agent) == 30
    assert _frequency(agent, "writer") == 30
    assert checks.term_differences() == [] and checks.counter_differences() == []


def test_sixteen_writers_of_one_memory_keep_the_statistics_exact(tenant, agent):
    apis = [run_for(tenant, agent, f"user{i}")[1] for i in range(16)]

    def write(i: int) -> list[str]:
        mine = [save(apis[i], "users/{user}/", f"private note {n} of {i}") for n in range(3)]
        shared = save(apis[i], "notes/", f"shared note of {i}")
        save(apis[i], "notes/", f"replaced note of {i}", replaces=shared["id"])
        assert apis[i].delete(f"{FACTS}/{mine[0]['id']}").status_code == 204
        return [fact["id"] for fact in mine[1:]]

    results = in_parallel(16, write)
    assert all(isinstance(result, list) for result in results), results
    assert counted(agent) == 16 * 3
    assert _frequency(agent, "note") == 16 * 3 and _frequency(agent, "replaced") == 16
    assert _frequency(agent, "shared") == 0
    assert checks.term_differences() == [] and checks.counter_differences() == []


def test_erasing_a_person_leaves_no_statistics_of_their_words(tenant, agent, owner):
    run, _ = token_for(tenant, agent, "alice")
    _, alice = run_for(tenant, agent, "alice")
    save(alice, "notes/", "shared")
    with writing_in_another_transaction(run, "something else"):
        # Counted in another shard than the one its delete then takes: rows that cancel out.
        secret = save(alice, "users/{user}/", "my diagnosis is confidential")
    principal = Principal.for_run(run)
    delete_fact(principal, for_run(principal), secret["id"])
    assert _frequency(agent, "diagnosis") == 0
    save(alice, "users/{user}/", "my address is private")

    response = owner.delete("/api/v1/end-users/alice")
    assert response.status_code == 200, response.content
    assert response.json()["verified"] is True, response.json()
    assert not FactTerm.objects.exclude(owner="").exists()  # alice had the only folder
    assert checks.term_differences() == [] and checks.counter_differences() == []


def test_a_fact_is_saved_in_five_round_trips(tenant, agent):
    """The run token; BEGIN (psycopg waits for it); the run held and the fact counted, sent
    together; the rows; COMMIT. One busy agent's writes are bound by CPU, not locks, and
    each round trip costs it on both sides."""
    _, alice = run_for(tenant, agent, "alice")
    save(alice, "notes/", "the first fact")  # the memory's counter rows exist
    with round_trips() as sent:
        save(alice, "notes/", "the second fact")
    assert len(sent) == 5, sent
    assert sent[2].count("Execute") == 2, sent  # two statements, one round trip


def test_a_write_of_an_ended_run_counts_nothing(tenant, agent, ended_run_api):
    """The count is taken in the same round trip as the run's lock, before the run is
    seen to have ended: the transaction undoes it."""
    save(run_for(tenant, agent, "bob")[1], "notes/", "in time")  # the counter rows exist
    response = ended_run_api.post(FACTS, {"path": "notes/", "text": "too late"})
    assert response.status_code == 401 and response.json()["error"]["reason"] == "run_ended"
    assert counted(agent) == 1 and Fact.objects.filter(agent=agent).count() == 1
    assert checks.term_differences() == [] and checks.counter_differences() == []
