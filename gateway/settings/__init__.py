"""Per-user memory settings (:mod:`.memory_settings`): models, store, service."""
