"""The ``world_book`` plugin (seed 001): SillyTavern-compatible world-book triggers.

:mod:`plugins.world_book.engine` is the sans-IO activation engine,
:mod:`plugins.world_book.plugin` the request rewriter that loads books, runs the engine
and injects what it activated."""
