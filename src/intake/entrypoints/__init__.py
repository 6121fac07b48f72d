"""Entry points: the HTTP service, the `intake` command and the library API."""
