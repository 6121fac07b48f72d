"""Owners' mail templates: the sandbox that renders them (sandbox.py, bounded by
budget.py and sizes.py), run in worker processes of bounded time and memory (worker.py),
lent out by ProcessTemplateRenderer (pool.py), the TemplateRenderer port's adapter."""
