"""mitmproxy glue: options, the addon pipeline, HTTP/SSE framing, admin endpoints, the `warden` CLI."""
