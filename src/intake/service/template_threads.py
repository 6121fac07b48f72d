"""Rendering owners' templates off the event loop, on a few threads of their own.

The TemplateRenderer port blocks its caller for as long as a render takes (its adapter
bounds that). Called on the event loop it would hold every request and delivery; called
on anyio's shared threads, a burst of slow renders queued for the renderer's workers
could take every one of them from the other work that needs a thread (files served, the
metrics). So renders take at most RENDER_THREADS threads per event loop, and the rest
wait on the loop, holding nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, TypeVarTuple

import anyio
from anyio.lowlevel import RunVar

RENDER_THREADS = 4

_Result = TypeVar("_Result")
_Args = TypeVarTuple("_Args")
_LIMITER: RunVar[anyio.CapacityLimiter] = RunVar("template_render_threads")


def _limiter() -> anyio.CapacityLimiter:
    try:
        return _LIMITER.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(RENDER_THREADS)
        _LIMITER.set(limiter)
        return limiter


async def off_the_loop(render: Callable[[*_Args], _Result], *args: *_Args) -> _Result:
    """`render(*args)` on one of the rendering threads of the running event loop."""
    return await anyio.to_thread.run_sync(render, *args, limiter=_limiter())
