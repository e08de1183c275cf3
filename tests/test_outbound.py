"""Outbound requests on someone else's say-so: every spelling of a non-public host refused,
names judged by what they resolve to, connections pinned to the checked address, every
redirect hop checked again. No real DNS: resolvers and the network are stand-ins."""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import Iterable, Mapping, Sequence

import httpcore
import httpx
import pytest

from cartagent.errors import CartagentError, DestinationRefused
from cartagent.outbound import (
    _CheckedConnections,
    address_refusal,
    guarded_transport,
    host_refusal,
    system_resolver,
)

NON_PUBLIC_HOSTS = [
    "localhost",
    "localhost.",  # the trailing dot names the same host
    "LocalHost..",
    "foo.localhost",
    "foo.localhost.",
    "localhost.localdomain",
    "127.0.0.1",
    "127.0.0.1.",
    "127.1",  # the short forms inet_aton reads
    "127.0.1",
    "2130706433",  # one decimal number
    "0x7f000001",  # hex
    "0x7f.1",
    "0177.0.0.1",  # octal
    "017700000001",
    "0",
    "0.0.0.0",
    "[::1]",
    "::1",
    "[::]",
    "[::ffff:127.0.0.1]",  # IPv4-mapped
    "[::ffff:7f00:1]",
    "[::ffff:10.0.0.1]",
    "[::7f00:1]",  # IPv4-compatible, reserved
    "[2002:7f00:1::]",  # 6to4 of 127.0.0.1
    "[64:ff9b::a00:1]",  # NAT64 of 10.0.0.1
    "10.0.0.8",
    "10.1",
    "172.16.0.1",
    "192.168.1.1",
    "100.64.0.1",  # shared address space (carrier-grade NAT): not private, not global
    "100.127.255.254",
    "169.254.169.254",  # link-local: cloud metadata
    "[fe80::1]",
    "[fe80::1%25eth0]",
    "[fec0::1]",  # site-local
    "[fc00::1]",  # unique local
    "[fd12:3456::1]",
    "224.0.0.1",  # multicast
    "239.255.255.250",
    "[ff02::1]",
    "240.0.0.1",  # reserved 240/4
    "255.255.255.255",
    "198.18.0.1",  # benchmarking
    "192.0.2.1",  # documentation
    "\uff11\uff12\uff17.\uff10.\uff10.\uff11",  # full-width digits: IDNA reads 127.0.0.1
    "127\u30020\u30020\u30021",  # ideographic full stops
    "256.0.0.1",  # numeric but no address: refused rather than looked up
    "08.0.0.1",
]
PUBLIC_HOSTS = [
    "shop.example",
    "example.com.",
    "printer",  # one label: judged by what it resolves to
    "8.8.8.8",
    "[2606:4700::1111]",
    "[::ffff:8.8.8.8]",
    "[64:ff9b::808:808]",  # NAT64 of 8.8.8.8
]


@pytest.mark.parametrize("host", NON_PUBLIC_HOSTS)
def test_every_spelling_of_a_non_public_host_is_refused(host: str) -> None:
    assert host_refusal(host) is not None


@pytest.mark.parametrize("host", PUBLIC_HOSTS)
def test_public_hosts_pass(host: str) -> None:
    assert host_refusal(host) is None


def test_refusals_say_what_the_address_is() -> None:
    assert host_refusal("0x7f000001") == "127.0.0.1 is a loopback address"
    assert host_refusal("100.64.0.1") == "100.64.0.1 is a non-public address"
    assert host_refusal("[::ffff:10.0.0.1]") == "::ffff:a00:1 (10.0.0.1) is a private address"
    assert address_refusal("224.0.0.1") == "224.0.0.1 is a multicast address"
    assert address_refusal("1.1.1.1") is None


class Counting(httpx.BaseTransport):
    """Answers 200 (or redirects to ``location``), counting requests."""

    def __init__(self, location: str | None = None) -> None:
        self.location = location
        self.urls: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.urls.append(str(request.url))
        if self.location is not None and len(self.urls) == 1:
            return httpx.Response(302, headers={"Location": self.location})
        return httpx.Response(200, text="ok")


@pytest.mark.parametrize(
    "url",
    [
        "https://127.1/hook",
        "http://2130706433/",
        "https://0x7f000001:8443/x",
        "https://0x7f.1/",  # (httpx itself refuses 0177.0.0.1 as malformed)
        "https://[::ffff:127.0.0.1]/",
        "https://[::1]/",
        "https://localhost./",
        "https://foo.localhost/",
        "https://100.64.0.1/",
        "https://[fe80::1]/",
        "https://0.0.0.0/",
    ],
)
def test_a_request_to_a_non_public_spelling_is_refused_unsent(url: str) -> None:
    inner = Counting()
    http = httpx.Client(transport=guarded_transport(inner))
    with http, pytest.raises(DestinationRefused) as caught:
        http.get(url)
    assert inner.urls == []
    assert isinstance(caught.value, CartagentError) and "refused" in str(caught.value)


