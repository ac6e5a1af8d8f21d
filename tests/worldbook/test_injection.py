"""How activated entries are rendered and placed (seed 001 injectionConfig)."""

from gateway.lorebook.model import LoreEntry
from plugins.world_book.engine import Activated
from plugins.world_book.plugin import insertion_index, render_memories


def act(id_, type_, content):
    return Activated(LoreEntry(id=id_, content=content, type=type_), "keyword", 1.0, 1)


def test_template_and_headings_by_type():
    entries = [act("a", "goal", "find the gate"), act("b", "semantic", "the gate is old"), act("c", "goal", "rest")]
    assert render_memories(entries, "Lore:\n{{memories}}", False, {}) == "Lore:\nfind the gate\nthe gate is old\nrest"
    by_type = render_memories(entries, "{{memories}}", True, {"semantic": "World", "goal": "Goals"})
    assert by_type == "## World\nthe gate is old\n\n## Goals\nfind the gate\nrest"


def test_depth_insertion_never_splits_a_tool_call_pair():
    messages = [{"role": "system"}, {"role": "user"}, {"role": "assistant", "tool_calls": [{}, {}]},
                {"role": "tool"}, {"role": "tool"}]
    assert insertion_index(messages, 0) == 5
    assert insertion_index(messages, 1) == 2
    assert insertion_index(messages, 2) == 2
    assert insertion_index(messages, 4) == 1
    assert insertion_index(messages, 99) == 0
