"""Every use of mitmproxy's internals, in one room. **Pinned to mitmproxy 12.x**: an upgrade checks these
modules, and nothing else in Warden reaches below mitmproxy's addon API (a ruff banned-api rule keeps
`mitmproxy.proxy.layers` here).

- `connections`: the connection handler behind a flow, its chain of layers, bytes injected as if from the
  upstream (the 504 of `upstream_timeout`).
- `client_wire`: the last bytes of a stream mitmproxy gave up on, framed (HTTP/1 chunk, HTTP/2 DATA) and
  encrypted (client TLS layer) as mitmproxy would.
- `error_pages`: mitmproxy's own error pages (HTTP/1 and HTTP/2) as OpenAI-shaped JSON; upstream timeouts
  on TLS upstreams marked in its error path.
- `dispatch`: the addon hook walk done once per hook name instead of once per event (same calls, order and
  error handling as `AddonManager.handle_lifecycle`).
- `fast_lane`: a relayed SSE answer's chunks read off the upstream socket and written to the client without
  mitmproxy's per-chunk path, while mitmproxy holds none of the answer; the rest (the end, errors, the
  connection) stays mitmproxy's.
- `wire_bounds`: request head size and time, idle connections, body limits per direction, lingering close,
  patched into the HTTP/1 server layer and the HTTP stream.

The whole-process tests (tests/e2e) fail loudly when a release moves any of them.
"""
