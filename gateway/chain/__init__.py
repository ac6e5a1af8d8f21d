"""The plugin chain (:mod:`.chain`: registry, budgets, fail-open rules), its start-up
validation (:mod:`.validate`), the injection value plugins build (:mod:`.injection`),
forgetting a user through every plugin (:mod:`.forget`) and the plugin SDK (:mod:`.sdk`,
the one module a plugin imports)."""
