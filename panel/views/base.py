"""What every page of the panel shares: the login, the Content-Security-Policy (set on every
answer under /panel/ by panel.middleware), and the page for a service's refusal.

Every page needs a login; every workspace page resolves the user's seat first (404 for a
workspace the user is no member of). Pages never run a query per row.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse_lazy

from memoryhub.errors import ApiError
from memoryhub.middleware import client_address
from panel.services import logins

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


if TYPE_CHECKING:
    _LoginForm = AuthenticationForm  # what the mixin is mixed into, for the type checker
else:
    _LoginForm = object


class ThrottledLogin(_LoginForm):
    """A login form whose attempts count (panel.services.logins): past the limits it refuses
    with the reason, before it checks the password."""

    refusal: ApiError | None = None

    def clean(self) -> dict:
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if username is None or not password:
            return super().clean()  # nothing to check, nothing to count
        assert self.request is not None  # the login views pass it, the admin's too
        try:
            attempt = logins.begin(username, client_address(self.request))
        except ApiError as error:
            self.refusal = error
            raise ValidationError(error.message, code="throttled") from None
        cleaned = super().clean()  # a wrong password raises: the attempt stays counted
        logins.succeeded(attempt)
        return cleaned


class LoginForm(ThrottledLogin, AuthenticationForm):
    pass


class AdminLoginForm(ThrottledLogin, AdminAuthenticationForm):
    """The admin's login (panel/admin.py sets it): another door to the same accounts."""


class LoginView(auth_views.LoginView):
    template_name = "panel/login.html"
    authentication_form = LoginForm
    redirect_authenticated_user = True
    # Django takes a lazy URL here (django-stubs says str), as for LogoutView below.
    next_page = reverse_lazy("panel:index")  # type: ignore[assignment]

    # This view's form is always a LoginForm (authentication_form).
    def form_invalid(self, form: LoginForm) -> HttpResponse:  # type: ignore[override]
        response = super().form_invalid(form)
        if form.refusal is not None:  # 429 and Retry-After, with the form and its reason
            response.status_code = form.refusal.status
            for name, value in form.refusal.headers.items():
                response[name] = value
        return response


class LogoutView(auth_views.LogoutView):
    next_page = reverse_lazy("panel:login")  # type: ignore[assignment]


def refused(
    request: HttpRequest, error: ApiError, context: dict, template: str = "panel/refused.html"
) -> HttpResponse:
    """A service's refusal as a page, at its status: ``template`` (the form that was sent,
    shown again with the message) or the panel's refusal page. A 404 (what the page is
    about is gone, or never was) is the panel's 404 page whatever the template."""
    if error.status == 404:
        raise Http404(error.message)
    return render(request, template, {**context, "error": error}, status=error.status)
