"""What one proxy listener lets through (a session's pod, or a shell's commands without a pod), and
what it counted: the proxy asks `Access.decide` for each request (net_proxy.py).

A host is allowed when an entry of `sandbox.network` names it and the port, or the person said yes
(askNetwork, once per host per session); then the name is resolved here and an address that is not
an ordinary internet one (loopback, private, link-local, multicast ...) is refused unless an entry
names that very address. Every refusal is counted with its host, so a failed command's reply can say
that the sandbox refused it and which key allows it (`denials_since`); each decision is recorded
in the audit trail once per host, port, outcome and running command.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ipaddress
import socket
import sys
import threading
from collections import deque
from dataclasses import dataclass
from typing import Callable, Union

from secure_shell.sandbox.net_hosts import NETWORK_KEY, address_named, entry_for, parse_entries, public

Address = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]
Asker = Callable[[str, int], "concurrent.futures.Future[bool]"]
LOOKUP_SECONDS = 10.0
KEPT_DENIALS = 64  # the most recent refused hosts each listener remembers
LOOKUP = " (a name lookup)"  # how a name the pod's DNS responder refused is shown
LOOKUP_REFUSED = "a direct name lookup: in a pod only the proxy resolves names"
MAX_RECORDED = 4096  # distinct audit records per listener (a loop of refused connections writes each once)


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    message: str = ""
    address: Address | None = None  # the checked address the proxy connects to


def _literal(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _written(host: str, port: int) -> str:
    """How an entry naming this host (and port, unless it is 80 or 443) is written."""
    name = f"[{host}]" if ":" in host else host
    return name if port in (80, 443) else f"{name}:{port}"


def _kind(address: Address) -> str:
    for name in ("loopback", "link_local", "multicast", "unspecified", "private", "reserved"):
        if getattr(address, f"is_{name}"):
            return name.replace("_", "-")
    return "non-public"


class Access:
    """One listener's rules and counts. `record(event, **fields)` writes the audit trail;
    `executions()` names the commands running there now (for the records); `ask` is set while a
    session whose client can elicit is at hand, and cleared after."""

    def __init__(
        self,
        shell: str,
        origin: str | None,
        network: str | tuple[str, ...],
        ask_network: bool = False,
        record: Callable[..., None] | None = None,
        executions: Callable[[], list[str]] = lambda: [],
    ) -> None:
        self.shell = shell
        self.origin = origin
        self.entries = parse_entries(network) if isinstance(network, tuple) else ()
        self.network_off = not isinstance(network, tuple)  # deny: counted and refused, nothing listed
        self.ask_network = ask_network and not self.network_off
        self.ask: Asker | None = None
        self._record = record
        self._executions = executions
        self._lock = threading.Lock()
        self.denied = 0  # refusals so far
        self._denials: deque[tuple[int, str, str]] = deque(maxlen=KEPT_DENIALS)  # number, host, why
        self._answers: dict[str, asyncio.Future[bool]] = {}
        self._recorded: set[tuple[object, ...]] = set()

    def denials_since(self, mark: int) -> list[str]:
        """The refused `host:port`s after the count was `mark` (the most recent KEPT_DENIALS), in order."""
        with self._lock:
            return list(dict.fromkeys(host for number, host, _ in self._denials if number > mark))

    def deny_note(self, hosts: list[str]) -> str:
        """The reply note for a failed command whose connections were refused."""
        shown = ", ".join(hosts[:5]) + (f" and {len(hosts) - 5} more" if len(hosts) > 5 else "")
        first = hosts[0].removesuffix(LOOKUP)
        first = first.rpartition(":")[0] if first.endswith((":80", ":443")) else first
        if self.network_off:
            return (
                f"[the sandbox refused this command's network access to {shown}: the network is off "
                f'({NETWORK_KEY}: deny); to allow a host, list it: {NETWORK_KEY}: ["{first}"]]'
            )
        with self._lock:
            why = next((reason for _, host, reason in reversed(self._denials) if host == hosts[0]), "")
        return f"[the sandbox's proxy refused {shown}: {why} ({NETWORK_KEY}; its HTTP 403 answer says what allows it)]"

    async def decide(self, host: str, port: int) -> Decision:
        entry = None if self.network_off else entry_for(self.entries, host, port)
        person = entry is None and self.ask_network and await self._person_allows(host, port)
        if entry is None and not person:
            if self.network_off:
                why = f"the network is off for these commands ({NETWORK_KEY}: deny)"
                how = f'to allow this host set {NETWORK_KEY}: ["{_written(host, port)}"]'
            else:
                why = f"{_written(host, port)} is not listed in {NETWORK_KEY}"
                how = f'to allow it, add "{_written(host, port)}" to {NETWORK_KEY}'
            return self._deny(host, port, why, how)
        literal = _literal(host)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                infos = await asyncio.wait_for(
                    asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM), LOOKUP_SECONDS
                )
            except (OSError, asyncio.TimeoutError) as exc:
                return self._deny(host, port, f"its name could not be resolved ({exc})", "check the name", count=False)
            addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
        # an address the person was shown (the host asked was that literal) counts as named
        permitted = [a for a in addresses if public(a) or address_named(self.entries, a, port) or (person and literal)]
        if not permitted:
            address = addresses[0]
            return self._deny(
                host,
                port,
                f"it resolves to {address}, a {_kind(address)} address",
                f'only an entry of {NETWORK_KEY} naming that address ("{_written(str(address), port)}") allows it',
            )
        self._note("network", host, port, True, address=str(permitted[0]))
        return Decision(True, address=permitted[0])

    def _deny(self, host: str, port: int, why: str, how: str, count: bool = True) -> Decision:
        if count:
            with self._lock:
                self.denied += 1
                self._denials.append((self.denied, f"[{host}]:{port}" if ":" in host else f"{host}:{port}", why))
        self._note("network", host, port, False, reason=why)
        return Decision(False, f"secure-shell sandbox refused {_written(host, port)}: {why}; {how}.")

    def lookup_refused(self, name: str) -> None:
        """A name a pod's DNS responder refused (programs that ignore the proxy variables look names
        up themselves): counted like a refused host."""
        with self._lock:
            self.denied += 1
            self._denials.append((self.denied, f"{name}{LOOKUP}", LOOKUP_REFUSED))
        self._note("network", name, 53, False, reason=LOOKUP_REFUSED)

    async def _person_allows(self, host: str, port: int) -> bool:
        """Ask once per host for this listener (a session); a later request waits for the same answer."""
        key = _written(host, port)
        found = self._answers.get(key)
        if found is None:
            ask = self.ask
            if ask is None:
                return False  # no client that can ask is at hand: refused as without askNetwork
            try:
                found = asyncio.wrap_future(ask(host, port))
            except RuntimeError:
                return False
            self._answers[key] = found
        try:
            return bool(await asyncio.shield(found))
        except Exception:
            return False

    def _note(self, event: str, host: str, port: int, allowed: bool, **fields: object) -> None:
        if self._record is None:
            return
        executions = self._executions()
        key = (host, port, allowed, tuple(executions))
        if key in self._recorded or len(self._recorded) >= MAX_RECORDED:
            return
        self._recorded.add(key)
        try:
            self._record(
                event,
                session=self.origin,
                shell=self.shell,
                host=host,
                port=port,
                allowed=allowed,
                executionIds=executions,
                **fields,
            )
        except Exception as exc:  # the trail could not be written: said, and the decision stands
            print(f"secure-shell: {exc} (network {host}:{port})", file=sys.stderr, flush=True)
