"""The request path below the plugin chain, in the order a request takes it (the routes
that run the chain, chat completions and responses, are :mod:`gateway.routes`, above it).

- :mod:`.asgi`: raw ASGI plumbing (body reading with a size cap, headers, disconnect
  watching, error responses in the OpenAI envelope);
- :mod:`.keystore`, :mod:`.auth`: a bearer key resolves to the caller
  (:class:`gateway.runtime.principal.Principal`);
- :mod:`.handler`: the skeleton every proxied route shares (method check, body, auth,
  disconnect watcher, error mapping);
- :mod:`.passthrough` (embeddings, models: no plugin runs);
- :mod:`.upstream`: pooled upstream clients; every transport error and timeout is mapped
  to the gateway's error tree here, once; :mod:`.model_client`: the gateway's own model calls;
- :mod:`.sse`, :mod:`.assembly`: SSE decoding that keeps each event's bytes, the reply
  assembled on the side; :mod:`.responses_owners`: who created which Responses object;
- :mod:`.wire`: the OpenAI chat wire types (``ChatRequest``, ``Chunk``).
"""
