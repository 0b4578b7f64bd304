"""The kernel's own REST resources under ``/api/v1/``: agents, end users and memories.

``hub.urls`` includes them beside the apps' resources.
"""

from django.urls import path

from memoryhub import converters  # noqa: F401 - registers the mhid converter
from memoryhub.api import agents, end_users, memories

urlpatterns = [
    path("agents", agents.AgentListView.as_view()),
    path("agents/<mhid:agent_id>", agents.AgentDetailView.as_view()),
    path("end-users", end_users.EndUserListView.as_view()),
    path("end-users/<str:end_user>", end_users.EndUserDetailView.as_view()),
    path("memories", memories.MemoryListView.as_view()),
    path("memories/<mhid:memory_id>", memories.MemoryDetailView.as_view()),
]
