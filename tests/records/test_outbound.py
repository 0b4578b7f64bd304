"""The outbound policy: private addresses and plain HTTP refused unless allowed, at save time
and at connection time; no redirects followed."""

from __future__ import annotations

import socket

import pytest

from memoryhub import outbound
from memoryhub.errors import ApiError
from records.backends import make_backend


@pytest.fixture
def strict(settings):
    """The production defaults: only public addresses over HTTPS."""
    settings.MEMORYHUB_SETTINGS = {
        **settings.MEMORYHUB_SETTINGS,
        "outbound.allow_private": False,
        "outbound.allow_http": False,
    }


@pytest.fixture
def private_over_https_only(settings):
    settings.MEMORYHUB_SETTINGS = {
        **settings.MEMORYHUB_SETTINGS,
        "outbound.allow_private": True,
        "outbound.allow_http": False,
    }


@pytest.fixture
def public_over_http(settings):
    settings.MEMORYHUB_SETTINGS = {
        **settings.MEMORYHUB_SETTINGS,
        "outbound.allow_private": False,
        "outbound.allow_http": True,
    }


def resolving_to(monkeypatch, address: str, calls: list | None = None):
    """Every host name resolves to ``address`` (the test never reaches any other host)."""

    def fake_getaddrinfo(host, port, *args, **kwargs):
        if calls is not None:
            calls.append(host)
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(outbound.socket, "getaddrinfo", fake_getaddrinfo)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",  # noqa: S104
        "::1",
        "fe80::1",
        "fc00::1",
        "::ffff:10.0.0.1",
        "224.0.0.1",
        "240.0.0.1",
    ],
)
def test_non_public_addresses_are_not_public(address):
    assert not outbound.is_public(address)


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"])
def test_public_addresses_are_public(address):
    assert outbound.is_public(address)


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1",
        "https://10.0.0.5:8000",
        "https://[::1]:8000",
        "https://169.254.169.254/latest",
        "https://localhost:8000",
        "https://mem0.localhost",
    ],
)
def test_check_url_refuses_private_addresses_by_default(strict, url):
    with pytest.raises(outbound.OutboundRefused):
        outbound.check_url(url)


def test_check_url_refuses_plain_http_by_default(strict):
    with pytest.raises(outbound.OutboundRefused, match="plain http"):
        outbound.check_url("http://8.8.8.8")


@pytest.mark.parametrize("url", ["ftp://8.8.8.8", "file:///etc/passwd", "https://"])
def test_check_url_refuses_other_schemes_and_no_host(strict, url):
    with pytest.raises(outbound.OutboundRefused):
        outbound.check_url(url)


def test_check_url_accepts_public_https_and_names(strict):
    outbound.check_url("https://api.mem0.ai")
    outbound.check_url("https://8.8.8.8:443/prefix")


def test_allow_private_allows_private_but_not_http(private_over_https_only):
    outbound.check_url("https://10.0.0.5:8000")
    outbound.check_url("https://localhost:8000")
    with pytest.raises(outbound.OutboundRefused):
        outbound.check_url("http://10.0.0.5:8000")


def test_allow_http_allows_http_but_not_private(public_over_http):
    outbound.check_url("http://8.8.8.8")
    with pytest.raises(outbound.OutboundRefused):
        outbound.check_url("http://127.0.0.1:8000")


def test_the_environment_variables_name_the_settings():
    from memoryhub.conf import load_from_environment

    values = load_from_environment(
        {"MEMORYHUB_OUTBOUND_ALLOW_PRIVATE": "1", "MEMORYHUB_OUTBOUND_ALLOW_HTTP": "1"}
    )
    assert values["outbound.allow_private"] is True
    assert values["outbound.allow_http"] is True
    defaults = load_from_environment({})
    assert defaults["outbound.allow_private"] is False
    assert defaults["outbound.allow_http"] is False


