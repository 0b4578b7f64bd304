"""Checks of what the facts limit and the search depend on, and repairs of derived data."""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models import Count, Sum

from facts import shards, terms
from facts.models import Fact, FactQuota, FactVersion
from memoryhub.checks import Difference
from memoryhub.models import Agent

# Rows of the term statistics that differ from a recount, both ways.
_TERM_DIFFERENCES_SQL = f"""
WITH expected AS ({terms.EXPECTED_SQL}),
stored AS (SELECT agent_id, scope, owner, term, sum(facts)::int FROM facts_factterm
           GROUP BY agent_id, scope, owner, term HAVING sum(facts) <> 0)
SELECT count(*) FROM (
    (SELECT * FROM expected EXCEPT ALL SELECT * FROM stored)
    UNION ALL (SELECT * FROM stored EXCEPT ALL SELECT * FROM expected)
) d
"""  # noqa: S608 - constant SQL


def _real_counts() -> dict[tuple[str, str], int]:
    rows = Fact.objects.values("agent_id", "scope").annotate(n=Count("id")).order_by()
    return {(row["agent_id"], row["scope"]): row["n"] for row in rows}


def counter_differences() -> list[Difference]:
    """Each memory's fact counter (the limit reads it) against its facts."""
    real = _real_counts()
    found = []
    counters = (
        FactQuota.objects.values("agent_id", "scope")
        .annotate(count=Sum("count"))
        .order_by("agent_id", "scope")
    )
    for counter in counters:
        expected = real.pop((counter["agent_id"], counter["scope"]), 0)
        if counter["count"] != expected:
            name = f"{counter['agent_id']}/{counter['scope'] or 'real'}"
            found.append(Difference("fact_counters", name, counter["count"], expected, True))
    for (agent_id, scope), n in sorted(real.items()):  # facts without a counter row
        found.append(Difference("fact_counters", f"{agent_id}/{scope or 'real'}", None, n, True))
    return found


def repair_counters() -> int:
    """Recount under every shard's row lock, as writers near the limit take them; answers
    counters mended."""
    mended = 0
    for difference in counter_differences():
        agent_id, _, scope = difference.object.partition("/")
        scope = "" if scope == "real" else scope
        workspace_id = Agent.objects.filter(pk=agent_id).values_list("workspace_id").first()
        if workspace_id is None:
            continue  # an orphan: reported, not derived data to mend
        memory = terms.Memory(agent_id, scope)
        with transaction.atomic():
            shards.ensure(memory, workspace_id[0])
            shards.total(memory, hold=True)
            counters = FactQuota.objects.filter(agent_id=agent_id, scope=scope)
            counters.exclude(shard=0).update(count=0)
            counters.filter(shard=0).update(
                count=Fact.objects.filter(agent_id=agent_id, scope=scope).count()
            )
        mended += 1
    return mended


def term_differences() -> list[Difference]:
    with connection.cursor() as cursor:
        cursor.execute(_TERM_DIFFERENCES_SQL)
        rows = cursor.fetchone()[0]
    if not rows:
        return []
    return [Difference("term_statistics", "facts_factterm", f"{rows} rows differ", 0, True)]


def repair_terms() -> None:
    """Recount every term statistic; writers wait on the table lock for that moment."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("LOCK TABLE facts_fact IN SHARE MODE")
        cursor.execute(terms.RECOUNT_SQL)


def orphan_differences() -> list[Difference]:
    """Rows whose agent or fact is gone (their foreign keys do not cascade in Django)."""
    agents = Agent.objects.values("id")
    found = []
    for model in (Fact, FactVersion, FactQuota):
        n = model.objects.exclude(agent_id__in=agents).count()
        if n:
            found.append(Difference("orphans", f"{model._meta.db_table} (agent gone)", n, 0, False))
    n = FactVersion.objects.exclude(fact_id__in=Fact.objects.values("id")).count()
    if n:
        found.append(Difference("orphans", "facts_factversion (fact gone)", n, 0, False))
    return found
