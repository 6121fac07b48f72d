"""The owner-side repositories written once for SQLite and PostgreSQL, over an
`Executor` (executor.py); README.md says how one is written."""
