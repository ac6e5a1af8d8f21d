"""Built-in plugins, enabled and ordered in ``gateway.yaml`` (``plugins:``).

``builtin_plugins()`` maps each plugin's ``name`` to its class; imports happen on call,
so importing this package costs nothing.
"""

from __future__ import annotations


def builtin_plugins() -> dict[str, type]:
    """``{name: plugin class}`` of every built-in plugin."""
    from plugins.memorize import MemorizePlugin

    classes: list[type] = [MemorizePlugin]
    return {cls.name: cls for cls in classes}  # type: ignore[attr-defined]
