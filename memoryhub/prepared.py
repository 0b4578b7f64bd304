"""Server-side prepared statements for the few queries nearly every request runs.

Django's psycopg backend binds parameters on the client, so PostgreSQL parses and plans
every statement anew; for a lookup by key, planning costs several times the execution
(the run-token lookup: about 0.6 ms of planning for 0.1 ms of work). These statements
are prepared once per connection (psycopg keeps them, keyed by their text) and run on
the same connection and transaction as the ORM's, with its errors translated the same way.

Only statements whose best plan does not depend on their parameters belong here: each
connection plans them once, for all parameters (``plan_cache_mode`` is
``force_generic_plan``, set by ``memoryhub.apps``; left to itself, PostgreSQL planned the
statements taking an array anew at every execution). With ``DB_PREPARED_STATEMENTS=0``
(``prepare_threshold`` None) they run as ordinary queries, planned each time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from django.db import connection

Params = Sequence[Any] | Mapping[str, Any]


def fetch_all(sql: str, params: Params) -> list[tuple]:
    """Rows of ``sql`` (``%s`` or ``%(name)s`` placeholders), run as a prepared statement."""
    connection.ensure_connection()
    if connection.connection.prepare_threshold is None:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows: list[tuple[Any, ...]] = cursor.fetchall()
            return rows
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(sql, params, prepare=True)
        return cursor.fetchall()


def fetch_one(sql: str, params: Params) -> tuple | None:
    rows = fetch_all(sql, params)
    return rows[0] if rows else None


def fetch_together(*statements: tuple[str, Params]) -> list[list[tuple]]:
    """The rows of each statement, all sent in one round trip (psycopg's pipeline mode; a
    transaction not yet begun takes one more, as psycopg waits for its ``BEGIN``). They
    run in order; an error in one skips those after it, and the transaction is aborted."""
    connection.ensure_connection()
    raw = connection.connection
    if raw.prepare_threshold is None:
        return [fetch_all(sql, params) for sql, params in statements]
    cursors = [psycopg.Cursor(raw) for _ in statements]
    try:
        with connection.wrap_database_errors, raw.pipeline():
            for cursor, (sql, params) in zip(cursors, statements, strict=True):
                cursor.execute(sql, params, prepare=True)
        return [cursor.fetchall() for cursor in cursors]
    finally:
        for cursor in cursors:
            cursor.close()
