"""Query-parameter filters of the list operations (django-filter), checked by rules.

A :class:`RuleFilter` is one query parameter: its :class:`~memoryhub.rules.Rule` checks
the value (the API's own 422) and documents it; ``field_name``/``lookup_expr`` or
``method`` apply it, as in any FilterSet. :func:`filter_rows` runs a FilterSet over a
queryset; :func:`parameters` documents its filters for the OpenAPI schema. Paging stays
with :class:`memoryhub.api.pagination.Pagination`.
"""

from __future__ import annotations

from typing import Any

import django_filters
from django import forms
from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request

from memoryhub.errors import ApiError
from memoryhub.rules import Rule


class RuleFormField(forms.Field):
    """Absent is ``None`` (no filter); any value given, ``""`` included, meets the rule."""

    def __init__(self, rule: Rule, **kwargs: Any) -> None:
        kwargs["required"] = False
        super().__init__(**kwargs)
        self.rule = rule

    def clean(self, value: Any) -> Any:
        return None if value is None else self.rule(value)


class RuleFilter(django_filters.Filter):
    field_class = RuleFormField

    def __init__(self, rule: Rule, *args: Any, help_text: str = "", **kwargs: Any) -> None:
        super().__init__(*args, rule=rule, **kwargs)
        self.rule = rule
        self.help_text = help_text


class FilterSet(django_filters.FilterSet):
    """A FilterSet whose filters are :class:`RuleFilter` parameters."""


def filter_rows(
    filterset_class: type[FilterSet], request: Request, queryset: QuerySet, **kwargs: Any
) -> QuerySet:
    """``queryset`` narrowed by the request's query parameters (422 for a refused value)."""
    filterset = filterset_class(request.query_params, queryset=queryset, request=request, **kwargs)
    if not filterset.is_valid():  # a rule raises its ApiError first; this is a backstop
        name, problems = next(iter(filterset.errors.items()))
        raise ApiError(422, f"{name}: {problems[0]}")
    narrowed: QuerySet = filterset.qs
    return narrowed


def parameters(filterset_class: type[FilterSet]) -> list[OpenApiParameter]:
    """The FilterSet's query parameters, each with its rule's schema."""
    return [
        OpenApiParameter(name, dict(f.rule.schema), description=f.help_text)
        for name, f in filterset_class.base_filters.items()
        if isinstance(f, RuleFilter)
    ]
