"""The facts API's bodies and query parameters, for the OpenAPI schema only.

These serializers never parse or validate a request: ``facts.validation``, ``facts.paths``
and the services do. They document what those accept and what ``facts.representations``
answers (facts-memory.md). Component names start with ``Fact`` so no other app's collide.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema_field
from rest_framework import serializers

from facts import context, paths, tools, validation
from facts.models import WrittenBy
from memoryhub.schema import FunctionToolType

# The validators' own patterns, anchored as OpenAPI patterns are read.
FACT_ID = f"^{validation.FACT_ID_RE.pattern}$"
TAG = f"^{validation.TAG_RE.pattern}$"
KEY = f"^{validation.KEY_RE.pattern}$"
# ?tags=a,b: 1 to MAX_TAGS tags, comma-separated ("" filters nothing).
_TAG = validation.TAG_RE.pattern
TAGS_LIST = f"^(?:{_TAG}(?:,{_TAG}){{0,{validation.MAX_TAGS - 1}}})?$"
# A folder: "" or "/" (the root), else segments, each with a "/" after it but the last may
# go without. \w is Unicode's (letters and digits of any script), as the validator reads it.
_SEGMENT = paths._SEGMENT_RE.pattern
PATH = f"^(?:/|(?:{_SEGMENT}/)*{_SEGMENT}/?)?$"
PATH_HELP = (
    "A folder: '/'-separated segments of 1-100 letters, digits and . _ : @ - { }, at most "
    f"{paths.MAX_PATH_CHARS} characters; '' or '/' is the root. users/{{user}}/ is the run's "
    "end user's folder. Matches whole segments and every sub-folder."
)
TAGS_HELP = f"At most {validation.MAX_TAGS} tags, each 1-50 of A-Z a-z 0-9 . _ : -."


@extend_schema_field({"type": "string", "maxLength": paths.MAX_PATH_CHARS, "pattern": PATH})
class _PathField(serializers.Field):
    """A folder path; its pattern takes "" for the root (a CharField would add minLength)."""


def _path(help_text: str = PATH_HELP, **kwargs) -> serializers.Field:
    return _PathField(help_text=help_text, **kwargs)


def _tags(help_text: str = TAGS_HELP, **kwargs) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.RegexField(TAG, max_length=50),
        max_length=validation.MAX_TAGS,
        help_text=help_text,
        **kwargs,
    )


def _k(default: int) -> serializers.IntegerField:
    return serializers.IntegerField(
        min_value=1,
        max_value=validation.K_MAX,
        default=default,
        allow_null=True,
        help_text=f"How many facts to answer (null: {default}).",
    )


# -- answers -------------------------------------------------------------------------------
class FactSourceSerializer(serializers.Serializer):
    run_id = serializers.CharField(help_text="The run that wrote this version.")
    written_by = serializers.ChoiceField(
        choices=WrittenBy.choices, help_text="code, or model for a save made by a tool call."
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
    source = FactSourceSerializer()


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
    context = serializers.CharField(
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
class FactWriteSerializer(serializers.Serializer):
    path = _path(PATH_HELP + " users/ itself holds no facts.")
    text = serializers.CharField(
        min_length=1, max_length=validation.MAX_TEXT, help_text="Not only spaces, no NUL."
    )
    tags = _tags(
        TAGS_HELP + " Null or left out: none, or kept by replaces.",
        allow_null=True,
        required=False,
    )
    confidence = serializers.FloatField(
        min_value=0,
        max_value=1,
        allow_null=True,
        required=False,
        help_text="Null or left out: 1.0, or kept by replaces.",
    )
    replaces = serializers.RegexField(
        FACT_ID,
        allow_null=True,
        required=False,
        help_text="Write a new version of this fact: same id, version + 1, moved to path.",
    )
    key = serializers.RegexField(
        KEY,
        max_length=200,
        allow_null=True,
        required=False,
        help_text="Idempotency per run: the same key again answers the first write (200).",
    )
    written_by = serializers.ChoiceField(choices=WrittenBy.choices, default=WrittenBy.CODE)


class FactSearchSerializer(serializers.Serializer):
    query = serializers.CharField(
        allow_blank=True,
        allow_null=True,
        default="",
        help_text="Words OR-ed and prefix-matched, case-insensitive; empty: the newest.",
    )
    path = _path(default="")
    tags = _tags(TAGS_HELP + " A fact must have every tag.", allow_null=True, required=False)
    k = _k(validation.K_DEFAULT)


class FactContextSerializer(serializers.Serializer):
    query = serializers.CharField(
        allow_blank=True,
        allow_null=True,
        default="",
        help_text="Words to match; empty: the newest facts.",
    )
    paths = serializers.ListField(
        child=_path(help_text="A folder path."),
        min_length=1,
        max_length=context.MAX_PATHS,
        allow_null=True,
        required=False,
        help_text="Null or left out: the whole memory. An empty list is refused.",
    )
    k = _k(validation.CONTEXT_K_DEFAULT)


class FactToolCallFunctionSerializer(serializers.Serializer):
    accepts_unknown_fields = True  # an OpenAI tool call's other keys are left alone

    name = serializers.CharField(
        allow_blank=True, help_text="An unknown tool answers an error text, not an HTTP error."
    )
    arguments = serializers.JSONField(
        required=False, help_text="A JSON object, or a JSON string of one (as OpenAI sends)."
    )


class FactToolCallEnvelopeSerializer(serializers.Serializer):
    accepts_unknown_fields = True  # an OpenAI tool call's other keys are left alone

    id = serializers.CharField(min_length=1, max_length=tools.MAX_TOOL_CALL_ID)
    type = FunctionToolType(default="function")
    function = FactToolCallFunctionSerializer()


class FactToolCallSerializer(serializers.Serializer):
    paths = serializers.ListField(
        child=_path(help_text="A folder path."),
        min_length=1,
        max_length=context.MAX_PATHS,
        allow_null=True,
        required=False,
        help_text="The folders the tools are confined to, as given to GET tools "
        "(null or left out: the whole memory).",
    )
    tool_call = FactToolCallEnvelopeSerializer(help_text="An OpenAI tool call.")


# -- query parameters ----------------------------------------------------------------------
PATH_PARAMETER = OpenApiParameter(
    "path",
    {"type": "string", "maxLength": paths.MAX_PATH_CHARS, "pattern": PATH},
    description=PATH_HELP + " Default: the root.",
)
TAGS_PARAMETER = OpenApiParameter(
    "tags",
    {"type": "string", "pattern": TAGS_LIST},
    description="Comma-separated tags; a fact must have every one. " + TAGS_HELP,
)
LIST_PARAMETERS = [
    PATH_PARAMETER,
    TAGS_PARAMETER,
    OpenApiParameter(
        "limit",
        {"type": "integer", "minimum": 1, "maximum": validation.LIMIT_MAX},
        default=validation.LIMIT_DEFAULT,
        description="Facts per page.",
    ),
    OpenApiParameter(
        "before",
        str,
        pattern=FACT_ID,
        description="The next cursor of the previous page: facts older than this one.",
    ),
]
SEARCH_PARAMETERS = [
    OpenApiParameter(
        "query", str, description="Words OR-ed and prefix-matched; empty: the newest."
    ),
    PATH_PARAMETER,
    TAGS_PARAMETER,
    OpenApiParameter(
        "k",
        {"type": "integer", "minimum": 1, "maximum": validation.K_MAX},
        default=validation.K_DEFAULT,
        description="How many facts to answer.",
    ),
]
TOOLS_PARAMETERS = [
    OpenApiParameter(
        "paths",
        str,
        many=True,
        description="The folders (1-20) the tools are confined to: repeated, or "
        "comma-separated. Left out: the whole memory. With several, each tool takes a path "
        "argument restricted to exactly these.",
    ),
]
