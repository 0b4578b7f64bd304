"""Removing facts wholesale: an erased end user's folders, an ended eval's memory."""

from __future__ import annotations

from django.db import connection

from facts import shards
from facts.models import Fact, FactQuota, FactTerm, FactVersion
from facts.scope import eval_scope_of
from memoryhub.models import EndUser, Run
from memoryhub.principals import Principal

# The counter rows follow in the same statement (shard 0, which the statement's trigger then
# holds too); it answers how many facts went.
_ERASE_OWNER_SQL = """
WITH gone AS (
    DELETE FROM facts_fact WHERE workspace_id = %(workspace)s AND owner_id = %(owner)s
    RETURNING agent_id, scope
), counted AS (
    SELECT agent_id, scope, count(*) AS n FROM gone GROUP BY agent_id, scope
), quotas AS (
    UPDATE facts_factquota q SET count = q.count - counted.n FROM counted
    WHERE q.agent_id = counted.agent_id AND q.scope = counted.scope AND q.shard = 0
)
SELECT count(*) FROM gone
"""
# Their statistics summed to zero in every shard; rows of a shard can be left that cancel
# out (+1 in one, -1 in another) and still name their words: they go too.
_ERASE_OWNER_TERMS_SQL = """
DELETE FROM facts_factterm t USING memoryhub_agent a
WHERE a.workspace_id = %(workspace)s AND t.agent_id = a.id AND t.owner = %(owner)s
"""


def erase_end_user_facts(principal: Principal, end_user: EndUser) -> dict[str, int]:
    """Every fact (and version) in the end user's folders, in every agent and eval memory.

    Registered as an end-user eraser: runs inside the erase transaction.
    """
    versions = FactVersion.objects.filter(
        workspace_id=end_user.workspace_id, fact__owner_id=end_user.id
    ).count()  # the database's cascade removes them with their facts
    params = {"workspace": end_user.workspace_id, "owner": end_user.id}
    with connection.cursor() as cursor:
        shards.use(0)
        cursor.execute(_ERASE_OWNER_SQL, params)
        facts = cursor.fetchone()[0]
        cursor.execute(_ERASE_OWNER_TERMS_SQL, params)
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
        "term_statistics": FactTerm.objects.filter(
            agent__workspace_id=workspace_id, owner=end_user_id
        ).count(),
    }


def drop_eval_memory(run: Run) -> None:
    """Delete the temporary memory of an eval tree when its root run ends."""
    if not run.is_eval or run.eval_root_id is not None:
        return
    # Child runs of other agents (subagents) kept their eval facts under the same scope.
    scope = eval_scope_of(run)
    Fact.objects.filter(workspace_id=run.workspace_id, scope=scope).delete()
    FactQuota.objects.filter(workspace_id=run.workspace_id, scope=scope).delete()
