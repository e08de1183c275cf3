"""Outbound requests on someone else's say-so go to public addresses only.

A URL that came from a request, a platform profile, a shopper or another party's document
(UCP platform profiles, order ``webhook_url``\\ s, ``--merchant-url`` and the endpoints its
discovery document names, the sandbox's webhook URLs) is fetched through
:func:`guarded_transport`:

* every request (so every redirect hop too) is refused if its host is spelled as a
  non-public address: ``localhost`` and ``*.localhost`` (with or without a trailing dot), IPv6
  literals, and IPv4 in every form the system resolver reads (``127.1``, ``2130706433``,
  ``0x7f000001``, ``0177.0.0.1``); a public IPv4 address is taken in dotted-quad form only;
* every connection resolves its host first and is refused if ANY address is not public
  (:func:`address_refusal`: loopback, private, shared 100.64/10, link-local, multicast,
  reserved, unspecified; an IPv6 address carrying an IPv4 one, ``::ffff:a.b.c.d``, 6to4 or
  NAT64, is judged by that IPv4 address); it then connects to the address it checked, while
  the ``Host`` header and TLS SNI keep the name, so a DNS answer that changes between the check
  and the connection (rebinding) reaches nothing new.

A refusal raises :class:`~cartagent.errors.DestinationRefused` before anything is sent; callers
turn it into their own error and never retry it. ``allow_private=True`` is the opt-in for local
development (the CLI's ``--allow-private-urls``): nothing is checked then. URLs the operator
configures (the PayPal base URL, an agent's ``--webhook-url``) are not someone else's say-so
and are not guarded. Guarded requests go direct: environment proxy settings do not apply.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import unicodedata
from collections.abc import Callable, Iterable, Sequence

import httpcore
import httpx

from .errors import DestinationRefused

__all__ = [
    "Resolver",
    "address_refusal",
    "guarded_transport",
    "host_refusal",
    "system_resolver",
]

Resolver = Callable[[str, int], Sequence[str]]
"""``(host, port)`` to the addresses it resolves to (as text); raises ``OSError`` if none."""

_Address = ipaddress.IPv4Address | ipaddress.IPv6Address
_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})  # IDNA's full stops
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*")
_NUMERIC = re.compile(r"[0-9][0-9a-fA-FxX]*")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def system_resolver(host: str, port: int) -> list[str]:
    """The addresses the operating system's resolver gives ``host`` (``/etc/hosts``, DNS)."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(sockaddr[0]) for *_, sockaddr in found]


