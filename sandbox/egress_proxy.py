"""The only way out of an isolated image build: an HTTP proxy that reaches the package registries and nothing else.

It runs in a container of its own (python3, the standard library only: `python3 -c "$(cat egress_proxy.py)" PORT
HOST...`), attached to the build's internal network and to one with a route out. It answers:
- `CONNECT host:443` (HTTPS: pip, npm) and `GET http://host/...` (apt's plain HTTP) for an allowed host name only;
- never an address written as a number, never a name that resolves into a blocked range (the metadata endpoint
  169.254.169.254, loopback, private, shared and link-local ranges), never another port;
- 403 with the reason for everything else, before any connection is made.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import sys

# Where a build must never be led: loopback, link-local (the metadata endpoint), private and shared ranges, this
# host's networks. (Documentation ranges stay open: a test network may put its registry mirror there.)
BLOCKED = tuple(ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16",
    "224.0.0.0/3", "::/128", "::1/128", "fc00::/7", "fe80::/10", "ff00::/8", "::ffff:0:0/96"))
HEAD_LIMIT = 16 * 1024
IDLE_S = 120.0
PORTS = {"CONNECT": 443, "GET": 80, "HEAD": 80}


def refusal(method: str, host: str, port: int, allowed: frozenset[str]) -> str | None:
    """Why a request may not go out (None when it may): the method, port, name and where the name leads."""
    if method not in PORTS or port != PORTS[method]:
        return f"{method} to port {port} is not a registry request"
    try:
        ipaddress.ip_address(host.strip("[]"))
        return f"{host} is an address; only registry names are reached"
    except ValueError:
        pass
    if host.lower().rstrip(".") not in allowed:
        return f"{host} is not a package registry this build may reach"
    return None


def public_addresses(host: str, port: int) -> list[str] | str:
    """The host's addresses when every one is public, else why not."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        return f"{host} does not resolve ({exc})"
    addresses = sorted({str(info[4][0]) for info in found})
    private = [a for a in addresses if any(ipaddress.ip_address(a) in net for net in BLOCKED)]
    if private or not addresses:
        return f"{host} resolves to a non-public address ({', '.join(private) or 'none'})"
    return addresses


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await asyncio.wait_for(reader.read(65536), IDLE_S):
            writer.write(chunk)
            await writer.drain()
    except (TimeoutError, OSError):
        pass
    finally:
        writer.close()


async def _deny(writer: asyncio.StreamWriter, reason: str) -> None:
    body = f"refused by the arena's build proxy: {reason}\n".encode()
    writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: "
                 + str(len(body)).encode() + b"\r\n\r\n" + body)
    await writer.drain()
    writer.close()


def _target(method: str, target: str) -> tuple[str, int, str]:
    """(host, port, the path to send upstream) of a request line's target."""
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        return host, int(port), ""
    rest = target.removeprefix("http://")
    authority, slash, path = rest.partition("/")
    host, _, port = authority.partition(":")
    return host, int(port or 80), slash + path


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, allowed: frozenset[str]) -> None:
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
    except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
        writer.close()
        return
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, _ = lines[0].split(" ", 2)
        host, port, path = _target(method, target)
    except ValueError:
        await _deny(writer, "not a proxy request")
        return
    why = refusal(method, host, port, allowed)
    addresses = public_addresses(host, port) if why is None else why
    if isinstance(addresses, str):
        await _deny(writer, addresses)
        return
    try:
        upstream_reader, upstream_writer = await asyncio.wait_for(asyncio.open_connection(addresses[0], port), 30)
    except (TimeoutError, OSError) as exc:
        await _deny(writer, f"{host} did not answer ({exc})")
        return
    if method == "CONNECT":
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
    else:
        kept = [line for line in lines[1:] if line and not line.lower().startswith(("proxy-", "connection:"))]
        upstream_writer.write("\r\n".join([f"{method} {path or '/'} HTTP/1.1", *kept, "Connection: close", "", ""])
                              .encode("latin-1"))
    await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))


async def serve(port: int, allowed: frozenset[str]) -> None:
    server = await asyncio.start_server(lambda r, w: handle(r, w, allowed), "0.0.0.0", port, limit=HEAD_LIMIT)
    print(f"arena build proxy on port {port} for {', '.join(sorted(allowed))}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), frozenset(h.lower() for h in sys.argv[2:])))
