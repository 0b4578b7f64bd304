"""The Django admin: a staff tool that changes nothing behind the services' back.

Every change with a rule goes through the service that owns it, acting as the staff user
(``Principal.for_staff``), so it is checked and audited like an API call; what a service
refuses shows as an error message. Derived and audit data are read-only, and where no
service exists for a delete (workspaces, API keys, threads, runs), the admin has none.

``memoryhub`` imports no app, so the apps' own admin modules register the admins of shared
models whose rules live in them (threads and runs: ``threads.admin``; providers:
``records.admin``) and add what a delete takes to its confirmation page
(:func:`confirmation_notes`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.options import csrf_protect_m
from django.contrib.admin.utils import unquote
from django.contrib.auth import get_permission_codename
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import JSONField, Model
from django.forms.fields import InvalidJSONInput
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse

from memoryhub import models
from memoryhub.api.serializers import AgentChange, AgentCreate, MemoryChange, MemoryCreate
from memoryhub.errors import ApiError
from memoryhub.parsers import DEPTH_RULE, too_deep
from memoryhub.principals import Principal
from memoryhub.rules import parse
from memoryhub.services import agents, end_users, memories, workspaces
from memoryhub.services.end_users import RECEIPT_LABELS

if TYPE_CHECKING:
    from django.contrib.admin.models import LogEntry

Notes = Callable[[Any], list[str]]
_notes: dict[type[Model], list[Notes]] = {}


def confirmation_notes(model: type[Model]) -> Callable[[Notes], Notes]:
    """Decorator: the function's lines (``obj -> [str]``) join ``model``'s delete page."""

    def register(fn: Notes) -> Notes:
        _notes.setdefault(model, []).append(fn)
        return fn

    return register


def staff_principal(request: HttpRequest, workspace: models.Workspace) -> Principal:
    """The staff user acting in ``workspace``: services check and audit them as such."""
    return Principal.for_staff(workspace, request.user.get_username())


def adopt(obj: Model, saved: Model) -> None:
    """Make the admin's instance (which it logs and redirects with) the one a service saved."""
    obj.__dict__.update(saved.__dict__)


def changed_fields(form, empty: dict[str, Any]) -> dict[str, Any]:
    """The fields staff changed; an emptied optional field means its empty value."""
    data = {name: form.cleaned_data[name] for name in form.changed_data}
    return {k: empty[k] if v is None and k in empty else v for k, v in data.items()}


def _too_deep(text: object) -> bool:
    return isinstance(text, str) and too_deep(text.encode("utf-8", "surrogatepass"))


class BoundedJSONFormField(forms.JSONField):
    """A JSON field of the admin's forms: a text nested deeper than the API takes is a form
    error, where Django's ``json.loads`` would end in a RecursionError (a 500)."""

    def to_python(self, value: Any) -> Any:
        if _too_deep(value):
            raise ValidationError(DEPTH_RULE)
        return super().to_python(value)

    def bound_data(self, data: Any, initial: Any) -> Any:
        # The refused form shows the text again as it was sent, unparsed.
        return InvalidJSONInput(data) if _too_deep(data) else super().bound_data(data, initial)


