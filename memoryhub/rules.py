"""Rules and request serializers: strict, one per operation's input, and documented.

A field's rule is declared once, as a :class:`Rule`: the check that validates and converts
a value (raising the API's own 422 :class:`~memoryhub.errors.ApiError`) and the JSON
schema that documents it. The same rule is a serializer field for REST (``rule.field()``)
and a tool argument's schema for the model (``rule.argument()``).

:class:`RequestSerializer` is a JSON body: an object of declared fields only (unknown
fields are 422, then missing ones), each field checked in declaration order; the first
refusal is the answer. :class:`QuerySerializer` is the same over query parameters, where
unknown parameters are left alone. What no field can state (a rule across fields, one
that needs the database) stays in the service.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from drf_spectacular.drainage import set_override
from rest_framework import serializers
from rest_framework.fields import empty

from memoryhub.errors import ApiError

T = TypeVar("T", bound=serializers.Serializer)


@dataclass(frozen=True)
class Rule:
    """One field's rule: its check, its JSON schema, and whether null means "left out"."""

    check: Callable[[Any], Any]
    schema: dict[str, Any]
    nullable: bool = False
    component: str | None = field(default=None, compare=False)  # a named schema component

    def field(self, **kwargs: Any) -> RuleField:
        return RuleField(self, **kwargs)

    def or_null(self) -> Rule:
        """The same rule where null is taken as left out (``None``)."""
        return replace(self, nullable=True)

    def argument(self, description: str | None = None) -> dict[str, Any]:
        """The rule as a tool argument's JSON schema."""
        schema = dict(self.schema)
        if description:
            schema["description"] = description
        return schema

    def __call__(self, value: Any) -> Any:
        if value is None and self.nullable:
            return None
        return self.check(value)

    def __deepcopy__(self, memo: dict) -> Rule:
        # A value never changed (its schema is copied where it is extended): DRF copies
        # every field of a serializer per request, and copying the rule was most of that.
        return self


class RuleField(serializers.Field):
    """A serializer field whose value one :class:`Rule` checks; its schema is the rule's."""

    def __init__(self, rule: Rule, **kwargs: Any) -> None:
        kwargs.setdefault("allow_null", rule.nullable)
        super().__init__(**kwargs)
        self.rule = rule
        set_override(self, "field", rule.schema)
        if rule.component:
            set_override(self, "field_component_name", rule.component)

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        # Left out: the default, or nothing. Null and every other value: the rule decides,
        # so its message is the API's (DRF's own "may not be null" never shows).
        if data is empty:
            return super().validate_empty_values(data)
        return False, data

    def to_internal_value(self, data: Any) -> Any:
        return self.rule(data)

    def to_representation(self, value: Any) -> Any:
        return value

    def __deepcopy__(self, memo: dict) -> RuleField:
        # DRF copies a serializer's declared fields for every request, building each anew
        # from its arguments: most of the time a body takes to parse. An unbound RuleField
        # holds nothing a request changes but what ``bind`` sets and its default.
        if self.field_name is not None:  # bound (a list's child): DRF's own copy
            return super().__deepcopy__(memo)
        copied = copy.copy(self)
        copied.default = copy.deepcopy(self.default, memo)
        return copied


class RequestSerializer(serializers.Serializer):
    """A JSON object body of declared fields only (see the module's docstring)."""

    # Keys an object may carry beyond its fields, read past (an OpenAI tool call's extras).
    accepts_unknown_fields = False

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if data is None:  # a JSON null body: no object, like any other non-object
            raise ApiError(422, self.not_an_object())
        return super().validate_empty_values(data)

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            raise ApiError(422, self.not_an_object())
        if not self.accepts_unknown_fields:
            unknown = sorted(str(name) for name in set(data) - set(self.fields))
            if unknown:
                raise ApiError(422, f"unknown fields: {', '.join(unknown)}")
        missing = [name for name, f in self.fields.items() if f.required and name not in data]
        if missing:
            raise ApiError(422, f"missing fields: {', '.join(sorted(missing))}")
        validated: dict[str, Any] = super().to_internal_value(data)
        return validated

    def not_an_object(self) -> str:
        if self.parent is None:
            return "the request body must be a JSON object"
        return f"{self.field_name} must be a JSON object"


class NoBody(RequestSerializer):
    """No body, or an empty object: any field is unknown (422)."""


class QuerySerializer(RequestSerializer):
    """Query parameters: one value each (the last), unknown parameters left alone."""

    accepts_unknown_fields = True

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if hasattr(data, "getlist"):  # a QueryDict: the last value of each parameter
            data = {name: data[name] for name in data}
        return super().to_internal_value(data)


def parse(serializer_class: type[RequestSerializer], data: Any, **context: Any) -> dict:
    """``data`` validated by ``serializer_class``: its values, or the first refusal raised."""
    serializer = serializer_class(data=data, context=context)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
