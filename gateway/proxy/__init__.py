"""The request path, in the order a request takes it.

- :mod:`.asgi`: raw ASGI plumbing (body reading with a size cap, headers, disconnect
  watching, error responses in the OpenAI envelope);
- :mod:`.principal`, :mod:`.keystore`, :mod:`.auth`: a bearer key resolves to the caller;
- :mod:`.handler`: the skeleton every proxied route shares (method check, body, auth,
  disconnect watcher, error mapping);
- :mod:`.chat` (``/v1/chat/completions``) and :mod:`.passthrough` (embeddings, models);
  :mod:`.model_route`, what the model routes share; :mod:`.responses` (``/v1/responses``),
  with :mod:`.responses_wire` (the chain's view of a Responses request and back) and
  :mod:`.responses_loop` (the gateway's tool loop in the Responses form);
- :mod:`.upstream`: pooled upstream clients; every transport error and timeout is mapped
  to the gateway's error tree here, once;
- :mod:`.relay`, :mod:`.sse`, :mod:`.assembly`: bytes back to the client, SSE decoding
  that keeps each event's bytes, the reply assembled on the side;
- :mod:`.wire`: the OpenAI chat wire types (``ChatRequest``, ``Chunk``).
"""
