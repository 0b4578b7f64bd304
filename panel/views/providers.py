"""Memory providers in the panel: list, create, edit, enable or disable, and test them with
the API's services. A credential is never shown: not in a list, a form or an error page.

Any member sees the list (the API's read). Changing and testing a provider is the API's
write, and in the panel the admin's: a provider holds the workspace's backend keys and
decides where every record memory's records go, which is more than correcting memory.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from memoryhub.errors import ApiError
from memoryhub.etags import etag_for
from memoryhub.models import MemoryProvider
from memoryhub.rules import parse
from panel.models import Role
from panel.services.access import Seat, seat
from panel.services.providers import form_etag, memories_using, with_memory_counts
from panel.views.base import panel_page, refused
from records.api import provider_json
from records.serializers import MemoryProviderChangeSerializer, MemoryProviderCreateSerializer
from records.services import providers

PER_PAGE = 50
MANAGE = Role.ADMIN  # who creates, edits, enables, disables and tests providers
SECRETS = ("api_key", "admin_api_key")  # the credential's keys: never echoed into a page


def _number(raw: str) -> object:
    """A form's number as a float when it reads as one; else as sent, for the rule to refuse."""
    try:
        return float(raw)
    except ValueError:
        return raw


def _config(post: QueryDict) -> dict:
    """The config fields the form filled in; blank ones are left out (the type's default)."""
    config: dict = {}
    if post.get("base_url", "").strip():
        config["base_url"] = post["base_url"]
    for name in ("connect_timeout", "read_timeout"):
        raw = post.get(name, "").strip()
        if raw:
            config[name] = _number(raw)
    return config


def _typed_credential(post: QueryDict) -> dict | None:
    """The keys typed in; None when none was (blank means "none" or "keep")."""
    typed = {key: post[key] for key in SECRETS if post.get(key, "").strip()}
    return typed or None


def _form(post: QueryDict) -> dict:
    """What a form shows again after a refusal: everything but the keys typed in."""
    return {name: value for name, value in post.items() if name not in SECRETS}


def _list_context(request: HttpRequest, here: Seat) -> dict:
    rows = with_memory_counts(providers.list_providers(here.principal))
    page = Paginator(rows, PER_PAGE).get_page(request.GET.get("page"))
    # The API's view of each (its ETag, whether a credential is stored), never the credential.
    listed = [(p, provider_json(p)) for p in page.object_list]
    return {"seat": here, "page": page, "providers": listed, "can_manage": here.can(MANAGE)}


@panel_page
def provider_list(request: HttpRequest, workspace_id: str) -> HttpResponse:
    here = seat(request.user, workspace_id)
    return render(request, "panel/providers/list.html", _list_context(request, here))


@panel_page
def provider_new(request: HttpRequest, workspace_id: str) -> HttpResponse:
    here = seat(request.user, workspace_id)
    here.require(MANAGE)
    context = {"seat": here, "types": MemoryProvider.Type.choices, "form": _form(request.POST)}
    if request.method != "POST":
        context["form"] = {"enabled": "on"}
        return render(request, "panel/providers/form.html", context)
    body = {
        "type": request.POST.get("type", ""),
        "name": request.POST.get("name", ""),
        "config": _config(request.POST),
        "enabled": request.POST.get("enabled") == "on",
    }
    if credential := _typed_credential(request.POST):
        body["credential"] = credential
    try:
        provider = providers.add_provider(
            here.principal, **parse(MemoryProviderCreateSerializer, body)
        )
    except ApiError as error:
        return refused(request, error, context, "panel/providers/form.html")
    messages.success(request, f"Added the provider {provider.name}. Test it to check its key.")
    return redirect("panel:providers", workspace_id=workspace_id)


def _current(provider: MemoryProvider) -> dict:
    """The edit form filled in with the provider as stored, at its ETag."""
    return {"etag": etag_for(provider.version), "name": provider.name, **provider.config}


