from django.contrib import admin
from django.urls import include, path, register_converter
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from memoryhub.api import agents, end_users, memories
from memoryhub.api.health import healthz
from memoryhub.converters import PublicIdConverter

register_converter(PublicIdConverter, "mhid")

api_v1 = [
    path("agents", agents.AgentListView.as_view()),
    path("agents/<mhid:agent_id>", agents.AgentDetailView.as_view()),
    path("end-users", end_users.EndUserListView.as_view()),
    path("end-users/<str:end_user>", end_users.EndUserDetailView.as_view()),
    path("memories", memories.MemoryListView.as_view()),
    path("memories/<mhid:memory_id>", memories.MemoryDetailView.as_view()),
    path("", include("facts.staff_urls")),
    path("", include("filememory.urls")),
    path("", include("records.urls")),
    path("", include("threads.urls")),
]

urlpatterns = [
    path("api/v1/", include(api_v1)),
    path("v0/memory/", include("facts.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("healthz", healthz),
    path("admin/", admin.site.urls),
    path("panel/", include("panel.urls")),
]
