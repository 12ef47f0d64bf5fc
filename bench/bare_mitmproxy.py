"""Bare mitmproxy in reverse mode with the same minimal addon set Warden embeds, and none of our stages.

Usage: python bench/bare_mitmproxy.py UPSTREAM_URL PORT
The baseline for "what do our stages cost on top of mitmproxy itself" in bench/overhead.py.
"""

from __future__ import annotations

import asyncio
import sys

from mitmproxy import options
from mitmproxy.addons import core, disable_h2c, next_layer, proxyserver
from mitmproxy.master import Master


class StreamSse:
    """The one thing a bare proxy must do for SSE: stream it instead of buffering (FACTS)."""

    def responseheaders(self, flow):  # type: ignore[no-untyped-def]
        if flow.response.headers.get("content-type", "").startswith("text/event-stream"):
            flow.response.stream = True


async def main(upstream: str, port: int) -> None:
    opts = options.Options()
    master = Master(opts)
    master.addons.add(core.Core(), disable_h2c.DisableH2C(), proxyserver.Proxyserver(), next_layer.NextLayer(),
                      StreamSse())
    opts.update(mode=[f"reverse:{upstream}@127.0.0.1:{port}"], connection_strategy="lazy")
    await master.run()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))


# `mitmdump -s bench/bare_mitmproxy.py` loads this: DumpMaster's defaults plus SSE streaming.
addons = [StreamSse()]
