"""How many wrong passwords the staff's login pages take before they refuse for a while.

Both doors to the staff's accounts, ``/panel/login/`` and ``/admin/login/``, count each
attempt against the account it names (its username, whether or not it exists) and against
the client's address (:func:`memoryhub.middleware.client_address`). Counting starts at an
account's or address's first attempt and lasts :data:`WINDOW` seconds: past
:data:`ACCOUNT_LIMIT` attempts for one account, or :data:`ADDRESS_LIMIT` from one address,
every further attempt is refused until the window ends, the right password too.

A successful login clears its account's count and takes itself off its address's. The
rest of the address's count stays: one valid account must not wipe out the trail of
guesses at the others.

The counts live in Django's cache (settings.CACHES: Redis in production), shared by every
process. Each attempt is counted before its password is checked, by an atomic increment,
so that parallel guesses cannot slip past a limit. If the cache does not answer, logins
go on uncounted (a warning in the log) rather than lock every staff member out.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from dataclasses import dataclass

from django.core.cache import cache

from memoryhub.errors import ApiError

logger = logging.getLogger(__name__)

ACCOUNT_LIMIT = 5  # attempts for one username per window
ADDRESS_LIMIT = 20  # attempts from one address per window
WINDOW = 15 * 60  # seconds, from an account's or an address's first attempt


@dataclass(frozen=True)
class Attempt:
    """One login attempt, counted: the cache keys to settle once its password is checked."""

    account: str | None  # the account's window, cleared by a success
    address_count: str | None  # the address's counter, which a success leaves


def begin(username: str, address: str) -> Attempt:
    """Count a login attempt for ``username`` from ``address``: 429 when either has used up
    its attempts for now (with the minutes left in the message and ``Retry-After``)."""
    try:
        account, _, account_attempts, account_ends = _count("account", username.casefold())
        _, address_count, address_attempts, address_ends = _count("address", address)
    except Exception:  # noqa: BLE001 - any cache failure: log in without the throttle
        logger.warning("login throttle unavailable: the cache did not answer", exc_info=True)
        return Attempt(None, None)
    if account_attempts > ACCOUNT_LIMIT:
        raise _refused("for this account", account_ends)
    if address_attempts > ADDRESS_LIMIT:
        raise _refused("from your address", address_ends)
    return Attempt(account, address_count)


def succeeded(attempt: Attempt) -> None:
    """The attempt's password was right: its account starts afresh."""
    try:
        if attempt.account:
            cache.delete(attempt.account)
        if attempt.address_count:
            cache.decr(attempt.address_count)
    except ValueError:
        pass  # the address's window ended meanwhile: nothing left to take off
    except Exception:  # noqa: BLE001 - as in begin()
        logger.warning("login throttle unavailable: the cache did not answer", exc_info=True)


def _count(kind: str, value: str) -> tuple[str, str, int, float]:
    """Add one to the current window's count for ``value``: the window's key, the count's
    key, the count, and when the window ends.

    The window's key holds its end and expires then; its count has a key of its own per
    window, so a count never outlives its window (whatever a cache backend does to the
    expiry of a key it increments).
    """
    window = f"login:{kind}:{hashlib.sha256(value.encode()).hexdigest()[:32]}"
    now = time.time()
    cache.add(window, now + WINDOW, WINDOW)
    ends = cache.get(window) or now + WINDOW
    count = f"{window}:{ends:.3f}"
    cache.add(count, 0, WINDOW + 60)
    try:
        attempts = cache.incr(count)
    except ValueError:  # expired between the two calls: a count of its own
        attempts = 1
        cache.set(count, attempts, WINDOW + 60)
    return window, count, attempts, ends


def _refused(whom: str, ends: float) -> ApiError:
    seconds = max(1, math.ceil(ends - time.time()))
    minutes = math.ceil(seconds / 60)
    wait = "1 minute" if minutes == 1 else f"{minutes} minutes"
    return ApiError(
        429,
        f"Too many failed logins {whom}. Try again in {wait}.",
        headers={"Retry-After": str(seconds)},
    )
