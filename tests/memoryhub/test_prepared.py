"""The statements every request runs are prepared once per connection, and can be turned off."""

import pytest
from django.db import DatabaseError, connection, transaction

from memoryhub import prepared
from memoryhub.auth import _RUN_BY_TOKEN, run_for_token
from memoryhub.models import Run
from tests.conftest import Api
from tests.protocol import round_trips

_TWO = ("SELECT %s::int", [2])
_WORDS = ("SELECT unnest(%(words)s::text[])", {"words": ["tea", "cup"]})


def _prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def _run_lookups() -> int:
    marker = "WHERE r.token_hash = $1"
    return sum(marker in statement for statement in _prepared_statements())


def test_run_requests_reuse_one_prepared_run_token_lookup(run_api):
    assert run_api.get("/v0/memory/facts").status_code == 200
    assert _run_lookups() == 1
    for _ in range(3):
        assert run_api.post("/v0/memory/search", {"query": "tea"}).status_code == 200
    assert _run_lookups() == 1


def test_each_connection_plans_a_prepared_statement_once(run_api):
    run_api.post("/v0/memory/facts", {"path": "notes/", "text": "green tea at noon"})
    for _ in range(8):
        assert run_api.post("/v0/memory/search", {"query": "tea"}).status_code == 200
    prepared.fetch_all(*_WORDS)
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements")
        plans = {row[0]: row[1:] for row in cursor.fetchall()}
    lookups = [counts for statement, counts in plans.items() if "r.token_hash = $1" in statement]
    assert lookups == [(9, 0)]  # left to itself, PostgreSQL plans the first five anew
    assert plans["SELECT unnest($1::text[])"] == (1, 0)
    assert all(custom == 0 for _, custom in plans.values()), plans


def test_turned_off_their_plans_are_left_to_the_server(db):
    from django.db import connections

    options = connections.settings["default"]["OPTIONS"]
    fresh_settings = {**connections.settings["default"], "OPTIONS": {**options}}
    fresh_settings["OPTIONS"]["prepare_threshold"] = None
    fresh = connections["default"].__class__(fresh_settings, "fresh")
    try:
        with fresh.cursor() as cursor:
            cursor.execute("SHOW plan_cache_mode")
            assert cursor.fetchone()[0] == "auto"
    finally:
        fresh.close()


def test_the_lookup_leaves_what_the_run_was_given_to_those_who_read_it(running_run):
    run, token = running_run
    received = {"context": "<memory>" + "a kept fact. " * 2000, "tools_offered": [{"n": 1}]}
    Run.objects.filter(pk=run.pk).update(**received)
    found = run_for_token(token)
    assert {"input", "context", "tools_offered"} <= found.get_deferred_fields()
    assert (found.context, found.tools_offered) == tuple(received.values())  # read on access


def test_a_bad_token_is_still_401_through_the_prepared_lookup(db):
    assert Api(run_token="rt_not-a-token").get("/v0/memory/facts").status_code == 401


def test_turned_off_they_run_as_ordinary_queries(run_api, monkeypatch):
    connection.ensure_connection()
    monkeypatch.setattr(connection.connection, "prepare_threshold", None)
    assert run_api.post("/v0/memory/search", {"query": "tea"}).status_code == 200
    assert _run_lookups() == 0
    assert prepared.fetch_one(_RUN_BY_TOKEN, ["no such hash"]) is None


def test_database_errors_come_out_as_djangos(db):
    with pytest.raises(DatabaseError), transaction.atomic():
        prepared.fetch_all("SELECT no_such_column FROM memoryhub_run WHERE id = %s", ["x"])


def test_statements_sent_together_take_one_round_trip_and_keep_their_order(db):
    prepared.fetch_all(*_TWO)  # the test's transaction begun (psycopg waits for a BEGIN)
    with round_trips() as sent:
        rows = prepared.fetch_together(_TWO, _WORDS, _TWO)
    assert rows == [[(2,)], [("tea",), ("cup",)], [(2,)]]
    assert len(sent) == 1 and sent[0].count("Execute") == 3, sent


def test_statements_sent_together_run_as_ordinary_queries_when_turned_off(db, monkeypatch):
    connection.ensure_connection()
    monkeypatch.setattr(connection.connection, "prepare_threshold", None)
    assert prepared.fetch_together(_TWO, _WORDS) == [[(2,)], [("tea",), ("cup",)]]


def test_an_error_among_statements_sent_together_is_djangos_and_writes_nothing(db):
    broken = ("SELECT no_such_column FROM memoryhub_run WHERE id = %s", ["x"])
    written = (
        "INSERT INTO memoryhub_workspace (id, name, created_at) VALUES ('ws_x', 'x', now())",
        [],
    )
    with pytest.raises(DatabaseError), transaction.atomic():
        prepared.fetch_together(_TWO, broken, written)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memoryhub_workspace WHERE id = 'ws_x'")
        assert cursor.fetchone() == (0,)