def test_a_name_that_resolves_to_a_private_address_is_refused_at_connection_time(
    strict, monkeypatch
):
    calls: list = []
    resolving_to(monkeypatch, "10.0.0.7", calls)
    connects: list = []
    monkeypatch.setattr(
        socket, "create_connection", lambda *a, **k: connects.append(a) or pytest.fail("dialed")
    )
    outbound.check_url("https://mem0.example.com")  # the name passes at save time
    with pytest.raises(outbound.OutboundRefused, match="10.0.0.7"):
        outbound.session().get("https://mem0.example.com/v1/ping/", timeout=2)
    assert calls == ["mem0.example.com"]
    assert connects == []


def test_a_name_is_checked_again_on_every_new_connection(settings, monkeypatch, platform_server):
    """First the name resolves to an allowed address, later to a refused one (rebinding)."""
    port = int(platform_server.url.rsplit(":", 1)[1])
    url = f"http://mem0.example.com:{port}/v1/ping/"
    http = outbound.session()
    resolving_to(monkeypatch, "127.0.0.1")  # loopback is allowed in this suite
    assert http.get(url, timeout=2).status_code == 401  # reached the fake server
    http.close()
    settings.MEMORYHUB_SETTINGS = {**settings.MEMORYHUB_SETTINGS, "outbound.allow_private": False}
    resolving_to(monkeypatch, "10.0.0.7")
    with pytest.raises(outbound.OutboundRefused, match="10.0.0.7"):
        http.get(url, timeout=2)
    assert len(platform_server.requests) == 1


def test_the_session_connects_to_the_address_it_checked(monkeypatch, platform_server):
    """The name is resolved once, by the policy, and the socket goes to that address."""
    port = int(platform_server.url.rsplit(":", 1)[1])
    resolving_to(monkeypatch, "127.0.0.1")
    response = outbound.session().get(
        f"http://any-name.example:{port}/v1/ping/",
        headers={"Authorization": f"Token {platform_server.api_key}"},
        timeout=2,
    )
    assert response.status_code == 200
    assert platform_server.requests[-1]["headers"]["Host"] == f"any-name.example:{port}"


def test_plain_http_is_refused_by_the_session(public_over_http, settings, monkeypatch):
    settings.MEMORYHUB_SETTINGS = {**settings.MEMORYHUB_SETTINGS, "outbound.allow_http": False}
    resolving_to(monkeypatch, "8.8.8.8")
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: pytest.fail("dialed"))
    with pytest.raises(outbound.OutboundRefused, match="plain http"):
        outbound.session().get("http://public.example/", timeout=2)


def test_a_loopback_address_is_refused_by_default_even_if_listening(strict, platform_server):
    with pytest.raises(outbound.OutboundRefused):
        outbound.session().get(platform_server.url.replace("http", "https") + "/v1/ping/")


def test_redirects_are_not_followed(platform_server):
    platform_server.redirect_to = "http://10.0.0.1/steal"
    response = outbound.session().get(platform_server.url + "/v1/ping/", timeout=2)
    assert response.status_code == 302
    assert len(platform_server.requests) == 1


def test_a_redirect_to_a_private_address_makes_the_backend_unavailable(platform_server):
    platform_server.redirect_to = "http://10.0.0.1/v3/memories/search/"
    backend = make_backend(
        "mem0_platform",
        provider_id="memprov_x",
        config={"base_url": platform_server.url},
        credential={"api_key": platform_server.api_key},
    )
    with pytest.raises(ApiError) as caught:
        backend.search("ns", "anything", 3)
    assert caught.value.status == 503
    assert caught.value.extra["dependency"] == "memory:mem0_platform"
    assert "redirect" in caught.value.message
    assert len(platform_server.requests) == 1


def test_environment_proxies_are_ignored(monkeypatch, platform_server):
    monkeypatch.setenv("HTTP_PROXY", "http://10.9.9.9:3128")
    monkeypatch.setenv("http_proxy", "http://10.9.9.9:3128")
    response = outbound.session().get(platform_server.url + "/v1/ping/", timeout=2)
    assert response.status_code == 401  # answered by the fake server itself