def test_each_redirect_hop_is_checked() -> None:
    inner = Counting(location="http://169.254.169.254/latest/meta-data/")
    http = httpx.Client(transport=guarded_transport(inner), follow_redirects=True)
    with http, pytest.raises(DestinationRefused):
        http.get("https://shop.example/start")
    assert inner.urls == ["https://shop.example/start"]


def test_the_opt_in_lets_local_addresses_through() -> None:
    inner = Counting()
    assert guarded_transport(inner, allow_private=True) is inner
    with httpx.Client(transport=guarded_transport(inner, allow_private=True)) as http:
        assert http.get("http://127.0.0.1:8780/").text == "ok"


# ---------------------------------------------------------------- resolution and pinning


class Stream(httpcore.NetworkStream):
    """A connection that answers every request with ``answer``, keeping what was written."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.written = b""

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        answer, self.answer = self.answer, b""
        return answer

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.written += buffer

    def close(self) -> None:
        pass


class Network(httpcore.NetworkBackend):
    """Connects to nothing: records the addresses asked for and answers with ``answer``."""

    def __init__(self, answer: bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") -> None:
        self.answer = answer
        self.connected: list[str] = []
        self.calls: list[tuple[object, ...]] = []
        self.streams: list[Stream] = []
        self.refuse = False
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        self.connected.append(host)
        self.calls.append((host, port, timeout, local_address, socket_options))
        if self.refuse:
            raise httpcore.ConnectError(f"{host} refused the connection")
        self.streams.append(Stream(self.answer))
        return self.streams[-1]


class Resolver:
    """Resolves from ``names`` (a name with several answers gives the next one each time)."""

    def __init__(self, names: Mapping[str, Sequence[Sequence[str]]]) -> None:
        self.names = {name: list(answers) for name, answers in names.items()}
        self.asked: list[str] = []
        self.ports: list[int] = []

    def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        self.ports.append(port)
        answers = self.names.get(host)
        if not answers:
            raise OSError(f"{host}: no such name")
        return answers.pop(0) if len(answers) > 1 else answers[0]


@pytest.mark.parametrize(
    "addresses",
    [
        ["127.0.0.1"],
        ["10.0.0.5"],
        ["100.64.1.1"],
        ["::1"],
        ["::ffff:192.168.0.1"],
        ["fe80::1%eth0"],
        ["8.8.8.8", "192.168.1.1"],  # any one non-public address is enough
    ],
)
def test_a_name_that_resolves_to_a_non_public_address_is_refused(addresses: list[str]) -> None:
    network = Network()
    resolver = Resolver({"internal.example": [addresses]})
    transport = guarded_transport(resolver=resolver, network=network)
    http = httpx.Client(transport=transport)
    with http, pytest.raises(DestinationRefused) as caught:
        http.get("https://internal.example/hook")
    assert network.connected == []
    assert "internal.example" in str(caught.value)


def test_the_connection_goes_to_the_address_that_was_checked() -> None:
    network = Network()
    # A rebinding name: public when checked, loopback if it were asked again.
    resolver = Resolver({"shop.example": [["93.184.215.14"], ["127.0.0.1"]]})
    with httpx.Client(transport=guarded_transport(resolver=resolver, network=network)) as http:
        assert http.get("http://shop.example/feed").text == "ok"
    assert network.connected == ["93.184.215.14"]
    assert resolver.asked == ["shop.example"]
    assert b"Host: shop.example\r\n" in network.streams[0].written


def test_a_redirect_to_a_name_that_resolves_privately_is_refused() -> None:
    moved = b"HTTP/1.1 302 Found\r\nLocation: http://internal.example/\r\nContent-Length: 0\r\n\r\n"
    network = Network(answer=moved)
    resolver = Resolver({"shop.example": [["93.184.215.14"]], "internal.example": [["10.0.0.1"]]})
    transport = guarded_transport(resolver=resolver, network=network)
    http = httpx.Client(transport=transport, follow_redirects=True)
    with http, pytest.raises(DestinationRefused):
        http.get("http://shop.example/")
    assert network.connected == ["93.184.215.14"]
    assert resolver.asked == ["shop.example", "internal.example"]


def test_a_name_that_does_not_resolve_is_a_transport_error() -> None:
    transport = guarded_transport(resolver=Resolver({}), network=Network())
    with httpx.Client(transport=transport) as http, pytest.raises(httpx.ConnectError):
        http.get("https://nowhere.example/")


SPELLINGS = {
    "127.1": "127.0.0.1 is a loopback address",
    "10.1": "10.0.0.1 is a private address",
    "10.255.1": "10.255.0.1 is a private address",
    "0x7f.1": "127.0.0.1 is a loopback address",
    "0177.0.0.1": "127.0.0.1 is a loopback address",
    "017700000001": "127.0.0.1 is a loopback address",
    "2130706433": "127.0.0.1 is a loopback address",
    "0x": "0.0.0.0 is an unspecified address",
    "0.0.0.0": "0.0.0.0 is an unspecified address",
    "169.254.169.254": "169.254.169.254 is a link-local address",
    "240.0.0.1": "240.0.0.1 is a reserved address",
    "[fec0::1]": "fec0::1 is a site-local address",
    "[64:ff9b::a00:1]": "64:ff9b::a00:1 (10.0.0.1) is a private address",
    "010.8.8.8": "010.8.8.8 is a non-standard spelling of 8.8.8.8",
    "1.2.3.4.0": "1.2.3.4.0 is neither a host name nor an IP address",
    "1.16777216": "1.16777216 is neither a host name nor an IP address",  # one past 1.255.255.255
    "1.16777215": "1.16777215 is a non-standard spelling of 1.255.255.255",
    "": "the URL has no host",
    ".": "the URL has no host",
}


@pytest.mark.parametrize("host", sorted(SPELLINGS))
def test_each_spelling_is_read_as_the_address_the_resolver_would_use(host: str) -> None:
    assert host_refusal(host) == SPELLINGS[host]


def test_an_address_object_is_judged_as_its_text_is() -> None:
    assert address_refusal(ipaddress.ip_address("10.0.0.1")) == "10.0.0.1 is a private address"
    assert address_refusal("not an address") == "'not an address' is not an IP address"


def test_a_refusal_names_the_url_without_its_query_or_fragment() -> None:
    inner = Counting()
    with (
        httpx.Client(transport=guarded_transport(inner)) as http,
        pytest.raises(DestinationRefused) as caught,
    ):
        http.get("https://127.1/hook?token=secret#part")
    assert caught.value.url == "https://127.1/hook"
    assert str(caught.value) == (
        "refused to send to https://127.1/hook: 127.0.0.1 is a loopback address"
    )


def test_a_name_resolving_privately_is_refused_naming_it_and_the_address() -> None:
    resolver = Resolver({"internal.example": [["10.0.0.5"]]})
    transport = guarded_transport(resolver=resolver, network=Network())
    with httpx.Client(transport=transport) as http, pytest.raises(DestinationRefused) as caught:
        http.get("https://internal.example:8443/hook")
    assert caught.value.url == "internal.example"
    assert str(caught.value) == (
        "refused to connect to internal.example, which resolves to 10.0.0.5: "
        "10.0.0.5 is a private address"
    )
    assert resolver.ports == [8443]


def test_the_checked_connection_is_made_with_the_port_and_timeout_asked_for() -> None:
    network = Network()
    resolver = Resolver({"shop.example": [["93.184.215.14"]]})
    transport = guarded_transport(resolver=resolver, network=network)
    with httpx.Client(transport=transport, timeout=2.5) as http:
        assert http.get("http://shop.example:8080/feed").text == "ok"
    assert network.calls == [("93.184.215.14", 8080, 2.5, None, None)]


def test_when_every_address_fails_the_last_failure_is_raised() -> None:
    network = Network()
    network.refuse = True
    resolver = Resolver({"shop.example": [["93.184.215.14", "93.184.215.15"]]})
    http = httpx.Client(transport=guarded_transport(resolver=resolver, network=network))
    failed = pytest.raises(httpx.ConnectError, match=r"^93\.184\.215\.15 refused the connection$")
    with http, failed:
        http.get("http://shop.example/")
    assert network.connected == ["93.184.215.14", "93.184.215.15"]


def test_a_name_with_no_address_or_none_at_all_is_a_connect_error_saying_so() -> None:
    resolver = Resolver({"empty.example": [[]]})
    with httpx.Client(transport=guarded_transport(resolver=resolver, network=Network())) as http:
        with pytest.raises(httpx.ConnectError, match=r"^empty\.example resolves to no address$"):
            http.get("http://empty.example/")
        with pytest.raises(httpx.ConnectError) as caught:
            http.get("http://nowhere.example/")
    assert str(caught.value) == "nowhere.example cannot be resolved: nowhere.example: no such name"


def test_the_checked_network_refuses_unix_sockets_and_sleeps_as_the_network_does() -> None:
    network = Network()
    checked = _CheckedConnections(Resolver({}), network)
    with pytest.raises(DestinationRefused) as caught:
        checked.connect_unix_socket("/run/docker.sock")
    assert str(caught.value) == "refused to connect to the socket /run/docker.sock"
    assert caught.value.url == "/run/docker.sock"
    checked.sleep(0.25)
    assert network.slept == [0.25]


def test_the_checked_pool_keeps_httpx_defaults_and_verifies_tls() -> None:
    transport = guarded_transport(resolver=Resolver({}), network=Network())
    pool = transport.inner._pool  # type: ignore[union-attr]
    assert (pool._max_connections, pool._max_keepalive_connections) == (100, 20)
    assert pool._keepalive_expiry == 5.0
    assert isinstance(pool._network_backend, _CheckedConnections)
    assert pool._ssl_context.verify_mode == ssl.CERT_REQUIRED
    assert pool._ssl_context.check_hostname


def test_the_system_resolver_gives_the_addresses_of_a_host() -> None:
    assert system_resolver("127.0.0.2", 80) == ["127.0.0.2"]  # a literal: no DNS asked
