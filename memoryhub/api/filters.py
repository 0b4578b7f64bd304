"""Query parameters of the kernel's list operations (the memories catalog)."""

from __future__ import annotations

from django import forms
from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter

from memoryhub.filters import FilterSet, RuleFilter, parameters
from memoryhub.services import memories


def _with_labels(queryset: QuerySet, name: str, labels: list[str]) -> QuerySet:
    for label in labels:
        queryset = queryset.filter(labels__contains=[label])
    return queryset


class MemoryFilter(FilterSet):
    # Every value of a repeated ?label= (a multiple-value widget reads them all).
    label = RuleFilter(
        memories.LABEL_FILTER,
        method=_with_labels,
        widget=forms.MultipleHiddenInput,
        help_text="Only memories with this label; repeat it to require several.",
    )
    kind = RuleFilter(memories.KIND, field_name="kind")
    type = RuleFilter(memories.TYPE, field_name="type")


def memory_parameters() -> list[OpenApiParameter]:
    """The catalog's filters; ``label`` is a repeated (exploded) parameter."""
    found = parameters(MemoryFilter)
    for parameter in found:
        if parameter.name == "label":
            parameter.explode = True
    return found
