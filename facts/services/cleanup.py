"""Removing facts wholesale: an erased end user's folders, an ended eval's memory."""

from __future__ import annotations

from django.db import connection

from facts.models import Fact, FactQuota, FactTerm, FactVersion
from facts.scope import eval_scope_of
from memoryhub.models import EndUser, Run

# The counter rows follow in the same statement; it answers how many facts went.
_ERASE_OWNER_SQL = """
WITH gone AS (
    DELETE FROM facts_fact WHERE workspace_id = %s AND owner_id = %s
    RETURNING agent_id, scope
), counted AS (
    SELECT agent_id, scope, count(*) AS n FROM gone GROUP BY agent_id, scope
), quotas AS (
    UPDATE facts_factquota q SET count = q.count - counted.n FROM counted
    WHERE q.agent_id = counted.agent_id AND q.scope = counted.scope
)
SELECT count(*) FROM gone
"""


def erase_end_user_facts(principal, end_user: EndUser) -> dict[str, int]:
    """Every fact (and version) in the end user's folders, in every agent and eval memory.

    Registered as an end-user eraser: runs inside the erase transaction.
    """
    versions = FactVersion.objects.filter(
        workspace_id=end_user.workspace_id, fact__owner_id=end_user.id
    ).count()  # the database's cascade removes them with their facts
    with connection.cursor() as cursor:
        cursor.execute(_ERASE_OWNER_SQL, [end_user.workspace_id, end_user.id])
        facts = cursor.fetchone()[0]
    # The erase ended this person's eval root runs without end_run: drop their memories too.
    for root in Run.objects.filter(end_user=end_user, is_eval=True, eval_root__isnull=True):
        drop_eval_memory(root)
    return {"facts": facts, "versions": versions}


def end_user_fact_leftovers(workspace_id: str, end_user_id: str) -> dict[str, int]:
    """What is left of an erased person's facts: their facts, versions and term statistics."""
    facts = Fact.objects.filter(workspace_id=workspace_id, owner_id=end_user_id)
    return {
        "facts": facts.count(),
        "versions": FactVersion.objects.filter(
            workspace_id=workspace_id, fact__owner_id=end_user_id
        ).count(),
        "term_statistics": FactTerm.objects.filter(owner=end_user_id, facts__gt=0).count(),
    }


def drop_eval_memory(run: Run) -> None:
    """Delete the temporary memory of an eval tree when its root run ends."""
    if not run.is_eval or run.eval_root_id is not None:
        return
    # Child runs of other agents (subagents) kept their eval facts under the same scope.
    scope = eval_scope_of(run)
    Fact.objects.filter(workspace_id=run.workspace_id, scope=scope).delete()
    FactQuota.objects.filter(workspace_id=run.workspace_id, scope=scope).delete()
