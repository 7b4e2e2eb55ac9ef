"""A thread pool that runs the oldest tool call's statements first.

Under load every call is several stages of Neo4j statements (activate: scope state, three
searches, the context read, the write). A first-in-first-out pool serves stages in arrival order,
so a call on its last stage queues behind calls that have just started and every stage adds the
whole queue's wait. Ordering by the start of the call a statement belongs to serves calls rather
than stages: nearly first-come-first-served per call, which shortens the tail at the same
throughput.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, ParamSpec, TypeVar

from slowave_graph import telemetry

P = ParamSpec("P")
T = TypeVar("T")

_Item = tuple[float, int, "Future[Any] | None", Callable[[], Any]]


class OldestCallFirst(Executor):
    """``threads`` workers; a task's priority is the start of the tool call it was submitted in
    (``telemetry.call_started``). Work outside a call (start-up, background tasks) counts from its
    submission: after the calls that started before it, ahead of those that start later."""

    def __init__(self, threads: int, thread_name_prefix: str = "oldest-first") -> None:
        self._queue: list[_Item] = []
        self._order = itertools.count()  # ties (and work outside calls) in submission order
        self._ready = threading.Condition()
        self._closed = False
        self._threads = [
            threading.Thread(target=self._work, name=f"{thread_name_prefix}_{n}", daemon=True)
            for n in range(threads)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()
        priority = telemetry.call_started()
        with self._ready:
            if self._closed:
                raise RuntimeError("cannot schedule new work after shutdown")
            heapq.heappush(self._queue, (priority, next(self._order), future, lambda: fn(*args, **kwargs)))
            self._ready.notify()
        return future

    def _work(self) -> None:
        while True:
            with self._ready:
                while not self._queue:
                    self._ready.wait()
                _, _, future, task = heapq.heappop(self._queue)
            if future is None:  # shutdown's marker, queued behind everything already submitted
                return
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = task()
            except BaseException as exc:  # handed to the waiting caller, as ThreadPoolExecutor does
                future.set_exception(exc)
            else:
                future.set_result(result)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._ready:
            if not self._closed:
                self._closed = True
                if cancel_futures:
                    for _, _, future, _ in self._queue:
                        if future is not None:
                            future.cancel()
                for _ in self._threads:
                    heapq.heappush(self._queue, (float("inf"), next(self._order), None, lambda: None))
                self._ready.notify_all()
        if wait:
            for thread in self._threads:
                thread.join()
