"""The outbound-HTTP policy: where memoryhub may send requests on a user's behalf.

A user-supplied address (a memory provider's ``base_url``) could point memoryhub at its
own network. So by default only public addresses over HTTPS are reached:

- plain ``http://`` is refused unless ``outbound.allow_http``
  (``MEMORYHUB_OUTBOUND_ALLOW_HTTP=1``);
- private, loopback, shared, reserved and other non-public addresses are refused
  unless ``outbound.allow_private`` (``MEMORYHUB_OUTBOUND_ALLOW_PRIVATE=1``);
- link-local addresses (cloud metadata services live there), the other cloud metadata
  addresses, unspecified, broadcast and multicast addresses are refused whatever the
  settings say: no backend is reached there, and the metadata service hands out the
  machine's own credentials.

An IPv6 address that carries an IPv4 address (IPv4-mapped ``::ffff:a.b.c.d``,
IPv4-translated ``::ffff:0:a.b.c.d``, IPv4-compatible ``::a.b.c.d``, NAT64
``64:ff9b::/96``, 6to4 ``2002::/16``) is judged by the IPv4 address, which is where a
connection to it ends up. The IPv4-translated range, local-use NAT64 ``64:ff9b:1::/48``
and the deprecated site-local ``fec0::/10`` are never public.

:func:`check_url` checks an address when it is saved. :func:`session` builds a
``requests`` session that checks again at connection time: each connection resolves the
host itself, checks every address it may use and connects to exactly the address it
checked, so a name that later resolves to a private address is still refused. The session
follows no redirects and ignores proxy environment variables.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import NameResolutionError
from urllib3.util import parse_url
from urllib3.util.retry import Retry

from memoryhub.conf import setting

LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


class OutboundRefused(Exception):
    """The policy refuses this address. Raised before anything is sent."""


def allow_private() -> bool:
    return bool(setting("outbound.allow_private"))


def allow_http() -> bool:
    return bool(setting("outbound.allow_http"))


# Refused whatever the settings say, each with what it is (for the message); the first
# match names it, so metadata comes before the link-local network that holds it.
NEVER: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.ip_network(network), what)
    for network, what in (
        ("169.254.169.254/32", "the cloud metadata service"),  # AWS, GCP, Azure, Oracle...
        ("fd00:ec2::254/128", "the cloud metadata service"),  # AWS over IPv6
        ("fd00:ec2::23/128", "the cloud credential service"),  # EKS Pod Identity
        ("fd20:ce::254/128", "the cloud metadata service"),  # GCP over IPv6
        ("fd00:42::42/128", "the cloud metadata service"),  # Scaleway over IPv6
        ("100.100.100.200/32", "the cloud metadata service"),  # Alibaba Cloud
        ("168.63.129.16/32", "the cloud host's service address"),  # Azure's WireServer
        ("169.254.0.0/16", "a link-local address"),
        ("fe80::/10", "a link-local address"),
        ("0.0.0.0/8", "an unspecified address"),  # 0.0.0.0 reaches the local host on Linux
        ("::/128", "an unspecified address"),
        ("255.255.255.255/32", "a broadcast address"),
        ("224.0.0.0/4", "a multicast address"),
        ("ff00::/8", "a multicast address"),
    )
)
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215: the IPv4 may sit anywhere
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")  # SIIT (RFC 2765): ::ffff:0:a.b.c.d
# Never public, whatever Python's tables say: they lead to a translator's or a site's own
# network (fec0::/10 is the deprecated site-local range, still routed on some networks).
NOT_PUBLIC_IPV6 = (NAT64_LOCAL, IPV4_TRANSLATED, ipaddress.IPv6Network("fec0::/10"))


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form carries, where a connection to it ends up."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    # :: and ::1 are IPv6's own addresses, not IPv4-compatible forms.
    if ip in NAT64 or ip in IPV4_TRANSLATED or (ip in IPV4_COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _judged(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The address to judge: an IPv6 form that carries an IPv4 address is judged by it."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        return _embedded_ipv4(ip) or ip
    return ip


def never_allowed(address: str) -> str | None:
    """What the address is when no setting allows it (metadata, link-local...), else None."""
    ip = _judged(address)
    return next((what for network, what in NEVER if ip in network), None)


def is_public(address: str) -> bool:
    """Whether an IP address is on the public internet (an embedded IPv4 by itself)."""
    given = ipaddress.ip_address(address.split("%", 1)[0])
    if any(given in network for network in NOT_PUBLIC_IPV6):
        return False
    return _judged(address).is_global and never_allowed(address) is None


def check_address(address: str) -> None:
    what = never_allowed(address)
    if what is not None:
        raise OutboundRefused(f"{address} is {what}; no setting allows it")
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


def connect_host(url: str) -> str:
    """The ASCII host name a session's request to ``url`` connects to, lower-cased and
    without a trailing dot; ValueError when the session could not send to it at all.

    Found by preparing the URL as the session does (requests and urllib3: IDNA 2008 for a
    non-ASCII name), never by another encoding: Python's ``"idna"`` codec is IDNA 2003 and
    spells ``claßic.de`` as ``classic.de``, a different domain from the ``xn--claic-nqa.de``
    the session reaches. Who compares addresses compares these.
    """
    prepared = requests.PreparedRequest()
    prepared.prepare_url(url, None)  # InvalidURL and MissingSchema are ValueErrors
    return (parse_url(prepared.url or "").host or "").rstrip(".").lower()


def resolve_allowed(host: str, port: int) -> str:
    """The first address of ``host`` that the policy allows (OutboundRefused if none)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses = [str(info[4][0]) for info in infos]
    refusals: dict[str, None] = {}  # each reason once, in order
    for address in addresses:
        try:
            check_address(address)
        except OutboundRefused as exc:
            refusals[str(exc)] = None
            continue
        return address
    raise OutboundRefused(
        f"{host} resolves to {', '.join(sorted(set(addresses)))}, which this deployment"
        f" does not allow: {'; '.join(refusals)}"
    )


if TYPE_CHECKING:
    _Connection = HTTPConnection  # what the mixin is mixed into, for the type checker
else:
    _Connection = object


class _CheckedConnectionMixin(_Connection):
    """Resolves the host itself and connects only to an address the policy allows."""

    _checked_host: str  # the host as given, kept once _dns_host holds the checked address

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

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: float | tuple[float | None, float | None] | None = None,
        verify: bool | str = True,
        cert: str | tuple[str, str] | None = None,
        proxies: dict[str, str] | None = None,
    ) -> requests.Response:
        check_url(request.url or "")
        return super().send(
            request, stream=stream, timeout=timeout, verify=verify, cert=cert, proxies=proxies
        )


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
