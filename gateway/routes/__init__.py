"""The proxied OpenAI routes that run the plugin chain, above it (:mod:`gateway.chain`):

- :mod:`.chat` (``/v1/chat/completions``) and :mod:`.model_route`, what the model routes
  share (the caller's chain, the call's settings and :class:`~gateway.chain.sdk.CallContext`);
- :mod:`.relay`: bytes back to the client, through the chain's stream filters when needed;
- :mod:`.responses` (``/v1/responses``), with :mod:`.responses_wire` (the chain's view of a
  Responses request and back) and :mod:`.responses_loop` (the gateway's tool loop in the
  Responses form).

What they run on (ASGI plumbing, auth, upstream calls, SSE, the wire types, the
pass-through routes that run no plugin) is :mod:`gateway.proxy`, below the chain.
"""
