"""The outbound-HTTP policy: where memoryhub may send requests on a user's behalf.

A user-supplied address (a memory provider's ``base_url``) could point memoryhub at its
own network. So by default only public addresses over HTTPS are reached:

- plain ``http://`` is refused unless ``outbound.allow_http``
  (``MEMORYHUB_OUTBOUND_ALLOW_HTTP=1``);
- private, loopback, link-local, reserved and other non-public addresses are refused
  unless ``outbound.allow_private`` (``MEMORYHUB_OUTBOUND_ALLOW_PRIVATE=1``).

:func:`check_url` checks an address when it is saved. :func:`session` builds a
``requests`` session that checks again at connection time: each connection resolves the
host itself, checks every address it may use and connects to exactly the address it
checked, so a name that later resolves to a private address is still refused. The session
follows no redirects and ignores proxy environment variables.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import NameResolutionError
from urllib3.util.retry import Retry

from memoryhub.conf import setting

LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


class OutboundRefused(Exception):
    """The policy refuses this address. Raised before anything is sent."""


def allow_private() -> bool:
    return bool(setting("outbound.allow_private"))


def allow_http() -> bool:
    return bool(setting("outbound.allow_http"))


def is_public(address: str) -> bool:
    """Whether an IP address is on the public internet (IPv4-mapped IPv6 by its IPv4)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def check_address(address: str) -> None:
    if not allow_private() and not is_public(address):
        raise OutboundRefused(
            f"{address} is not a public address; this deployment allows only public ones"
            " (MEMORYHUB_OUTBOUND_ALLOW_PRIVATE=1 allows private networks)"
        )


def _literal_ip(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None


def check_url(url: str) -> None:
    """Refuse an address the policy does not allow, judged from the URL alone.

    Host names are resolved only at connection time (see :func:`session`); here a literal
    IP address and the names of the local host are judged.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise OutboundRefused("the address must start with https://")
    if parts.scheme == "http" and not allow_http():
        raise OutboundRefused(
            "plain http:// is refused; use https:// (MEMORYHUB_OUTBOUND_ALLOW_HTTP=1 allows it)"
        )
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise OutboundRefused("the address has no host")
    literal = _literal_ip(host)
    if literal is not None:
        check_address(literal)
    elif (host in LOCAL_NAMES or host.endswith(".localhost")) and not allow_private():
        raise OutboundRefused(
            f"{host} is the local host; this deployment allows only public addresses"
        )


def resolve_allowed(host: str, port: int) -> str:
    """The first address of ``host`` that the policy allows (OutboundRefused if none)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses = [str(info[4][0]) for info in infos]
    for address in addresses:
        try:
            check_address(address)
        except OutboundRefused:
            continue
        return address
    raise OutboundRefused(
        f"{host} resolves to {', '.join(sorted(set(addresses)))}, which this deployment"
        " does not allow (only public addresses)"
    )


class _CheckedConnectionMixin:
    """Resolves the host itself and connects only to an address the policy allows."""

    def _new_conn(self) -> socket.socket:
        host = getattr(self, "_checked_host", None) or self._dns_host
        self._checked_host = host
        try:
            self._dns_host = resolve_allowed(host, self.port)
        except socket.gaierror as exc:
            raise NameResolutionError(self.host, self, exc) from exc
        return super()._new_conn()


class CheckedHTTPConnection(_CheckedConnectionMixin, HTTPConnection):
    pass


class CheckedHTTPSConnection(_CheckedConnectionMixin, HTTPSConnection):
    # TLS still verifies the certificate against the URL's host name (``self.host``).
    pass


class CheckedHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = CheckedHTTPConnection


class CheckedHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = CheckedHTTPSConnection


class PolicyAdapter(HTTPAdapter):
    """An adapter whose connections apply the policy, and which never retries on its own."""

    def __init__(self) -> None:
        # No retries at all: a write must never be sent twice behind the caller's back.
        super().__init__(max_retries=Retry(total=0, connect=0, read=0, redirect=0, status=0))

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {
            "http": CheckedHTTPConnectionPool,
            "https": CheckedHTTPSConnectionPool,
        }

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        check_url(request.url or "")
        return super().send(request, **kwargs)


class PolicySession(requests.Session):
    """A session that follows no redirects and reads no proxy settings from the environment."""

    def __init__(self) -> None:
        super().__init__()
        self.trust_env = False
        adapter = PolicyAdapter()
        self.mount("http://", adapter)
        self.mount("https://", adapter)

    def get_redirect_target(self, response: requests.Response) -> None:
        # A redirect is answered to the caller as it is, never followed: the next hop
        # could be another host, and the policy judged only this one.
        return None


def session() -> PolicySession:
    """A new session for outbound requests under the policy."""
    return PolicySession()
