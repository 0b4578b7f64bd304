"""The site's URLs (ROOT_URLCONF): the kernel's and each app's, the docs, the admin, the
panel, and ``/``, which sends a visitor to the panel or says what the service is."""

from django.contrib import admin
from django.urls import include, path, reverse_lazy
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from hub import views
from memoryhub.api.health import healthz

# The admin's "View site" leads to the panel, where staff work.
admin.site.site_url = reverse_lazy("panel:index")  # type: ignore[assignment]  # lazy is fine

api_v1 = [
    path("", include("memoryhub.api.urls")),  # first: it registers the mhid converter
    path("", include("facts.staff_urls")),
    path("", include("filememory.urls")),
    path("", include("records.urls")),
    path("", include("threads.urls")),
]

urlpatterns = [
    path("", views.home, name="home"),
    path("api/v1/", include(api_v1)),
    path("v0/memory/", include("facts.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("healthz", healthz),
    path("admin/", admin.site.urls),
    path("panel/", include("panel.urls")),
]
