"""What erasing an end user or deleting an agent takes of facts, for the admin's pages.

Facts themselves are not in the admin: staff read and erase them through the staff API,
which keeps their versions, quotas and search terms consistent.
"""

from __future__ import annotations

from facts.models import Fact, FactVersion
from memoryhub.admin import confirmation_notes
from memoryhub.models import Agent, EndUser


@confirmation_notes(EndUser)
def _private_facts(end_user: EndUser) -> list[str]:
    facts = Fact.objects.filter(workspace_id=end_user.workspace_id, owner_id=end_user.id)
    versions = FactVersion.objects.filter(
        workspace_id=end_user.workspace_id, fact__owner_id=end_user.id
    )
    return [f"Private facts: {facts.count()}", f"Fact versions: {versions.count()}"]


@confirmation_notes(Agent)
def _agent_facts(agent: Agent) -> list[str]:
    return [f"Facts: {Fact.objects.filter(agent=agent).count()}"]
