"""Built-in plugins, enabled and ordered in ``gateway.yaml`` (``plugins:``).

``builtin_plugins()`` maps each plugin's ``name`` to its class; imports happen on call,
so importing this package costs nothing.
"""

from __future__ import annotations


def builtin_plugins() -> dict[str, type]:
    """``{name: plugin class}`` of every built-in plugin."""
    from plugins.auto_recall import AutoRecall
    from plugins.context_selection import ContextSelection
    from plugins.hybrid_injection import HybridInjection
    from plugins.memorize import MemorizePlugin
    from plugins.personalization import Personalization
    from plugins.recall_report import RecallReport
    from plugins.token_budget import TokenBudget
    from plugins.tool_splice import ToolSplice
    from plugins.world_book.plugin import WorldBook

    classes: list[type] = [
        RecallReport, ContextSelection, AutoRecall, HybridInjection, Personalization, ToolSplice, TokenBudget,
        MemorizePlugin, WorldBook,
    ]
    return {cls.name: cls for cls in classes}  # type: ignore[attr-defined]
