"""Query parameters of the thread list."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from memoryhub.filters import FilterSet, RuleFilter
from memoryhub.rules import Rule
from threads.services.threads import STATUS

TEXT = Rule(str, {"type": "string"})  # any value; one naming nothing matches nothing


class Exact(RuleFilter):
    """An exact match, ``?agent_id=`` (empty) included: it matches nothing."""

    def filter(self, qs: QuerySet, value: Any) -> QuerySet:
        if value is None:
            return qs
        return qs.filter(**{self.field_name: value})


class ThreadFilter(FilterSet):
    agent_id = Exact(TEXT, field_name="agent_id", help_text="Only this agent's threads.")
    end_user = Exact(
        TEXT, field_name="end_user__external_id", help_text="Only this end user's threads."
    )
    status = RuleFilter(STATUS, field_name="status")
