"""What every answer under /panel/ gets, before any view of the panel runs or when none does.

The Content-Security-Policy: on the panel's pages, and also on the 403, 404 and 405 pages
Django renders for an exception, a route it does not know or a refused CSRF token.

No NUL character in the path, the query or a posted form: PostgreSQL cannot hold one, so a
lookup with it fails (a 500) and a value with it would bypass the API's own rule (its JSON
parser refuses NUL before any service sees it). The panel refuses them as the API does.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import get_script_prefix, reverse

from memoryhub.errors import ApiError
from panel.views.base import CSP


@cache
def _panel_root() -> str:
    """The panel's path below the script prefix, compared with each request's path_info:
    reversed once, not on every request of the API."""
    return "/" + reverse("panel:index").removeprefix(get_script_prefix())


def _has_nul(request: HttpRequest) -> bool:
    if "\x00" in request.path or "%00" in request.META.get("QUERY_STRING", ""):
        return True
    if request.method != "POST":
        return False
    return any("\x00" in key + "".join(values) for key, values in request.POST.lists())


class PanelMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path_info.startswith(_panel_root()):
            return self.get_response(request)
        if _has_nul(request):
            error = ApiError(400, "NUL characters are not allowed")
            response = render(request, "panel/refused.html", {"error": error}, status=400)
        else:
            response = self.get_response(request)
        response["Content-Security-Policy"] = CSP
        return response
