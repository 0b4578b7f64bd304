"""The panel's Content-Security-Policy on every answer under /panel/: its pages, and also
the 403, 404 and 405 pages Django renders for an exception, a route it does not know or a
refused CSRF token, which no view of the panel sees."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from panel.views.base import CSP


class PanelCspMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.path.startswith(reverse("panel:index")):
            response["Content-Security-Policy"] = CSP
        return response
