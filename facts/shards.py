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
the limit with all of those (within ``SHARDS - 1`` of it) undoes its attempt, takes every
shard in order and counts exactly.
"""

from __future__ import annotations

import secrets

from django.db import connection, transaction

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


class _NearTheLimit(Exception):
    pass


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


def count_one_more(memory: Memory, limit: int) -> None:
    """Count a new fact, or refuse it when the memory is full (409 memory_full).

    Call it before anything else in the transaction locks the memory's shards: near the
    limit it waits for every shard, which must not be held while it waits.
    """
    try:
        with transaction.atomic():  # a savepoint: undoing it lets the shard go too
            shard = take(memory)
            mine, others = prepared.fetch_one(_ADD_ONE_SQL, _params(memory, shard))
            if mine + others + SHARDS - 1 > limit:
                raise _NearTheLimit
            return
    except _NearTheLimit:
        pass
    if total(memory, hold=True) >= limit:
        raise ApiError(409, f"this memory holds at most {limit} facts", reason=Reason.MEMORY_FULL)
    add(memory, 1)


def add(memory: Memory, delta: int) -> None:
    """Change the memory's count by ``delta`` in the shard this transaction holds."""
    with connection.cursor() as cursor:
        cursor.execute(_ADD_SQL, {**_params(memory, take(memory)), "delta": delta})


def total(memory: Memory, *, hold: bool = False) -> int:
    """How many facts the memory holds. ``hold``: lock every shard first (in order, so two
    such callers cannot deadlock), which makes the count exact until the transaction ends;
    the transaction then writes in shard 0."""
    if not hold:
        return int(prepared.fetch_one(_TOTAL_SQL, _params(memory, 0))[0])
    count = int(prepared.fetch_one(_ALL_SQL, _params(memory, 0))[0])
    use(0)
    return count


def use(shard: int) -> None:
    """Write this transaction's counts in ``shard``, whose row it must hold or wait for."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('facts.shard', %s, true)", [str(shard)])


def _params(memory: Memory, shard: int) -> dict:
    return {"agent": memory.agent_id, "scope": memory.scope, "shard": shard}
