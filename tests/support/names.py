"""Host names a test may rely on."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from intake.domain.webhook_targets import is_public_address


def own_private_name() -> str:
    """This machine's host name, when it resolves (from the hosts file, most often) to
    an address of its own network; the test is skipped otherwise."""
    name = socket.gethostname()
    try:
        infos = socket.getaddrinfo(name, 443, type=socket.SOCK_STREAM)
    except OSError:
        pytest.skip("this machine's name does not resolve")
    addresses = {ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos}
    if all(is_public_address(address) for address in addresses):
        pytest.skip("this machine's name resolves to public addresses only")
    return name
