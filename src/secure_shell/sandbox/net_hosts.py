"""The hosts `sandbox.network` may list, and which (host, port, address) an entry lets through.

An entry is a host name (`pypi.org`), a pattern (`*.github.com`: any name below github.com, not
github.com itself), an IPv4 literal or an IPv6 literal in brackets (`[::1]`), each optionally with
`:port`; without a port it allows 80 and 443. Names are matched case-insensitively, without a
trailing dot. Standard library only.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

DEFAULT_PORTS: tuple[int, ...] = (80, 443)
NETWORK_KEY = "sandbox.network"
_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")
MAX_ENTRIES = 1000


@dataclass(frozen=True, slots=True)
class HostEntry:
    """One parsed entry: `host` is a lower-case name, a name pattern's suffix, or an address."""

    text: str
    host: str
    ports: tuple[int, ...]
    wildcard: bool = False
    address: ipaddress.IPv4Address | ipaddress.IPv6Address | None = None

    def names(self, host: str) -> bool:
        """Whether this entry names `host` (a name as asked, or an address literal)."""
        if self.address is not None:
            literal = _address(host)
            return literal is not None and literal == self.address
        name = normal_name(host)
        return name.endswith("." + self.host) if self.wildcard else name == self.host


def normal_name(host: str) -> str:
    return host.strip().lower().rstrip(".")


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def parse_entry(text: str) -> HostEntry:
    """One entry, or ValueError naming it and what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{text!r}: a network entry is a host name, `*.` pattern or IP literal, optionally `:port`")
    raw = text.strip()
    host, ports = raw, tuple(DEFAULT_PORTS)
    if raw.startswith("["):
        end = raw.find("]")
        if end < 0:
            raise ValueError(f"{text!r}: an IPv6 literal is written in brackets, [::1] or [::1]:8080")
        host, rest = raw[: end + 1], raw[end + 1 :]
        if rest:
            if not rest.startswith(":"):
                raise ValueError(f"{text!r}: after an IPv6 literal in brackets only `:port` may follow")
            ports = (_port(text, rest[1:]),)
    elif raw.count(":") == 1:
        host, _, port = raw.partition(":")
        ports = (_port(text, port),)
    elif raw.count(":") > 1:
        raise ValueError(f"{text!r}: an IPv6 literal is written in brackets, [{raw}]")
    if host.startswith("["):
        address = _address(host)
        if address is None or address.version != 6:
            raise ValueError(f"{text!r}: {host} is not an IPv6 address")
        return HostEntry(text, str(address), ports, address=address)
    address = _address(host)
    if address is not None:
        return HostEntry(text, str(address), ports, address=address)
    name = normal_name(host)
    wildcard = name.startswith("*.")
    if wildcard:
        name = name[2:]
    labels = name.split(".")
    if not name or len(name) > 253 or not all(_LABEL.match(label) for label in labels):
        raise ValueError(
            f"{text!r}: not a host name (letters, digits, '-' and '_' in dot-separated labels), "
            "`*.` pattern or IP literal"
        )
    if "*" in host[2 if wildcard else 0 :]:
        raise ValueError(f"{text!r}: a pattern is `*.` followed by a name (`*.github.com`)")
    if wildcard and len(labels) < 2:
        raise ValueError(f"{text!r}: a pattern names at least two labels below the star (`*.example.com`)")
    if all(label.isdigit() for label in labels):
        raise ValueError(f"{text!r}: not an IP address (four decimal numbers up to 255)")
    return HostEntry(text, name, ports, wildcard=wildcard)


def _port(text: str, port: str) -> int:
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ValueError(f"{text!r}: the port after ':' is a number from 1 to 65535")
    return int(port)


def parse_entries(entries: list[str] | tuple[str, ...]) -> tuple[HostEntry, ...]:
    if len(entries) > MAX_ENTRIES:
        raise ValueError(f"sandbox.network lists {len(entries)} hosts; at most {MAX_ENTRIES}")
    return tuple(parse_entry(entry) for entry in entries)


def entry_for(entries: tuple[HostEntry, ...], host: str, port: int) -> HostEntry | None:
    """The first entry that names `host` and `port`."""
    for entry in entries:
        if port in entry.ports and entry.names(host):
            return entry
    return None


def public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether an address is an ordinary one on the internet: not loopback, private, link-local,
    multicast, unspecified or reserved (an IPv4-mapped IPv6 address is judged as its IPv4 one)."""
    if isinstance(address, ipaddress.IPv6Address):
        # an IPv4 address carried in IPv6 (mapped, NAT64, 6to4) is judged as that IPv4 address
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            address = embedded
    return not (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_unspecified
        or address.is_reserved
        or (isinstance(address, ipaddress.IPv4Address) and address in _SHARED)
    )


_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: private in practice
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def address_named(
    entries: tuple[HostEntry, ...], address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int
) -> bool:
    """Whether an entry names this very address and port (so a private or loopback one may be reached)."""
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return any(
        e.address is not None and port in e.ports and (e.address == address or e.address == mapped) for e in entries
    )
