"""``/``: the panel for a signed-in user, else a short page saying what the service is (never
Django's list of every URL pattern)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_safe

# The page runs nothing: the panel's stylesheet and icon are all it loads, from here.
HOME_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("panel:index")
    response = render(request, "hub/home.html")
    response["Content-Security-Policy"] = HOME_CSP
    return response
