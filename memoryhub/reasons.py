"""Every ``reason`` an error of the API can carry, named once.

A reason refines an error's ``code``: it says which rule refused the request. It is
sent as a plain string (``{"error": {"reason": "memory_full", ...}}`` and the tool text
``error: memory_full: ...``); a :class:`Reason` is a ``str``, so it serialises as its
value. Raise sites pass ``Reason.X``, never a string literal
(``tests/memoryhub/test_reasons.py`` keeps it so).
"""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    # 401: the run of the run token has ended (a tool call, a write, a permission check).
    RUN_ENDED = "run_ended"
    # 409: the root run of an eval scope has ended, so its subagent runs may not write.
    EVAL_ENDED = "eval_ended"
    # 409: a tool call id is used again with other arguments.
    TOOL_CALL_REUSED = "tool_call_reused"
    # 409: a {user} path needs the run's end user and the run has none.
    NO_USER = "no_user"
    # 403: a path names another end user's users/<id>/ folder.
    OTHER_USER = "other_user"
    # 403: a fact path lies outside the folders the tool is given.
    OUTSIDE_PATHS = "outside_paths"
    # 422: a fact move goes into, out of or between end users' folders.
    USER_FOLDER_MOVE = "user_folder_move"
    # 409: a write would take a memory past its limit (facts, or bytes of files).
    MEMORY_FULL = "memory_full"
    # 422: a file's content is larger than a file may be.
    FILE_TOO_LARGE = "file_too_large"
    # 404: a tool call names a mounted memory that has been deleted since.
    MEMORY_DELETED = "memory_deleted"
    # 409: the thread is archived, so it takes no new mounts or runs.
    THREAD_ARCHIVED = "thread_archived"
    # 409: a thread already holds the most memory mounts it may.
    MEMORY_MOUNT_LIMIT = "memory_mount_limit"
    # 409: retrying a purge job that is done already.
    PURGE_DONE = "purge_done"
    # 409: retrying a purge job while a try of it is under way.
    PURGE_RUNNING = "purge_running"
    # 409: a pending purge still needs the provider (deleting it, or moving its address).
    PURGE_PENDING = "purge_pending"
    # 409: retrying a purge whose namespace a live memory on the same backend uses.
    NAMESPACE_IN_USE = "namespace_in_use"
    # 409: a namespace's records of a deleted memory are still being purged.
    NAMESPACE_PURGING = "namespace_purging"
    # 409: deleting a memory provider that record memories still use.
    PROVIDER_IN_USE = "provider_in_use"
    # 422: the memory provider is disabled.
    DISABLED = "disabled"
    # 422: a provider's new base_url (another scheme, host or port) comes without a new
    # credential: the stored one is never sent to another address.
    CREDENTIAL_REQUIRED = "credential_required"
    # 422: a provider's base_url is refused by the outbound policy when it is set.
    OUTBOUND = "outbound"
    # 503: a call to the provider is refused by the outbound policy when it is made.
    OUTBOUND_REFUSED = "outbound_refused"
    # 503: the provider's credential cannot be decrypted or the provider refuses it.
    PROVIDER_AUTH = "provider_auth"
    # 503: the provider is rate limiting (HTTP 429).
    RATE_LIMITED = "rate_limited"
    # 409: the backend did not confirm a write; it may or may not have happened.
    WRITE_UNCONFIRMED = "write_unconfirmed"
    # 409: the backend already holds an identical record in this memory.
    DUPLICATE_RECORD = "duplicate_record"


class Code(StrEnum):
    """The ``code`` of an error: it follows the status (``DEFAULT_CODES`` in errors.py);
    a raise site names one only where it differs, or to say so plainly."""

    # 400: the request cannot be parsed (malformed JSON, a NUL in the URL).
    BAD_REQUEST = "bad_request"
    # 401: no credentials, bad credentials.
    UNAUTHENTICATED = "unauthenticated"
    # 403: the principal may not do this (permission, read-only mount, tool not offered).
    FORBIDDEN = "forbidden"
    # 404: no such object in this workspace.
    NOT_FOUND = "not_found"
    # 405: the URL does not take this method.
    METHOD_NOT_ALLOWED = "method_not_allowed"
    # 406: the Accept header asks for what the API cannot send.
    NOT_ACCEPTABLE = "not_acceptable"
    # 409: the change conflicts with the current state (the reason says which rule).
    CONFLICT = "conflict"
    # 409: the name, namespace, mount or record exists already.
    ALREADY_EXISTS = "already_exists"
    # 411: a request body without a Content-Length.
    LENGTH_REQUIRED = "length_required"
    # 412: a stale If-Match.
    PRECONDITION_FAILED = "precondition_failed"
    # 413: the request body is too large.
    PAYLOAD_TOO_LARGE = "payload_too_large"
    # 414: a request line too long (refused by the proxy in front, deploy/nginx.conf).
    URI_TOO_LONG = "uri_too_long"
    # 415: a request body that is not JSON.
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    # 422: a field or argument breaks its rule.
    INVALID_ARGUMENT = "invalid_argument"
    # 428: a change without If-Match.
    PRECONDITION_REQUIRED = "precondition_required"
    # 429: throttled.
    RATE_LIMITED = "rate_limited"
    # 431: request headers too large (refused by the proxy in front, deploy/nginx.conf).
    HEADERS_TOO_LARGE = "headers_too_large"
    # 500: a bug; the details are in the log only.
    INTERNAL = "internal"
    # 503: a dependency (a memory provider) cannot answer.
    UNAVAILABLE = "unavailable"
    # Any other status.
    ERROR = "error"
