"""What every page of the panel shares: the login, the Content-Security-Policy (set on every
answer under /panel/ by panel.middleware), and the page for a service's refusal.

Every page needs a login; every workspace page resolves the user's seat first (404 for a
workspace the user is no member of). Pages never run a query per row.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse_lazy

from memoryhub.errors import ApiError

# No inline script or style, nothing from elsewhere: memory content shown on a page can
# never run, even if escaping failed somewhere.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def panel_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A page of the panel: login required, a service's refusal shown as a page."""

    @login_required(login_url=reverse_lazy("panel:login"))
    @wraps(view)
    def page(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except ApiError as error:  # a service's refusal the view left to the page
            return refused(request, error, {})

    return page


class LoginView(auth_views.LoginView):
    template_name = "panel/login.html"
    redirect_authenticated_user = True
    next_page = reverse_lazy("panel:index")


class LogoutView(auth_views.LogoutView):
    next_page = reverse_lazy("panel:login")


def refused(request: HttpRequest, error: ApiError, context: dict) -> HttpResponse:
    """A service's refusal as a page: 404 stays 404, anything else shows its message."""
    if error.status == 404:
        raise Http404(error.message)
    return render(request, "panel/refused.html", {**context, "error": error}, status=error.status)
