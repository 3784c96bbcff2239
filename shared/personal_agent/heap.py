"""The objects a long-lived process makes at startup, kept out of the garbage collector's way.

Modules, classes, the app, pydantic's schemas and the engine's libraries live as long as the process. Left in
the collector's generations, every full collection walks all of them, a long pause under load (figures in
`bench/PROFILE.md`). `gc.freeze()` moves them
to the permanent generation, so a collection walks only what was made since; garbage is still collected.
"""

from __future__ import annotations

import gc
import importlib


def freeze_startup_heap(*, preload: tuple[str, ...] = (), collect: bool = True) -> int:
    """Import `preload` (modules the process will import on first use anyway), collect what startup left
    behind (unless `collect` is False: a Lambda's init pays for every millisecond), and freeze the rest.
    Returns how many objects are frozen."""
    for module in preload:
        importlib.import_module(module)
    if collect:
        gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
