"""Memory Providers: the mem0 accounts of a workspace, with encrypted credentials."""

from __future__ import annotations

import ipaddress
import logging
import posixpath
import re
import secrets
from typing import Any, TypedDict, Unpack
from urllib.parse import unquote, urlsplit, urlunsplit

from django.db import transaction
from django.db.models import QuerySet

from memoryhub import audit, crypto, outbound
from memoryhub.errors import ApiError
from memoryhub.models import Memory, MemoryProvider, Permission
from memoryhub.principals import Principal
from memoryhub.reasons import Code, Reason
from memoryhub.rules import Rule
from memoryhub.services.common import (
    bump_version,
    get_in_workspace,
)
from records.backends import DEFAULT_BASE_URL, RecordBackend, make_backend
from records.models import PurgeJob

logger = logging.getLogger(__name__)

TYPES = {t.value for t in MemoryProvider.Type}
CONFIG_FIELDS = {"base_url", "connect_timeout", "read_timeout"}
CREDENTIAL_FIELDS = {
    "mem0_platform": {"api_key"},
    "mem0_oss": {"api_key", "admin_api_key"},
}
ALL_CREDENTIAL_FIELDS = set().union(*CREDENTIAL_FIELDS.values())
MAX_TIMEOUT = 120.0
MAX_BASE_URL_CHARS = 2000
MAX_CREDENTIAL_CHARS = 1000
DEFAULT_PORTS = {"http": 80, "https": 443}


# Underscores too: container networks name services like ``mem0_api``.
_HOST_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")


def _valid_host(url: str) -> bool:
    """A DNS name (IDNA allowed, as the HTTP client encodes it) or a literal IP address:
    something a connection can reach."""
    parts = urlsplit(url)
    try:
        address = ipaddress.ip_address(parts.hostname or "")
        return "[" not in parts.netloc or address.version == 6
    except ValueError:
        if "[" in parts.netloc:  # brackets hold an IPv6 address, nothing else
            return False
    try:
        ascii_host = outbound.connect_host(url)
    except ValueError:  # a name the client cannot send to (IDNA 2008 refuses it)
        return False
    labels = ascii_host.split(".")
    if labels[-1].isdigit():  # "1.2.3.4.5", "999.1.1.1": no top-level domain is numeric
        return False
    return 0 < len(ascii_host) <= 253 and all(_HOST_LABEL.fullmatch(x) for x in labels)


def normalize_base_url(url: str) -> str:
    """One spelling per server: scheme and host lower-cased, the host in the ASCII form the
    HTTP client connects to (:func:`memoryhub.outbound.connect_host`), an IP address in
    its compressed form, the scheme's default port and trailing slashes dropped,
    the path percent-decoded with its dot segments resolved (as HTTP clients send it).

    Only for comparing addresses (the backend key); the stored base_url keeps its spelling.
    Total: a row saved before today's checks compares as written, lower-cased.
    """
    try:
        return _normalized(url)
    except ValueError:
        return url.strip().lower()


def _normalized(url: str) -> str:
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    try:
        ip = ipaddress.ip_address(host)
        host = f"[{ip.compressed}]" if ip.version == 6 else ip.compressed
    except ValueError:
        try:
            host = outbound.connect_host(url.strip())
        except ValueError:  # not a valid base_url anyway; compare it as written
            host = host.lower()
    port = parts.port
    netloc = host if port is None or port == DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    # Merging more spellings than a server would (``//``) only refuses more, never less.
    path = posixpath.normpath(unquote(parts.path)) if parts.path.strip("/") else ""
    return urlunsplit((scheme, netloc, path.rstrip("/"), "", ""))


def base_url_of(config: dict | None) -> str:
    """The address a provider's requests go to (as make_backend reads its config)."""
    return (config or {}).get("base_url") or DEFAULT_BASE_URL


def backend_key(provider_type: str, config: dict) -> str:
    """Which backend a provider's records live in: its type and normalised base_url.

    Credentials are left out on purpose: two keys of one server may see the same data.
    """
    return f"{provider_type} {normalize_base_url(base_url_of(config))}"


def origin_of(base_url: str) -> tuple[str, str]:
    """The server a base_url reaches: scheme, host and port, normalised (the default port
    and the host's spelling do not count; the path does not either)."""
    parts = urlsplit(normalize_base_url(base_url))
    return parts.scheme, parts.netloc