def test_the_backend_refuses_a_private_address_as_unavailable(strict, monkeypatch):
    resolving_to(monkeypatch, "192.168.0.10")
    backend = make_backend(
        "mem0_oss",
        provider_id="memprov_y",
        config={"base_url": "https://mem0.internal.example"},
        credential=None,
    )
    with pytest.raises(ApiError) as caught:
        backend.list("ns", limit=1, offset=0)
    assert caught.value.status == 503
    assert caught.value.reason == "outbound_refused"
    assert caught.value.extra["dependency"] == "memory:mem0_oss"


# --- addresses no setting opens (issue 38) --------------------------------------------------

# Link-local (where cloud metadata services answer), the metadata addresses themselves,
# unspecified, broadcast and multicast, and IPv6 forms that carry one of them.
NEVER_ALLOWED = [
    "169.254.169.254",
    "169.254.10.1",
    "fe80::1",
    "fd00:ec2::254",
    "fd00:ec2::23",  # EKS Pod Identity: hands out credentials
    "fd20:ce::254",  # GCP's metadata over IPv6
    "fd00:42::42",  # Scaleway's metadata over IPv6
    "100.100.100.200",
    "0.0.0.0",  # noqa: S104
    "::",
    "255.255.255.255",
    "224.0.0.1",
    "ff02::1",
    "::ffff:169.254.169.254",
    "64:ff9b::a9fe:a9fe",
    "2002:a9fe:a9fe::",
    "::ffff:0:a9fe:a9fe",  # IPv4-translated (SIIT)
]

# IPv6 forms that carry a private or loopback IPv4 address: refused as that address is.
EMBEDDED_PRIVATE = [
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "2002:a00:1::",  # 6to4 of 10.0.0.1
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "::10.0.0.1",  # IPv4-compatible
    "::127.0.0.1",
    "::ffff:10.0.0.1",  # IPv4-mapped (refused before issue 38 already)
    "::ffff:0:a00:1",  # IPv4-translated (SIIT) of 10.0.0.1
    "::ffff:0:7f00:1",  # ... of 127.0.0.1
]

# The same forms around a public IPv4 address: public, as that address is.
EMBEDDED_PUBLIC = ["64:ff9b::808:808", "2002:808:808::", "::8.8.8.8"]

# Never public, though Python's tables call them global: the deprecated site-local range,
# and an IPv4-translated address, whose IPv4 only a translator on the path reaches.
NEVER_PUBLIC = ["fec0::1", "feff::1", "::ffff:0:808:808"]


def _in_url(address: str) -> str:
    return f"https://[{address}]" if ":" in address else f"https://{address}"


def _save(owner, address: str):
    body = {"type": "mem0_oss", "name": "self", "config": {"base_url": _in_url(address)}}
    return owner.post("/api/v1/memory-providers", body)


@pytest.fixture(params=["strict", "private_over_https_only"])
def any_policy(request):
    """Each test that takes it runs under the strict policy and with private networks allowed."""
    request.getfixturevalue(request.param)
    return request.param


@pytest.fixture
def no_dialing(monkeypatch):
    """Fails the test if a socket is opened: a refusal must come before any connection."""
    dialed: list = []

    def dial(*args, **kwargs):
        dialed.append(args)
        pytest.fail(f"dialed {args}")

    monkeypatch.setattr(socket, "create_connection", dial)
    return dialed


@pytest.mark.parametrize("address", NEVER_ALLOWED)
def test_no_setting_allows_metadata_link_local_unspecified_broadcast_or_multicast(
    any_policy, address
):
    with pytest.raises(outbound.OutboundRefused, match="no setting allows it"):
        outbound.check_address(address)
    assert not outbound.is_public(address)


@pytest.mark.django_db
@pytest.mark.parametrize("address", NEVER_ALLOWED)
def test_they_are_refused_at_save_time_whatever_the_switches(any_policy, owner, address):
    from memoryhub.models import MemoryProvider
    from tests.conftest import error_of

    response = _save(owner, address)
    assert response.status_code == 422, response.content
    error = error_of(response)
    assert error["reason"] == "outbound"
    assert "no setting allows it" in error["message"]
    assert not MemoryProvider.objects.exists()


