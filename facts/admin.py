"""What erasing an end user or deleting an agent takes of facts, for the admin's pages.

Facts themselves are not in the admin: staff read and erase them through the staff API,
which keeps their versions, quotas and search terms consistent.
"""

from __future__ import annotations

from facts.models import Fact
from memoryhub.admin import confirmation_notes
from memoryhub.models import Agent


@confirmation_notes(Agent)
def _agent_facts(agent: Agent) -> list[str]:
    return [f"Facts: {Fact.objects.filter(agent=agent).count()}"]
