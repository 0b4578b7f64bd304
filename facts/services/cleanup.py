"""Removing facts wholesale: an erased end user's folders, an ended eval's memory."""

from __future__ import annotations

from django.db import connection

from facts.models import Fact, FactQuota
from facts.scope import eval_scope_of
from memoryhub.models import EndUser, Run

_ERASE_OWNER_SQL = """
WITH gone AS (
    DELETE FROM facts_fact WHERE workspace_id = %s AND owner_id = %s
    RETURNING agent_id, scope
), counted AS (
    SELECT agent_id, scope, count(*) AS n FROM gone GROUP BY agent_id, scope
)
UPDATE facts_factquota q SET count = q.count - counted.n FROM counted
WHERE q.agent_id = counted.agent_id AND q.scope = counted.scope
"""


def erase_end_user_facts(principal, end_user: EndUser) -> None:
    """Every fact (and version) in the end user's folders, in every agent and eval memory.

    Registered as an end-user eraser: runs inside the erase transaction.
    """
    with connection.cursor() as cursor:
        cursor.execute(_ERASE_OWNER_SQL, [end_user.workspace_id, end_user.id])
    # The erase ended this person's eval root runs without end_run: drop their memories too.
    for root in Run.objects.filter(end_user=end_user, is_eval=True, eval_root__isnull=True):
        drop_eval_memory(root)


def drop_eval_memory(run: Run) -> None:
    """Delete the temporary memory of an eval tree when its root run ends."""
    if not run.is_eval or run.eval_root_id is not None:
        return
    # Child runs of other agents (subagents) kept their eval facts under the same scope.
    scope = eval_scope_of(run)
    Fact.objects.filter(workspace_id=run.workspace_id, scope=scope).delete()
    FactQuota.objects.filter(workspace_id=run.workspace_id, scope=scope).delete()