def moves_address(provider: MemoryProvider, config: dict) -> bool:
    """Whether a new config sends the provider's requests to another server: another
    scheme, host or port. A new path on the same server is no move (same server, same
    operator, same TLS identity)."""
    return origin_of(base_url_of(provider.config)) != origin_of(base_url_of(config))


def providers_on_backend(key: str) -> list[str]:
    """The ids of every workspace's providers on this backend.

    base_url is stored as written, so the match is computed here: one small row per
    provider of the type.
    """
    provider_type = key.split(" ", 1)[0]
    rows = MemoryProvider.objects.filter(type=provider_type).values_list("id", "config")
    return [pid for pid, config in rows if backend_key(provider_type, config) == key]


# --- the rules of a provider's fields ---------------------------------------------------
# Each field's check and schema, declared once: the request serializers
# (records/serializers.py) and the admin use them. What depends on the provider's type
# (config_for, credential_for) is checked by the services.


def validate_type(value: Any) -> str:
    if not isinstance(value, str) or value not in TYPES:
        raise ApiError(422, f"type must be one of: {', '.join(sorted(TYPES))}")
    return value


PROVIDER_TYPE = Rule(
    validate_type,
    {"type": "string", "enum": list(MemoryProvider.Type.values)},
    component="MemoryProviderType",
)


def validate_base_url(value: str) -> str:
    """A base_url given as a non-empty string: one a connection can reach, in one spelling."""
    url = value.strip().rstrip("/")
    if len(url) > MAX_BASE_URL_CHARS or any(c.isspace() for c in url):
        raise ApiError(422, "config.base_url must be a URL without spaces")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        raise ApiError(422, "config.base_url is not a valid URL (its host or port)") from None
    if parts.username or parts.password or "?" in url or "#" in url:
        raise ApiError(422, "config.base_url may not hold credentials, a query or a fragment")
    if not _valid_host(url):
        raise ApiError(422, "config.base_url needs a host name or an IP address")
    if not _plain_path(parts.path):
        # One server, one spelling: "/x/..", "/%2e" or "//" would name the same backend
        # under another key (records/services/namespaces.py).
        raise ApiError(
            422, "config.base_url's path is plain segments of letters, digits and . _ ~ -"
        )
    try:
        outbound.check_url(url)
    except outbound.OutboundRefused as exc:
        raise ApiError(
            422, f"config.base_url is refused by the outbound policy: {exc}", reason=Reason.OUTBOUND
        ) from None
    return url


BASE_URL = Rule(
    validate_base_url,
    {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_BASE_URL_CHARS,
        "description": "The backend's address: required for mem0_oss; mem0_platform defaults "
        f"to {DEFAULT_BASE_URL}. Always present in answers.",
    },
)

_PATH_SEGMENT = re.compile(r"[A-Za-z0-9._~-]+")


def _plain_path(path: str) -> bool:
    """No empty, dot, percent-encoded or otherwise special segments."""
    segments = path.split("/")[1:] if path else []
    return all(_PATH_SEGMENT.fullmatch(x) and x not in (".", "..") for x in segments)


def _timeout(name: str) -> Rule:
    def check(value: Any) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0 < value <= MAX_TIMEOUT
        ):
            raise ApiError(
                422,
                f"config.{name} is a number of seconds, more than 0 and at most {MAX_TIMEOUT:g}",
            )
        return float(value)

    schema = {
        "type": "number",
        "format": "double",
        "minimum": 0,
        "exclusiveMinimum": True,
        "maximum": MAX_TIMEOUT,
        "description": f"Seconds, more than 0 and at most {MAX_TIMEOUT:g}.",
    }
    return Rule(check, schema)


CONNECT_TIMEOUT = _timeout("connect_timeout")
READ_TIMEOUT = _timeout("read_timeout")


