"""/api/v1/agents/{agent_id}/facts: the staff API over an agent's facts (API keys)."""

from django.urls import path

import facts.converters  # noqa: F401  (registers <factid:>)
from facts import staff_api

urlpatterns = [
    path("agents/<mhid:agent_id>/facts", staff_api.StaffFactListView.as_view()),
    path("agents/<mhid:agent_id>/facts/search", staff_api.StaffSearchView.as_view()),
    path(
        "agents/<mhid:agent_id>/facts/<factid:fact_id>",
        staff_api.StaffFactDetailView.as_view(),
    ),
    path(
        "agents/<mhid:agent_id>/facts/<factid:fact_id>/versions",
        staff_api.StaffFactVersionsView.as_view(),
    ),
]
