"""Group chats: each speaker is an end user inside the key's namespace (:mod:`.group`)."""