def validate_config(value: Any) -> dict:
    """A config's fields, each checked; null is ``{}``.

    Whether base_url may be left out is the type's rule (:func:`config_for`): a base_url
    that is no non-empty string is left as given, for it to refuse.
    """
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise ApiError(422, "config must be an object")
    unknown = sorted(set(value) - CONFIG_FIELDS)
    if unknown:
        raise ApiError(422, f"config: unknown fields {', '.join(unknown)}")
    config: dict[str, Any] = {}
    base_url = value.get("base_url")
    if base_url is not None:
        given = isinstance(base_url, str) and base_url.strip()
        config["base_url"] = BASE_URL(base_url) if given else base_url
    for name, rule in (("connect_timeout", CONNECT_TIMEOUT), ("read_timeout", READ_TIMEOUT)):
        if name in value:
            config[name] = rule(value[name])
    return config


PROVIDER_CONFIG = Rule(
    validate_config,
    {
        "type": "object",
        "description": "Where the backend is and how long to wait for it.",
        "properties": {
            "base_url": BASE_URL.schema,
            "connect_timeout": CONNECT_TIMEOUT.schema,
            "read_timeout": READ_TIMEOUT.schema,
        },
        "additionalProperties": False,
    },
    component="MemoryProviderConfigRequest",
)


def config_for(provider_type: str, config: dict) -> dict:
    """The config a provider of this type keeps: base_url is required for mem0_oss, and
    mem0_platform's defaults to the hosted platform (a rule across type and config)."""
    base_url = config.get("base_url")
    if base_url is None and provider_type == MemoryProvider.Type.MEM0_PLATFORM:
        base_url = DEFAULT_BASE_URL
    elif not isinstance(base_url, str) or not base_url.strip():
        raise ApiError(422, f"config.base_url is required for {provider_type}")
    return {"base_url": base_url, **{k: v for k, v in config.items() if k != "base_url"}}


CREDENTIAL_KEY_SCHEMA = {"type": "string", "minLength": 1, "maxLength": MAX_CREDENTIAL_CHARS}


def validate_credential(value: Any) -> dict:
    """A credential's keys, each checked and stripped (which keys a type takes:
    :func:`credential_for`)."""
    if not isinstance(value, dict):
        raise ApiError(422, "credential must be an object")
    unknown = sorted(set(value) - ALL_CREDENTIAL_FIELDS)
    if unknown:
        raise ApiError(422, f"credential: unknown fields {', '.join(unknown)}")
    for key, secret in value.items():
        if not isinstance(secret, str) or not secret.strip() or len(secret) > MAX_CREDENTIAL_CHARS:
            raise ApiError(
                422, f"credential.{key} is a string of 1-{MAX_CREDENTIAL_CHARS} characters"
            )
        if any(c.isspace() or not c.isprintable() for c in secret.strip()):
            raise ApiError(422, f"credential.{key} may not hold spaces or control characters")
    return {key: secret.strip() for key, secret in value.items()}


PROVIDER_CREDENTIAL = Rule(
    validate_credential,
    {
        "type": "object",
        "description": "The backend's keys: stored encrypted and never shown again.",
        "properties": {
            "api_key": {
                **CREDENTIAL_KEY_SCHEMA,
                "description": "Required for mem0_platform; for mem0_oss it is sent as X-API-Key.",
            },
            "admin_api_key": {
                **CREDENTIAL_KEY_SCHEMA,
                "description": "mem0_oss only: the server's admin key, which purging a "
                "deleted memory needs.",
            },
        },
        "additionalProperties": False,
    },
    component="MemoryProviderCredentialRequest",
).or_null()


def credential_for(provider_type: str, credential: dict | None) -> dict | None:
    """The credential a provider of this type keeps (a rule across type and credential):
    mem0_platform needs api_key, admin_api_key is mem0_oss's only; ``{}`` is none."""
    if credential is not None:
        unknown = sorted(set(credential) - CREDENTIAL_FIELDS[provider_type])
        if unknown:
            raise ApiError(422, f"credential: unknown fields {', '.join(unknown)}")
    if provider_type == MemoryProvider.Type.MEM0_PLATFORM and "api_key" not in (credential or {}):
        raise ApiError(422, "credential.api_key is required for mem0_platform")
    return credential or None


