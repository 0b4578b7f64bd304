"""A memory's shards: its fact counter (``FactQuota``) and term statistics (``FactTerm``)
are split in ``SHARDS`` rows each, so that writers of one memory do not queue on one row.

A writing transaction holds one shard's counter row (``FOR NO KEY UPDATE``) until it
commits and adds its counts to that shard only: the lowest shard no one else holds
(``SKIP LOCKED``), so a memory written by one writer at a time keeps everything in shard 0.
The triggers of migration 0011 take a shard the same way when a statement changes facts in
a transaction that holds none yet; the one held is the transaction-local setting
``facts.shard``. Readers sum over the shards.

The limit stays exact without a lock on the whole memory: a shard's count changes only
under its row lock, so besides the counts a writer reads (committed, and its own shard's
exact one) each other shard has at most one new fact in flight. A writer that could pass
the limit with all of those (within ``SHARDS - 1`` of it) gives up its transaction and
writes again with ``exact``: it takes every shard in order and counts exactly.

A writer's round trips are its cost (one busy agent's writes are bound by CPU): the usual
case, a free shard of a memory whose rows exist, is one statement.
"""

from __future__ import annotations

import secrets

from django.db import connection

from facts.models import FactQuota
from facts.terms import Memory
from memoryhub import prepared
from memoryhub.errors import ApiError
from memoryhub.reasons import Reason

SHARDS = 8  # what migration 0011 gave existing memories; ensure() gives new ones

_FREE_SQL = """
SELECT shard FROM facts_factquota WHERE agent_id = %(agent)s AND scope = %(scope)s
ORDER BY shard FOR NO KEY UPDATE SKIP LOCKED LIMIT 1
"""
_WAIT_SQL = """
SELECT shard FROM facts_factquota
WHERE agent_id = %(agent)s AND scope = %(scope)s AND shard = %(shard)s FOR NO KEY UPDATE
"""
_TOTAL_SQL = """
SELECT coalesce(sum(count), 0) FROM facts_factquota
WHERE agent_id = %(agent)s AND scope = %(scope)s
"""
_ALL_SQL = """
SELECT coalesce(sum(count), 0) FROM (
    SELECT count FROM facts_factquota WHERE agent_id = %(agent)s AND scope = %(scope)s
    ORDER BY shard FOR NO KEY UPDATE) AS held
"""
# The writer's own shard, exact under its lock, and the others as last committed.
_ADD_ONE_SQL = """
WITH mine AS (
    UPDATE facts_factquota SET count = count + 1
    WHERE agent_id = %(agent)s AND scope = %(scope)s AND shard = %(shard)s RETURNING count
)
SELECT (SELECT count FROM mine),
       (SELECT coalesce(sum(count), 0) FROM facts_factquota
        WHERE agent_id = %(agent)s AND scope = %(scope)s AND shard <> %(shard)s)
"""
_ADD_SQL = """
UPDATE facts_factquota SET count = count + %(delta)s
WHERE agent_id = %(agent)s AND scope = %(scope)s AND shard = %(shard)s
"""


# The usual case in one statement: the shard this transaction holds, else the lowest free
# one; one more fact in it; the facts of the others as last committed. No row when no
# shard is free (or the memory has no counter rows yet).
_TAKE_ONE_SQL = """
WITH mine AS (
    UPDATE facts_factquota SET count = count + 1
    WHERE agent_id = %(agent)s AND scope = %(scope)s AND shard = coalesce(
        nullif(current_setting('facts.shard', true), '')::int,
        (SELECT shard FROM facts_factquota WHERE agent_id = %(agent)s AND scope = %(scope)s
         ORDER BY shard FOR NO KEY UPDATE SKIP LOCKED LIMIT 1))
    RETURNING shard, count
)
SELECT count, (SELECT coalesce(sum(count), 0) FROM facts_factquota
               WHERE agent_id = %(agent)s AND scope = %(scope)s AND shard <> mine.shard),
       set_config('facts.shard', shard::text, true)
FROM mine
"""


class NearTheLimit(Exception):
    """The memory may be within ``SHARDS - 1`` facts of its limit: undo the transaction and
    count again with ``exact``."""


