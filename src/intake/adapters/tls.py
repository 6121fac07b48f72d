"""The TLS settings of intake's own HTTP clients (the challenge providers, webhook and
chat receivers, Akismet): httpx's defaults, the CA roots of certifi or of SSL_CERT_FILE
and SSL_CERT_DIR, made once per process and shared. Loading the roots costs about 30 ms
of CPU, which every client would otherwise pay again when it is opened."""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def client_tls() -> ssl.SSLContext:
    """The process's one context; a context is safe to share between clients, threads
    and event loops."""
    return httpx.create_ssl_context()
