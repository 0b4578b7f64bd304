"""/v0/memory: the facts API for runs (x-agentos-run-token)."""

from django.urls import path

import facts.converters  # noqa: F401  (registers <factid:>)
from facts import api

urlpatterns = [
    path("facts", api.FactListView.as_view()),
    path("facts/<factid:fact_id>", api.FactDetailView.as_view()),
    path("facts/<factid:fact_id>/versions", api.FactVersionsView.as_view()),
    path("search", api.SearchView.as_view()),
    path("context", api.ContextView.as_view()),
    path("tools", api.ToolsView.as_view()),
    path("tools/call", api.ToolCallView.as_view()),
]
