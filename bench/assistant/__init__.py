"""``python -m bench assistant``: everyday assistant chats replayed through the gateway,
then probe questions in new conversations (:mod:`bench.assistant.run`)."""
