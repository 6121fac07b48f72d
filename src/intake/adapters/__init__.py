"""Adapters: the ports bound to SQLite, PostgreSQL, Redis, HTTP, and in-memory fakes."""