@pytest.mark.parametrize("address", NEVER_ALLOWED)
def test_a_name_resolving_to_them_is_refused_at_connect_time_whatever_the_switches(
    any_policy, monkeypatch, no_dialing, address
):
    resolving_to(monkeypatch, address)
    outbound.check_url("https://mem0.example.com")  # the name passes at save time
    with pytest.raises(outbound.OutboundRefused, match="no setting allows it"):
        outbound.session().get("https://mem0.example.com/v1/ping/", timeout=2)
    assert no_dialing == []


@pytest.mark.django_db
@pytest.mark.parametrize("address", ["169.254.169.254", "fd00:ec2::254"])
def test_a_provider_test_toward_the_metadata_service_is_refused_with_private_allowed(
    private_over_https_only, owner, monkeypatch, no_dialing, address
):
    from tests.conftest import error_of

    created = owner.post(
        "/api/v1/memory-providers",
        {
            "type": "mem0_oss",
            "name": "lan",
            "config": {"base_url": "https://mem0.lan.example"},
            "credential": {"api_key": "m0-lan-key"},
        },
    )
    assert created.status_code == 201, created.content
    resolving_to(monkeypatch, address)
    response = owner.post(f"/api/v1/memory-providers/{created.json()['id']}/test")
    assert response.status_code == 503
    error = error_of(response)
    assert error["reason"] == "outbound_refused"
    assert "m0-lan-key" not in response.content.decode()
    assert no_dialing == []


@pytest.mark.parametrize("address", EMBEDDED_PRIVATE)
def test_ipv6_forms_of_a_private_ipv4_are_refused_by_the_strict_policy(
    strict, monkeypatch, no_dialing, address
):
    assert not outbound.is_public(address)
    with pytest.raises(outbound.OutboundRefused, match="not a public address"):
        outbound.check_url(_in_url(address))
    resolving_to(monkeypatch, address)
    with pytest.raises(outbound.OutboundRefused, match="not a public address"):
        outbound.session().get("https://mem0.example.com/v1/ping/", timeout=2)


@pytest.mark.django_db
@pytest.mark.parametrize("address", EMBEDDED_PRIVATE)
def test_ipv6_forms_of_a_private_ipv4_are_refused_at_save_time(strict, owner, address):
    from tests.conftest import error_of

    response = _save(owner, address)
    assert response.status_code == 422, response.content
    assert error_of(response)["reason"] == "outbound"


@pytest.mark.parametrize("address", EMBEDDED_PRIVATE)
def test_ipv6_forms_of_a_private_ipv4_are_allowed_with_private_networks(
    private_over_https_only, address
):
    outbound.check_url(_in_url(address))


@pytest.mark.parametrize("address", EMBEDDED_PUBLIC)
def test_ipv6_forms_of_a_public_ipv4_stay_public(strict, address):
    assert outbound.is_public(address)
    outbound.check_url(_in_url(address))


@pytest.mark.parametrize("address", NEVER_PUBLIC)
def test_site_local_and_ipv4_translated_addresses_are_refused_by_the_strict_policy(
    strict, monkeypatch, no_dialing, address
):
    assert not outbound.is_public(address)
    with pytest.raises(outbound.OutboundRefused, match="not a public address"):
        outbound.check_url(_in_url(address))
    resolving_to(monkeypatch, address)
    with pytest.raises(outbound.OutboundRefused, match="not a public address"):
        outbound.session().get("https://mem0.example.com/v1/ping/", timeout=2)


@pytest.mark.parametrize("address", NEVER_PUBLIC)
def test_site_local_and_ipv4_translated_addresses_are_private_networks(
    private_over_https_only, address
):
    outbound.check_url(_in_url(address))


def test_a_name_with_one_refused_and_one_allowed_address_uses_the_allowed_one(
    private_over_https_only, monkeypatch
):
    """A name listing the metadata address first still reaches only its other address."""

    def fake_getaddrinfo(host, port, *args, **kwargs):
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.9", port)),
        ]

    monkeypatch.setattr(outbound.socket, "getaddrinfo", fake_getaddrinfo)
    assert outbound.resolve_allowed("mem0.lan.example", 443) == "10.0.0.9"
