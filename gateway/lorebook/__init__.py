"""World-book (lorebook) entries of seed 001, stored per role (friend) and optionally per
user: the model (:mod:`gateway.lorebook.model`), its Redis repository
(:mod:`gateway.lorebook.repository`) and SillyTavern World Info interop
(:mod:`gateway.lorebook.sillytavern`). The trigger engine is a
plugin's: it reads the books through the SDK (``Services.lorebooks``)."""
