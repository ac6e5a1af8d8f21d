"""Every HTTP surface other than the proxy routes: the memory API (:mod:`.memories`),
lorebooks (:mod:`.lorebooks`), MCP (:mod:`.mcp`), the admin API (:mod:`.admin`) and the
web console's static files (:mod:`.console`)."""
