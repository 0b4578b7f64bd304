"""The panel's list filters (django-filter): the audit log."""

from __future__ import annotations

import django_filters

from memoryhub.models import AuditEvent


class AuditFilter(django_filters.FilterSet):
    """``?actor=&action=&object=&since=&until=``: each narrows the log; empty ones don't."""

    actor = django_filters.CharFilter(
        field_name="principal_id", lookup_expr="icontains", label="Who"
    )
    action = django_filters.CharFilter(field_name="action", lookup_expr="startswith")
    object = django_filters.CharFilter(field_name="object_id", lookup_expr="icontains")
    since = django_filters.DateFilter(field_name="created_at", lookup_expr="date__gte")
    until = django_filters.DateFilter(field_name="created_at", lookup_expr="date__lte")

    class Meta:
        model = AuditEvent
        fields: list[str] = []