def _ipv4_number(host: str) -> ipaddress.IPv4Address | None:
    """``host`` read as an IPv4 address the way ``inet_aton`` and the URL standard read it:
    one to four dot-separated parts, each decimal, octal (``0`` first) or hex (``0x``), the
    last one filling the bytes left; ``None`` if it is not one."""
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()  # a trailing dot
    if not 1 <= len(parts) <= 4 or not all(_NUMBER.fullmatch(part) for part in parts):
        return None
    numbers = []
    for part in parts:
        if part[:2].lower() == "0x":
            numbers.append(int(part[2:] or "0", 16))
        elif part.startswith("0"):
            numbers.append(int(part, 8))
        else:
            numbers.append(int(part))
    *leading, last = numbers
    if any(n > 255 for n in leading) or last >= 256 ** (4 - len(leading)):
        return None
    value = last
    for index, number in enumerate(leading):
        value += number << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _literal(host: str) -> _Address | None:
    """The address ``host`` spells, if it spells one."""
    try:
        return ipaddress.ip_address(host.removeprefix("[").removesuffix("]"))
    except ValueError:
        return _ipv4_number(host)


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for: IPv4-mapped, 6to4 or NAT64."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _kind(address: _Address) -> str | None:
    """What kind of non-public address ``address`` is, or ``None`` if it is public."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_ipv4(address)
        if inner is not None:
            return _kind(inner)
        if address.is_site_local:
            return "a site-local address"
    checks = (
        (address.is_unspecified, "an unspecified address"),
        (address.is_loopback, "a loopback address"),
        (address.is_link_local, "a link-local address"),
        (address.is_multicast, "a multicast address"),
        (address.is_reserved, "a reserved address"),
        (address.is_private, "a private address"),
        # 100.64/10, shared by carrier-grade NAT, is neither private nor global
        (not address.is_global, "a non-public address"),
    )
    return next((kind for refused, kind in checks if refused), None)


def address_refusal(address: str | _Address) -> str | None:
    """Why ``address`` is not a public one to send to, or ``None`` if it is."""
    try:
        found = ipaddress.ip_address(address) if isinstance(address, str) else address
    except ValueError:
        return f"{address!r} is not an IP address"
    kind = _kind(found)
    if kind is None:
        return None
    inner = _embedded_ipv4(found) if isinstance(found, ipaddress.IPv6Address) else None
    return f"{found} ({inner}) is {kind}" if inner is not None else f"{found} is {kind}"


def host_refusal(host: str) -> str | None:
    """Why ``host`` (a URL's host, as written) names a non-public destination without looking
    it up: a local name or an address literal in any spelling; ``None`` otherwise (a name is
    judged by what it resolves to, when it is connected to)."""
    name = unicodedata.normalize("NFKC", host).translate(_DOTS).lower().rstrip(".")
    if not name:
        return "the URL has no host"
    if name in _LOCAL_NAMES or name.endswith(".localhost"):
        return f"{host} is this machine"
    address = _literal(name)
    if address is not None:
        refusal = address_refusal(address)
        if refusal is None and ":" not in name and name != str(address):
            # 010.8.8.8 is 8.8.8.8 to the resolver but an invalid URL to httpx: never fetched
            return f"{host} is a non-standard spelling of {address}"
        return refusal
    if _NUMERIC.fullmatch(name.rsplit(".", 1)[-1]):
        return f"{host} is neither a host name nor an IP address"  # 256.1, 08.0.0.1, ...
    return None


def _refuse(url: httpx.URL, reason: str) -> DestinationRefused:
    shown = url.copy_with(query=None, fragment=None)
    return DestinationRefused(f"refused to send to {shown}: {reason}", url=str(shown))


class _CheckedHosts(httpx.BaseTransport):
    """Refuses each request whose host is spelled as a non-public address, then hands it on."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        reason = host_refusal(request.url.host)
        if reason is not None:
            raise _refuse(request.url, reason)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


class _CheckedConnections(httpcore.NetworkBackend):
    """Resolves each host once, refuses it unless every address is public, and connects to
    the checked address."""

    def __init__(self, resolver: Resolver, network: httpcore.NetworkBackend) -> None:
        self.resolver = resolver
        self.network = network

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        try:
            addresses = list(self.resolver(host, port))
        except (OSError, UnicodeError) as error:
            raise httpcore.ConnectError(f"{host} cannot be resolved: {error}") from error
        for address in addresses:
            reason = address_refusal(address)
            if reason is not None:
                raise DestinationRefused(
                    f"refused to connect to {host}, which resolves to {address}: {reason}",
                    url=host,
                )
        failure: Exception = httpcore.ConnectError(f"{host} resolves to no address")
        for address in addresses:  # all checked: any of them may be connected to
            try:
                return self.network.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as error:
                failure = error
        raise failure

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        raise DestinationRefused(f"refused to connect to the socket {path}", url=path)

    def sleep(self, seconds: float) -> None:
        self.network.sleep(seconds)


def _checked_network(resolver: Resolver, network: httpcore.NetworkBackend) -> httpx.HTTPTransport:
    """httpx's own transport, connecting through :class:`_CheckedConnections`."""
    ssl_context = httpx.create_ssl_context()
    transport = httpx.HTTPTransport(verify=ssl_context)
    transport._pool.close()
    # httpx takes no network backend; its pool is replaced by one built the same way with it.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=ssl_context,
        max_connections=100,
        max_keepalive_connections=20,
        keepalive_expiry=5.0,
        network_backend=_CheckedConnections(resolver, network),
    )
    return transport


def guarded_transport(
    transport: httpx.BaseTransport | None = None,
    *,
    allow_private: bool = False,
    resolver: Resolver = system_resolver,
    network: httpcore.NetworkBackend | None = None,
) -> httpx.BaseTransport | None:
    """The transport to send requests to URLs from someone else through.

    ``transport`` (tests pass one; it connects nowhere) gets the host-spelling check; without
    one, the network is reached through connections checked after ``resolver`` resolves them
    (``network`` makes them; tests pass one). ``allow_private`` returns ``transport`` as it is.
    """
    if allow_private:
        return transport
    if transport is None:
        transport = _checked_network(resolver, network or httpcore.SyncBackend())
    return _CheckedHosts(transport)