class ServiceAdmin(admin.ModelAdmin):
    """A ModelAdmin whose changes and deletes go through services, as the staff user."""

    formfield_overrides = {JSONField: {"form_class": BoundedJSONFormField}}

    view_only = False  # no add, no change: actions only
    fixed_fields: tuple[str, ...] = ()  # read-only once the object exists
    add_fields: tuple[str, ...] | None = None  # the form of a new object
    optional_fields: dict[str, Any] = {}  # JSON lists and objects that may be left empty
    delete_verb = "Delete"  # what staff read on the delete pages
    delete_question = "These will be deleted, and everything listed with them:"

    # -- permissions -----------------------------------------------------------------------

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not self.view_only and super().has_add_permission(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return not self.view_only and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Without a service, Django's cascade would skip every rule: no delete at all.
        has_service = type(self).service_delete is not ServiceAdmin.service_delete
        return has_service and super().has_delete_permission(request, obj)

    def has_model_permission(self, request: HttpRequest, action: str) -> bool:
        """Django's model permission ``action`` (for actions of view-only admins)."""
        codename = get_permission_codename(action, self.opts)
        return request.user.has_perm(f"{self.opts.app_label}.{codename}")

    # -- forms -----------------------------------------------------------------------------

    def get_fields(self, request: HttpRequest, obj: Any = None):
        if obj is None and self.add_fields is not None:
            return self.add_fields
        return super().get_fields(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None):
        fixed = self.fixed_fields if obj is not None else ()
        return (*self.readonly_fields, *fixed)

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs):
        form = super().get_form(request, obj, change, **kwargs)
        for name in self.optional_fields:
            if name in form.base_fields:
                form.base_fields[name].required = False
        return form

    def principal(self, request: HttpRequest, obj: Any) -> Principal:
        return staff_principal(request, obj.workspace)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ApiError as error:
            # The form's transaction rolled back; show the service's reason, never a 500.
            self.message_user(request, error.message, messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    # -- confirmations ---------------------------------------------------------------------

    def confirm(
        self,
        request: HttpRequest,
        objects: Iterable[Any],
        *,
        title: str,
        question: str,
        notes: Notes | None = None,
        action: str | None = None,
        button: str = "Yes, I’m sure",
    ) -> TemplateResponse:
        """A page that lists what will happen to each object, and posts ``post=yes``."""
        context = {
            **self.admin_site.each_context(request),
            "title": title,
            "question": question,
            "items": [(obj, notes(obj) if notes else []) for obj in objects],
            "action": action,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "button": button,
            "opts": self.opts,
            "app_label": self.opts.app_label,
        }
        return TemplateResponse(request, "admin/memoryhub/confirm.html", context)

    def each(
        self,
        request: HttpRequest,
        objects: Iterable[Any],
        perform: Callable[[Any], Any],
        done: str | None = None,
    ) -> int:
        """``perform`` each object in its own transaction; refusals become error messages."""
        count = 0
        for obj in objects:
            try:
                with transaction.atomic():
                    perform(obj)
            except ApiError as error:
                self.message_user(request, f"{obj}: {error.message}", messages.ERROR)
            else:
                count += 1
        if count and done:
            self.message_user(request, done.format(count=count), messages.SUCCESS)
        return count

    def confirmed_action(
        self,
        request: HttpRequest,
        queryset: Iterable[Any],
        *,
        name: str,
        title: str,
        question: str,
        perform: Callable[[Any], Any],
        done: str,
        notes: Notes | None = None,
    ) -> HttpResponse | None:
        """An admin action that first shows a confirmation page, then ``perform``s."""
        if request.POST.get("post") == "yes":
            self.each(request, queryset, perform, done)
            return None
        return self.confirm(
            request, queryset, title=title, question=question, notes=notes, action=name
        )

    # -- deleting through the service ------------------------------------------------------

    def service_delete(self, request: HttpRequest, obj: Any) -> None:
        """Subclasses: delete ``obj`` through its service (raises ApiError)."""
        raise NotImplementedError

    def delete_notes(self, obj: Any) -> list[str]:
        """What else goes with ``obj``: this admin's lines and the apps' registered ones."""
        return [line for fn in _notes.get(self.model, []) for line in fn(obj)]

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        self.service_delete(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset) -> None:
        for obj in queryset:
            self.service_delete(request, obj)

    def _delete(self, request: HttpRequest, obj: Any) -> None:
        # A list, as Django's own delete view passes (django-stubs asks for a QuerySet).
        self.log_deletions(request, [obj])  # type: ignore[arg-type]
        self.delete_model(request, obj)

    @csrf_protect_m
    def delete_view(self, request, object_id, extra_context=None):
        obj = self.get_object(request, unquote(object_id))
        if not self.has_delete_permission(request, obj):
            raise PermissionDenied
        if obj is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if request.method == "POST" and request.POST.get("post") == "yes":
            display, pk = str(obj), obj.pk
            if self.each(request, [obj], lambda o: self._delete(request, o)):
                return self.response_delete(request, display, pk)
            return HttpResponseRedirect(request.get_full_path())
        return self.confirm(
            request,
            [obj],
            title=f"{self.delete_verb} {self.opts.verbose_name}",
            question=self.delete_question,
            notes=self.delete_notes,
        )

    @admin.action(permissions=["delete"], description="Delete selected %(verbose_name_plural)s")
    def delete_selected(self, request: HttpRequest, queryset) -> HttpResponse | None:
        """Replaces Django's bulk delete: each object through the service, confirmed first."""
        return self.confirmed_action(
            request,
            queryset,
            name="delete_selected",
            title=f"{self.delete_verb} {self.opts.verbose_name_plural}",
            question=self.delete_question,
            perform=lambda obj: self._delete(request, obj),
            done=f"{self.delete_verb}d {{count}} {self.opts.verbose_name_plural}.",
            notes=self.delete_notes,
        )

    actions = ("delete_selected",)

    def get_actions(self, request: HttpRequest) -> dict:
        actions = super().get_actions(request)
        if "delete_selected" in actions:  # ours, never Django's cascade, whatever is listed
            actions["delete_selected"] = self.get_action("delete_selected")
        return actions


@admin.register(models.Workspace)
class WorkspaceAdmin(ServiceAdmin):
    # No delete: no service purges a workspace's record memories from their backends yet.
    list_display = ("name", "id", "created_at")
    search_fields = ("id", "name")
    ordering = ("name",)
    add_fields = ("name",)
    fields = ("id", "name", "created_at")
    readonly_fields = ("id", "created_at")

    def save_model(self, request, obj, form, change) -> None:
        if change:
            obj.save(update_fields=form.changed_data)
        else:
            adopt(obj, workspaces.create_workspace(obj.name))


@admin.register(models.ApiKey)
class ApiKeyAdmin(ServiceAdmin):
    # No delete: a revoked key stays, so the audit can still name it.
    list_display = (
        "id",
        "name",
        "workspace",
        "permission",
        "created_at",
        "last_used_at",
        "revoked_at",
    )
    list_filter = ("permission", ("revoked_at", admin.EmptyFieldListFilter))
    search_fields = ("id", "name", "workspace__id", "workspace__name")
    list_select_related = ("workspace",)
    ordering = ("-created_at",)
    add_fields = ("workspace", "name", "permission")
    fields = (  # never the secret's hash
        "id",
        "workspace",
        "name",
        "permission",
        "created_at",
        "last_used_at",
        "revoked_at",
    )
    readonly_fields = ("id", "created_at", "last_used_at", "revoked_at")
    fixed_fields = ("workspace", "permission")
    actions = ("revoke_keys",)

    def save_model(self, request, obj, form, change) -> None:
        if change:
            obj.save(update_fields=form.changed_data)  # the name: no rule beyond its length
            return
        key, secret = workspaces.create_api_key(
            obj.workspace, obj.permission, obj.name, principal=self.principal(request, obj)
        )
        adopt(obj, key)
        obj._secret = secret  # for response_add only; never stored, logged or put in a message

    def response_add(self, request, obj, post_url_continue=None) -> HttpResponse:
        secret = getattr(obj, "_secret", None)
        if secret is None:
            return super().response_add(request, obj, post_url_continue)
        context = {
            **self.admin_site.each_context(request),
            "title": "API key created",
            "opts": self.opts,
            "key": obj,
            "secret": secret,
        }
        response = TemplateResponse(request, "admin/memoryhub/apikey/secret.html", context)
        response["Cache-Control"] = "no-store"  # the secret's only page: keep it out of caches
        return response

    @admin.action(permissions=["change"], description="Revoke selected API keys")
    def revoke_keys(self, request: HttpRequest, queryset) -> HttpResponse | None:
        return self.confirmed_action(
            request,
            queryset.select_related("workspace"),
            name="revoke_keys",
            title="Revoke API keys",
            question="These keys stop working at once; a revoked key cannot be restored.",
            perform=lambda key: workspaces.revoke_api_key(key, self.principal(request, key)),
            done="Revoked {count} API keys.",
            notes=lambda key: [
                f"Workspace: {key.workspace}",
                f"Last used: {key.last_used_at or 'never'}",
                *(["Already revoked"] if key.revoked_at else []),
            ],
        )


@admin.register(models.Agent)
class AgentAdmin(ServiceAdmin):
    list_display = ("name", "id", "workspace", "version", "created_at", "updated_at")
    search_fields = ("id", "name", "workspace__id", "workspace__name")
    list_select_related = ("workspace",)
    ordering = ("-created_at",)
    add_fields = ("workspace", "name", "toolset", "memory_mounts")
    fields = (
        "id",
        "workspace",
        "name",
        "toolset",
        "memory_mounts",
        "version",
        "created_at",
        "updated_at",
    )
    readonly_fields = ("id", "version", "created_at", "updated_at")
    fixed_fields = ("workspace",)
    optional_fields = {"toolset": None, "memory_mounts": []}
    delete_question = "These agents will be deleted, with their threads, runs and facts:"

    def save_model(self, request, obj, form, change) -> None:
        if not change:
            data = {k: form.cleaned_data.get(k) for k in ("name", "toolset", "memory_mounts")}
            adopt(obj, agents.create(self.principal(request, obj), **parse(AgentCreate, data)))
        elif data := changed_fields(form, self.optional_fields):
            changes = parse(AgentChange, data)
            adopt(obj, agents.update(self.principal(request, obj), obj.pk, "*", **changes))

    def service_delete(self, request, obj) -> None:
        agents.delete_agent(self.principal(request, obj), obj.pk, "*")

    def delete_notes(self, agent) -> list[str]:
        return [
            f"Threads: {agent.threads.count()}",
            f"Runs: {agent.runs.count()}",
            *super().delete_notes(agent),
        ]


@admin.register(models.EndUser)
class EndUserAdmin(ServiceAdmin):
    """People are created by threads and only erased here, never edited."""

    view_only = True
    delete_verb = "Erase"
    list_display = ("external_id", "id", "workspace", "created_at")
    search_fields = ("external_id", "id")
    list_select_related = ("workspace",)
    ordering = ("-created_at",)
    delete_question = (
        "Erasing removes everything kept about these people: their private facts with every "
        "version, what they said to agents (run inputs, tool-call answers); their running "
        "runs end and their threads are archived. This cannot be undone."
    )

    def service_delete(self, request, obj) -> None:
        end_users.erase_end_user(self.principal(request, obj), obj.external_id)

    def log_deletions(self, request: HttpRequest, queryset) -> list[LogEntry]:
        # The admin's own log names a person by the internal id, never by the external one
        # (often an email address), which erasure removes from everywhere else.
        from django.contrib.admin.models import DELETION, LogEntry
        from django.contrib.contenttypes.models import ContentType

        content_type = ContentType.objects.get_for_model(self.model)
        user_id = request.user.pk
        assert user_id is not None  # the admin serves only signed-in staff
        return LogEntry.objects.bulk_create(
            LogEntry(
                user_id=user_id,
                content_type_id=content_type.id,
                object_id=obj.pk,
                object_repr=obj.pk,
                action_flag=DELETION,
                change_message="Erased",
            )
            for obj in queryset
        )

    def delete_notes(self, end_user) -> list[str]:
        """The erase itself, previewed (rolled back): exactly what the receipt will say."""
        principal = Principal.system(end_user.workspace)
        going = end_users.preview_erasure(principal, end_user.external_id)
        return [f"{label}: {getattr(going, key)}" for key, label in RECEIPT_LABELS.items()]


@admin.register(models.Memory)
class MemoryAdmin(ServiceAdmin):
    list_display = (
        "name",
        "id",
        "kind",
        "type",
        "workspace",
        "file_count",
        "content_bytes",
        "created_at",
    )
    list_filter = ("kind", "type")
    search_fields = ("id", "name", "namespace", "workspace__id", "workspace__name")
    list_select_related = ("workspace",)
    ordering = ("-created_at",)
    editable = ("name", "description", "labels", "guide", "always_load")
    add_fields = ("workspace", "type", *editable, "provider", "namespace")
    fields = (
        "id",
        "workspace",
        "kind",
        "type",
        *editable,
        "provider",
        "namespace",
        "file_count",
        "content_bytes",
        "history_bytes",
        "version",
        "created_at",
        "updated_at",
    )
    # Counters are what the limits depend on; the rest never changes after create.
    readonly_fields = (
        "id",
        "kind",
        "file_count",
        "content_bytes",
        "history_bytes",
        "version",
        "created_at",
        "updated_at",
    )
    fixed_fields = ("workspace", "type", "provider", "namespace")
    optional_fields = {"labels": [], "always_load": []}

    def save_model(self, request, obj, form, change) -> None:
        principal = self.principal(request, obj)
        if change:
            if data := changed_fields(form, self.optional_fields):
                changes = parse(MemoryChange, data)
                adopt(obj, memories.update(principal, obj.pk, "*", **changes))
            return
        fields = form.cleaned_data
        data = {k: fields.get(k) for k in ("type", *self.editable)}
        data = {k: v for k, v in data.items() if v is not None or k == "guide"}
        if fields.get("provider"):
            data["provider_id"] = fields["provider"].pk
        if fields.get("namespace"):
            data["namespace"] = fields["namespace"]
        adopt(obj, memories.create(principal, **parse(MemoryCreate, data)))

    def service_delete(self, request, obj) -> None:
        memories.delete_memory(self.principal(request, obj), obj.pk, "*")


@admin.register(models.AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """The audit trail: read-only, for everyone, always."""

    list_display = (
        "created_at",
        "workspace",
        "principal_type",
        "principal_id",
        "action",
        "object_type",
        "object_id",
        "request_id",
    )
    list_filter = ("principal_type", "object_type", "action")
    search_fields = ("principal_id", "object_id", "request_id", "action")
    list_select_related = ("workspace",)
    ordering = ("-created_at", "-id")
    show_full_result_count = False  # no count(*) of the whole trail on every filtered page

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