def _changes(provider: MemoryProvider, post: QueryDict) -> dict:
    """The fields the form changed, checked by the API's rules; a typed key replaces the
    stored one, a blank one keeps it (the service's ``credential_keys``, merged under the
    row's lock), except on a new address: there the service refuses a move without keys,
    and only the typed keys go along."""
    body: dict = {"name": post.get("name", ""), "config": _config(post)}
    typed = _typed_credential(post)
    if typed:
        body["credential"] = typed
    values = parse(MemoryProviderChangeSerializer, body)
    if values["name"] == provider.name:
        del values["name"]
    if values["config"] == provider.config:
        del values["config"]
    if typed:
        values["credential_keys"] = values.pop("credential")
    return values


def _saved(changes: dict) -> str:
    """The changed fields' names, as the API names them."""
    names = ("credential" if name == "credential_keys" else name for name in changes)
    return ", ".join(sorted(names))


@panel_page
def provider_edit(request: HttpRequest, workspace_id: str, provider_id: str) -> HttpResponse:
    """Name, address, timeouts and keys; the form carries the ETag it was read at."""
    here = seat(request.user, workspace_id)
    here.require(MANAGE)
    provider = providers.get_provider(here.principal, provider_id)
    context = {
        "seat": here,
        "provider": provider,
        "has_credential": provider_json(provider)["has_credential"],
        "secrets": sorted(providers.CREDENTIAL_FIELDS[provider.type]),
        "form": _form(request.POST) or _current(provider),
    }
    if request.method != "POST":
        return render(request, "panel/providers/form.html", context)
    try:
        changes = _changes(provider, request.POST)
        if changes:
            provider = providers.update_provider(
                here.principal, provider_id, form_etag(request.POST.get("etag", "")), **changes
            )
    except ApiError as error:
        if error.status == 412:  # changed meanwhile: show it as it is now, to decide again
            context["form"] = _current(providers.get_provider(here.principal, provider_id))
        return refused(request, error, context, "panel/providers/form.html")
    if changes:
        messages.success(request, f"Saved {provider.name}: {_saved(changes)}.")
    else:
        messages.success(request, f"Nothing to save: {provider.name} is as it was.")
    return redirect("panel:providers", workspace_id=workspace_id)


@panel_page
def provider_enabled(request: HttpRequest, workspace_id: str, provider_id: str) -> HttpResponse:
    """Enable at once, or disable after a page saying which memories stop working."""
    here = seat(request.user, workspace_id)
    here.require(MANAGE)
    provider = providers.get_provider(here.principal, provider_id)
    context = {
        "seat": here,
        "provider": provider,
        "etag": etag_for(provider.version),
        "memories": memories_using(provider),
    }
    if request.method != "POST":
        return render(request, "panel/providers/enabled.html", context)
    enabled = request.POST.get("enabled") == "true"
    try:
        providers.update_provider(
            here.principal, provider_id, form_etag(request.POST.get("etag", "")), enabled=enabled
        )
    except ApiError as error:
        return refused(request, error, context, "panel/providers/enabled.html")
    messages.success(request, f"{'Enabled' if enabled else 'Disabled'} {provider.name}.")
    return redirect("panel:providers", workspace_id=workspace_id)


@require_POST
@panel_page
def provider_test(request: HttpRequest, workspace_id: str, provider_id: str) -> HttpResponse:
    """The API's test: one listing of an unused namespace; a failure shows on the list."""
    here = seat(request.user, workspace_id)
    here.require(MANAGE)
    provider = providers.get_provider(here.principal, provider_id)
    try:
        providers.test_provider(here.principal, provider_id)
    except ApiError as error:
        context = {**_list_context(request, here), "tested": provider}
        return refused(request, error, context, "panel/providers/list.html")
    messages.success(request, f"{provider.name} passed its test: the backend took its key.")
    return redirect("panel:providers", workspace_id=workspace_id)
