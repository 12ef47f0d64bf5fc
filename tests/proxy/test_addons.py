from __future__ import annotations

import asyncio

from mitmproxy import http
from mitmproxy.test import tflow

from proxy.addons import Pipeline


class Recorder:
    def __init__(self, name: str, log: list[str], is_async: bool = False) -> None:
        self.name, self.log, self.is_async = name, log, is_async

    def request(self, flow: http.HTTPFlow) -> object:
        if self.is_async:
            async def later() -> None:
                await asyncio.sleep(0)
                self.log.append(self.name)
            return later()
        self.log.append(self.name)
        return None


class ResponseOnly:
    def response(self, flow: http.HTTPFlow) -> None:
        raise AssertionError("not a request hook")


def test_stages_run_in_list_order_and_only_where_they_have_the_hook() -> None:
    log: list[str] = []
    pipeline = Pipeline([Recorder("a", log), ResponseOnly(), Recorder("b", log)])
    assert pipeline.request(tflow.tflow()) is None
    assert log == ["a", "b"]


def test_an_async_stage_keeps_the_order_of_the_ones_after_it() -> None:
    log: list[str] = []
    pipeline = Pipeline([Recorder("a", log), Recorder("b", log, is_async=True), Recorder("c", log)])
    pending = pipeline.request(tflow.tflow())
    assert log == ["a"]
    assert pending is not None
    asyncio.run(pending)  # type: ignore[arg-type]
    assert log == ["a", "b", "c"]
