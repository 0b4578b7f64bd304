"""The facts API's inputs and answers (facts-memory.md).

Each request serializer validates its operation's input with the fields' rules
(``facts.validation``, ``facts.paths``, ``facts.context``) and is what the schema documents.
Resolving ``users/{user}/`` for the caller stays in the services (403 other_user, 409
no_user). The answer serializers document what ``facts.representations`` builds. Component
names start with ``Fact`` so no other app's collide.
"""

from __future__ import annotations

from rest_framework import serializers

from facts import context, validation
from facts.models import WrittenBy
from facts.paths import PATH, PATH_HELP
from facts.validation import TAGS_HELP
from memoryhub.rules import QuerySerializer, RequestSerializer, Rule
from memoryhub.tools import TOOL_CALL

FACT_ID = validation.FACT_ID_SCHEMA["pattern"]


# -- answers -------------------------------------------------------------------------------
class FactSourceSerializer(serializers.Serializer):
    run_id = serializers.CharField(help_text="The run that wrote this version.")
    written_by = serializers.ChoiceField(
        choices=WrittenBy.choices,
        help_text="code; model for a save made by a tool call; person for a correction made "
        "by staff in the panel (its run_id is empty).",
    )


class FactSerializer(serializers.Serializer):
    """A fact, or one version of it (shaped like the fact was when it was written)."""

    id = serializers.RegexField(FACT_ID, help_text="m_<n>; every version keeps it.")
    path = serializers.CharField(help_text="The folder, stored with one trailing slash.")
    text = serializers.CharField(max_length=validation.MAX_TEXT)
    tags = serializers.ListField(child=serializers.CharField())
    confidence = serializers.FloatField(min_value=0, max_value=1)
    version = serializers.IntegerField(min_value=1, help_text="1, then +1 per replaces.")
    created_at = serializers.DateTimeField(help_text="When the fact was first saved.")
    updated_at = serializers.DateTimeField(help_text="When this version was written.")
    # DRF's metaclass takes declared fields out of the class, so this one does not replace
    # Field.source (nor context below Field.context), whatever django-stubs sees.
    source = FactSourceSerializer()  # type: ignore[assignment]


class FactSearchHitSerializer(FactSerializer):
    """A fact found by a search, with its score."""

    score = serializers.FloatField(
        allow_null=True, help_text="The rank, higher is better; null for an empty query."
    )


class FactPageSerializer(serializers.Serializer):
    facts = FactSerializer(many=True, help_text="Newest first.")
    next = serializers.RegexField(
        FACT_ID,
        allow_null=True,
        help_text="The fact id to pass as before for the next page; null on the last page.",
    )


class FactSearchResultsSerializer(serializers.Serializer):
    facts = FactSearchHitSerializer(many=True, help_text="Best first, newest first on ties.")


class FactVersionsSerializer(serializers.Serializer):
    versions = FactSerializer(many=True, help_text="Every version, newest first.")


class FactContextBlockSerializer(serializers.Serializer):
    context = serializers.CharField(  # type: ignore[assignment]  # a declared field, as source
        allow_blank=True,
        help_text="<memory>...</memory>: under each path, '- text (date, id)' lines; "
        "'' when nothing matches.",
    )


class FactToolFunctionSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="search_memory, save_memory or forget_memory.")
    description = serializers.CharField()
    parameters = serializers.DictField(help_text="The arguments' JSON Schema.")


class FactToolDefinitionSerializer(serializers.Serializer):
    type = serializers.CharField(help_text="Always function.")
    function = FactToolFunctionSerializer()


class FactToolDefinitionsSerializer(serializers.Serializer):
    definitions = FactToolDefinitionSerializer(
        many=True, help_text="OpenAI function tools: search_memory, save_memory, forget_memory."
    )


class FactToolMessageSerializer(serializers.Serializer):
    role = serializers.CharField(help_text="Always tool.")
    tool_call_id = serializers.CharField(help_text="The id of the tool call answered.")
    content = serializers.CharField(
        help_text="The result as JSON text, or 'error: <code>: <message>' for a refusal."
    )


# -- requests ------------------------------------------------------------------------------
def _k(rule: Rule, default: int) -> serializers.Field:
    return rule.field(
        required=False,
        allow_null=True,
        default=default,
        help_text=f"How many facts to answer (null: {default}).",
    )


def _paths(help_text: str) -> serializers.Field:
    return context.PATHS.field(required=False, allow_null=True, help_text=help_text)


class FactWriteSerializer(RequestSerializer):
    path = PATH.field(help_text=PATH_HELP + " users/ itself holds no facts.")
    text = validation.TEXT.field(help_text="Not only spaces, no NUL.")
    tags = validation.TAGS.or_null().field(
        required=False, help_text=TAGS_HELP + " Null or left out: none, or kept by replaces."
    )
    confidence = validation.CONFIDENCE.or_null().field(
        required=False, help_text="Null or left out: 1.0, or kept by replaces."
    )
    replaces = validation.REPLACES.or_null().field(
        required=False,
        help_text="Write a new version of this fact: same id, version + 1, moved to path.",
    )
    key = validation.KEY.or_null().field(
        required=False,
        help_text="Idempotency per run: the same key again answers the first write (200).",
    )
    written_by = validation.WRITTEN_BY.field(required=False, default="code")


class FactSearchSerializer(RequestSerializer):
    query = validation.QUERY.field(
        required=False,
        allow_null=True,
        default="",
        help_text="Words OR-ed and prefix-matched, case-insensitive; empty: the newest.",
    )
    path = PATH.field(required=False, default="", help_text=PATH_HELP)
    tags = validation.TAGS.or_null().field(
        required=False, help_text=TAGS_HELP + " A fact must have every tag."
    )
    k = _k(validation.K, validation.K_DEFAULT)


class FactSearchQuerySerializer(QuerySerializer):
    """The same search as query parameters (GET)."""

    query = validation.QUERY.field(
        required=False, default="", help_text="Words OR-ed and prefix-matched; empty: the newest."
    )
    path = PATH.field(required=False, default="", help_text=PATH_HELP + " Default: the root.")
    tags = validation.TAGS_PARAM.field(
        required=False, help_text="Comma-separated tags; a fact must have every one. " + TAGS_HELP
    )
    k = validation.K_PARAM.field(
        required=False, default=validation.K_DEFAULT, help_text="How many facts to answer."
    )


class FactListQuerySerializer(QuerySerializer):
    path = PATH.field(required=False, default="", help_text=PATH_HELP + " Default: the root.")
    tags = validation.TAGS_PARAM.field(
        required=False, help_text="Comma-separated tags; a fact must have every one. " + TAGS_HELP
    )
    limit = validation.LIMIT.field(
        required=False, default=validation.LIMIT_DEFAULT, help_text="Facts per page."
    )
    before = validation.BEFORE.field(
        required=False,
        help_text="The next cursor of the previous page: facts older than this one.",
    )


class FactContextSerializer(RequestSerializer):
    query = validation.QUERY.field(
        required=False,
        allow_null=True,
        default="",
        help_text="Words to match; empty: the newest facts.",
    )
    paths = _paths("Null or left out: the whole memory. An empty list is refused.")
    k = _k(validation.CONTEXT_K, validation.CONTEXT_K_DEFAULT)


class FactToolCallSerializer(RequestSerializer):
    paths = _paths(
        "The folders the tools are confined to, as given to GET tools "
        "(null or left out: the whole memory)."
    )
    tool_call = TOOL_CALL.field(help_text="An OpenAI tool call.")