def validate_enabled(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ApiError(422, "enabled must be true or false")
    return value


PROVIDER_ENABLED = Rule(validate_enabled, {"type": "boolean"})


class ProviderChange(TypedDict, total=False):
    """The fields a change of a provider gives (each checked by its rule); type never changes."""

    name: str
    config: dict
    credential: dict | None
    # Instead of credential: some keys, each replacing the stored key of its name while the
    # others stay (a form's blank key keeps the stored one); see _new_credential.
    credential_keys: dict
    enabled: bool


# --- the services ---------------------------------------------------------------------------


def credential_of(provider: MemoryProvider) -> dict | None:
    """The decrypted credential. Never log it, never return it."""
    try:
        credential: dict | None = crypto.decrypt_json(provider.credential_encrypted)
        return credential
    except crypto.CredentialError:
        raise ApiError(
            503,
            f"the credential of memory provider {provider.id} cannot be decrypted; set it again",
            code=Code.UNAVAILABLE,
            reason=Reason.PROVIDER_AUTH,
            dependency=f"memory:{provider.type}",
            provider_id=provider.id,
        ) from None


def backend_of(provider: MemoryProvider) -> RecordBackend:
    return make_backend(
        provider.type,
        provider_id=provider.id,
        config=provider.config,
        credential=credential_of(provider),
    )


def require_enabled(provider: MemoryProvider) -> None:
    if not provider.enabled:
        raise ApiError(
            422,
            f"the memory provider {provider.id} is disabled",
            reason=Reason.DISABLED,
            provider_id=provider.id,
        )


def add_provider(
    principal: Principal,
    *,
    type: str,
    name: str,
    config: dict | None = None,
    credential: dict | None = None,
    enabled: bool = True,
) -> MemoryProvider:
    """A new provider, from values its rules checked; the type's rules are checked here."""
    principal.require(Permission.WRITE)
    fields = {
        "type": type,
        "name": name,
        "config": config_for(type, config or {}),
        "credential_encrypted": crypto.encrypt_json(credential_for(type, credential)),
        "enabled": enabled,
    }
    with transaction.atomic():
        provider = MemoryProvider.objects.create(workspace=principal.workspace, **fields)
        audit.record(principal, "memory_provider.create", "memory_provider", provider.id)
    return provider


def list_providers(principal: Principal) -> QuerySet[MemoryProvider]:
    principal.require(Permission.READ)
    return MemoryProvider.objects.filter(workspace_id=principal.workspace_id).order_by(
        "-created_at", "id"
    )


def get_provider(principal: Principal, provider_id: str) -> MemoryProvider:
    principal.require(Permission.READ)
    return get_in_workspace(MemoryProvider.objects.all(), principal, provider_id, "memory provider")


def update_provider(
    principal: Principal, provider_id: str, if_match: str, **changes: Unpack[ProviderChange]
) -> MemoryProvider:
    """Changes the given fields, whose rules checked them; the type's rules are checked here.
    A new base_url on another server needs a new credential (or new keys) in the same
    request, and may not move the provider's namespaces where they are taken."""
    principal.require(Permission.WRITE)
    with transaction.atomic():
        provider = get_in_workspace(
            MemoryProvider.objects.all(), principal, provider_id, "memory provider", lock=True
        )
        fields: dict[str, Any] = {}
        if "name" in changes:
            fields["name"] = changes["name"]
        if "config" in changes:
            fields["config"] = config_for(provider.type, changes["config"])
            if "credential" not in changes and "credential_keys" not in changes:
                _keep_credential_home(provider, fields["config"])
            _refuse_move(provider, fields["config"])
        if "credential" in changes or "credential_keys" in changes:
            new = _new_credential(provider, fields.get("config"), changes)
            fields["credential_encrypted"] = crypto.encrypt_json(credential_for(provider.type, new))
        if "enabled" in changes:
            fields["enabled"] = changes["enabled"]
        bump_version(provider, if_match, **fields)
        # The names of the changed fields only: never the credential.
        changed = sorted("credential" if f == "credential_encrypted" else f for f in fields)
        audit.record(
            principal, "memory_provider.update", "memory_provider", provider.id, fields=changed
        )
    return provider


def _new_credential(
    provider: MemoryProvider, config: dict | None, changes: ProviderChange
) -> dict | None:
    """The credential a change stores: the one given, or the keys given over the stored ones.

    ``provider`` is the locked row: whether it stays on its server, and what it stores, are
    read under the lock, never from an earlier read (a move committed in between would
    otherwise take the stored keys to its new address). On a move only the keys given go.
    """
    if "credential" in changes:
        return changes["credential"]
    keys = changes["credential_keys"]
    if config is not None and moves_address(provider, config):
        return keys
    try:
        stored = credential_of(provider) or {}
    except ApiError:  # a credential that cannot be decrypted is lost already
        stored = {}
    return {**stored, **keys}


def _keep_credential_home(provider: MemoryProvider, config: dict) -> None:
    """422 when a new address would take the stored credential along.

    The credential was given for one server; sent to another (as X-API-Key, Authorization
    or the purge's admin key) it would be read by whoever runs that one, though the API
    never shows it. So a move needs its credential in the same request (``null`` for
    none, where the type allows it). Refused rather than dropped: nothing is lost
    silently, and the caller learns why.
    """
    if provider.credential_encrypted and moves_address(provider, config):
        raise ApiError(
            422,
            "a new base_url (another scheme, host or port) needs its credential in the same "
            "request: the stored one is never sent to another address",
            reason=Reason.CREDENTIAL_REQUIRED,
        )


def _refuse_move(provider: MemoryProvider, config: dict) -> None:
    """409 when a new base_url moves the provider's namespaces onto a backend where a
    live memory or a pending purge of any workspace has one of them."""
    from records.services import namespaces  # it imports this module

    key = backend_key(provider.type, config)
    if key == namespaces.key_of(provider):
        return
    if PurgeJob.objects.filter(provider=provider, status=PurgeJob.Status.PENDING).exists():
        # A pending purge blocks adoptions of its namespace on this backend only while it
        # stays here, and it must empty the namespace where its records are.
        raise ApiError(
            409,
            "purges of deleted memories still need this provider's address",
            reason=Reason.PURGE_PENDING,
        )
    # One lock for all its namespaces: no adoption on the new backend until this commits.
    namespaces.lock_backend(key)
    held = Memory.objects.filter(provider=provider, namespace__isnull=False)
    namespaces.refuse_taken(
        key, [name for name in held.values_list("namespace", flat=True) if name is not None]
    )


def delete_provider(principal: Principal, provider_id: str, if_match: str) -> None:
    principal.require(Permission.WRITE)
    with transaction.atomic():
        provider = get_in_workspace(
            MemoryProvider.objects.all(), principal, provider_id, "memory provider", lock=True
        )
        bump_version(provider, if_match)
        if Memory.objects.filter(provider=provider).exists():
            raise ApiError(
                409,
                "record memories still use this provider; delete them first",
                reason=Reason.PROVIDER_IN_USE,
            )
        if PurgeJob.objects.filter(provider=provider, status=PurgeJob.Status.PENDING).exists():
            raise ApiError(
                409,
                "purges of deleted memories still need this provider",
                reason=Reason.PURGE_PENDING,
            )
        audit.record(principal, "memory_provider.delete", "memory_provider", provider.id)
        provider.delete()


def unused_namespace(provider: MemoryProvider) -> str:
    """A random namespace that no memory and no pending purge uses on the provider's
    backend, in any workspace (the test reads it, so it must be nobody's)."""
    from records.services import namespaces  # it imports this module

    key = namespaces.key_of(provider)
    while True:
        namespace = "a13n-test-" + secrets.token_hex(16)
        try:
            namespaces.refuse_taken(key, [namespace])
        except ApiError:
            continue
        return namespace


def test_provider(principal: Principal, provider_id: str) -> dict:
    """Lists one page of a namespace no memory uses: checks address and key, changes nothing."""
    principal.require(Permission.WRITE)
    provider = get_in_workspace(
        MemoryProvider.objects.all(), principal, provider_id, "memory provider"
    )
    backend = backend_of(provider)
    try:
        backend.test(unused_namespace(provider))
    except ApiError as error:
        audit.record(
            principal,
            "memory_provider.test",
            "memory_provider",
            provider.id,
            ok=False,
            error=error.reason or error.code,
        )
        logger.info("memory provider %s failed its test: %s", provider.id, error.code)
        raise
    finally:
        backend.close()
    audit.record(principal, "memory_provider.test", "memory_provider", provider.id, ok=True)
    return {"ok": True, "provider_id": provider.id, "type": provider.type}
