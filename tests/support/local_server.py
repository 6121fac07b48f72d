"""The lifecycle shared by the local HTTP servers the tests talk to: a threaded server on a
free 127.0.0.1 port, started and stopped cleanly (no thread outlives `stop()`)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self

from tests.support.processes import Background


class QuietServer(ThreadingHTTPServer):
    # Handler threads are joined by server_close(), so none outlives stop().
    daemon_threads = False
    block_on_close = True
    owner: Any

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that gave up (the timeout tests, a body not read to the end) leaves a
        # broken pipe behind; that is the expected end of such an exchange.
        return


class LocalHttpServer(Background):
    """Subclasses name their request handler; handlers reach them as `server.owner`."""

    handler: ClassVar[type[BaseHTTPRequestHandler]]
    server_class: ClassVar[type[QuietServer]] = QuietServer
    thread_name: ClassVar[str] = "local-http-server"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # Set while stopping, so handlers that are told to delay wake up at once.
        self._stopping = threading.Event()
        self._server: QuietServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        if self._server is not None:
            raise RuntimeError(f"{self.thread_name} already started")
        self._stopping.clear()
        server = self.server_class(("127.0.0.1", 0), self.handler)
        server.owner = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=self.thread_name,
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake delayed answers, and wait for every handler to finish."""
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._stopping.set()
        server.shutdown()
        thread.join()
        server.server_close()  # joins the handler threads (block_on_close)
        self._server = None
        self._thread = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError(f"{self.thread_name} not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"