def ensure(memory: Memory, workspace_id: str) -> None:
    """Create the memory's counter rows, before its first fact: the triggers lock a counter
    row before the term rows, so concurrent first writers take their locks in one order.

    Only when some are missing: an insert that meets a row another writer has changed waits
    for that writer's transaction to end."""
    if FactQuota.objects.filter(agent_id=memory.agent_id, scope=memory.scope).count() >= SHARDS:
        return
    FactQuota.objects.bulk_create(
        [
            FactQuota(
                workspace_id=workspace_id, agent_id=memory.agent_id, scope=memory.scope, shard=shard
            )
            for shard in range(SHARDS)
        ],
        ignore_conflicts=True,
    )


def held() -> int | None:
    """The shard this transaction holds, if it holds one."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT nullif(current_setting('facts.shard', true), '')::int")
        return cursor.fetchone()[0]


def take(memory: Memory) -> int:
    """Hold a shard of ``memory`` until the transaction ends: the one held already, else the
    lowest free one, else (every shard busy) wait for one."""
    shard = held()
    if shard is not None:
        return shard
    params = {"agent": memory.agent_id, "scope": memory.scope}
    row = prepared.fetch_one(_FREE_SQL, params)
    if row is None:
        shard = secrets.randbelow(SHARDS)
        prepared.fetch_one(_WAIT_SQL, {**params, "shard": shard})
    else:
        shard = row[0]
    use(shard)
    return shard


def taking_one(memory: Memory) -> tuple[str, dict]:
    """The statement ``count_one_more`` starts with (without ``exact``), for a caller that
    sends it together with others (``prepared.fetch_together``) and passes on its rows."""
    return _TAKE_ONE_SQL, _params(memory, 0)


def count_one_more(
    memory: Memory, workspace_id: str, limit: int, *, exact: bool, taken: list[tuple] | None = None
) -> None:
    """Count a new fact, or refuse it when the memory is full (409 memory_full).

    Without ``exact``, raises ``NearTheLimit`` when the count may pass the limit; the caller
    then rolls its transaction (or savepoint) back, which lets the shard go, and calls again
    with ``exact``. That call must come before anything else in the transaction locks the
    memory's shards: it waits for every shard, which must not be held while it waits.
    ``taken``: the rows of ``taking_one``, when the caller has run it already.
    """
    if exact:
        ensure(memory, workspace_id)
        if total(memory, hold=True) >= limit:
            raise ApiError(
                409, f"this memory holds at most {limit} facts", reason=Reason.MEMORY_FULL
            )
        add(memory, 1)
        return
    taken = prepared.fetch_all(*taking_one(memory)) if taken is None else taken
    counts = taken[0] if taken else None
    if counts is None:  # no shard free, or no counter rows yet
        ensure(memory, workspace_id)
        counts = _single(_ADD_ONE_SQL, _params(memory, take(memory)))
    mine, others = counts[:2]
    if mine + others + SHARDS - 1 > limit:
        raise NearTheLimit


def add(memory: Memory, delta: int) -> None:
    """Change the memory's count by ``delta`` in the shard this transaction holds."""
    with connection.cursor() as cursor:
        cursor.execute(_ADD_SQL, {**_params(memory, take(memory)), "delta": delta})


def total(memory: Memory, *, hold: bool = False) -> int:
    """How many facts the memory holds. ``hold``: lock every shard first (in order, so two
    such callers cannot deadlock), which makes the count exact until the transaction ends;
    the transaction then writes in shard 0."""
    if not hold:
        return int(_single(_TOTAL_SQL, _params(memory, 0))[0])
    count = int(_single(_ALL_SQL, _params(memory, 0))[0])
    use(0)
    return count


def _single(sql: str, params: prepared.Params) -> tuple:
    """The one row of a statement that always answers one (scalar subqueries, aggregates)."""
    row = prepared.fetch_one(sql, params)
    assert row is not None
    return row


def use(shard: int) -> None:
    """Write this transaction's counts in ``shard``, whose row it must hold or wait for."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('facts.shard', %s, true)", [str(shard)])


def _params(memory: Memory, shard: int) -> dict:
    return {"agent": memory.agent_id, "scope": memory.scope, "shard": shard}
