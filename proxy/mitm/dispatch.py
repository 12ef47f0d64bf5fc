"""mitmproxy's hook dispatch, with the walk over the addons done once per hook instead of once per event.

mitmproxy 12 (`AddonManager.handle_lifecycle`) handles every hook of every flow by walking the whole addon chain:
for each addon a `safecall` context manager, an `invoke_addon` coroutine, two generators (`_iter_hooks`,
`traverse`), a `getattr` and `Hook.args()` (`dataclasses.fields`), whether the addon has the hook or not; and
after each flow hook it walks the chain again for an `update` hook no addon of ours has. Measured with
callgrind (bench/overhead.py's 1 KB chat request, c=1, `warden serve --no-guard`), that walk is ~15-20k
instructions per addon per event: with five addons and eight events per exchange, a fifth of mitmproxy's own
work per request.

`install(manager)` replaces the manager's `handle_lifecycle` (the one entry point the proxy's connection
handlers call) with `Dispatch`, which calls the same functions in the same order with the same semantics:
an addon's exception is logged by mitmproxy's own `safecall` and the next addon still runs; `AddonHalt` stops
the event; `OptionsError` propagates; awaitables are awaited in turn. What it drops is only the walk: the plan
(per hook name, per top-level addon, the functions mitmproxy's `_iter_hooks` yields) is made at the first
event of that name and made again whenever the chain changes (`add` appends, `remove` and `clear` replace the
list). It assumes, as mitmproxy's own addons and ours do, that an addon does not gain or lose a hook method
or child addons while it runs. The pin: see proxy/mitm/__init__.py.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from mitmproxy import exceptions, flow, hooks
from mitmproxy.addonmanager import AddonManager, safecall

Plan = tuple[tuple[Callable[..., Any], ...], ...]  # per top-level addon, its (and its children's) functions


class Dispatch:
    __slots__ = ("_chain", "_length", "_manager", "_plans")

    def __init__(self, manager: AddonManager) -> None:
        self._manager = manager
        self._chain: list[Any] | None = None
        self._length = -1
        self._plans: dict[str, Plan] = {}

    def plan(self, event: hooks.Hook) -> Plan:
        chain: list[Any] = self._manager.chain
        if chain is not self._chain or len(chain) != self._length:
            self._chain, self._length, self._plans = chain, len(chain), {}
        found = self._plans.get(event.name)
        if found is None:
            found = self._plans[event.name] = tuple(
                group for group in (tuple(func for _, func in self._manager._iter_hooks(addon, event))
                                    for addon in chain) if group)
        return found

    async def __call__(self, event: hooks.Hook) -> None:
        """`AddonManager.handle_lifecycle`: the event, then, for a flow, an `update` hook for it."""
        args = event.args()
        await self.trigger(event, args)
        message = args[0]
        if isinstance(message, flow.Flow):
            update = hooks.UpdateHook([message])
            if self.plan(update):
                await self.trigger(update, update.args())

    async def trigger(self, event: hooks.Hook, args: list[Any]) -> None:
        """`AddonManager.trigger_event` over the plan."""
        for group in self.plan(event):
            try:
                for func in group:
                    result = func(*args)
                    if result is not None and inspect.isawaitable(result):
                        await result
            except exceptions.AddonHalt:
                return
            except exceptions.OptionsError:
                raise
            except Exception:
                # mitmproxy's own handling (the "Addon error" log line with the traceback), then the next addon.
                with safecall():
                    raise


def install(manager: AddonManager) -> None:
    """Route the manager's lifecycle events through a `Dispatch`; idempotent."""
    if not isinstance(getattr(manager, "handle_lifecycle", None), Dispatch):
        manager.handle_lifecycle = Dispatch(manager)  # type: ignore[method-assign]
