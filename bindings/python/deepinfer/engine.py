"""Engine and Request: submit prompts, iterate chunks (``for`` or ``async for``), cancel, close.

The native calls release the GIL and wait in short slices, so other threads run and Ctrl-C
interrupts a wait. ``async for`` runs the blocking poll on a helper thread and hands chunks to the
event loop with ``call_soon_threadsafe``; leaving the loop early cancels the request.
"""
from __future__ import annotations

import asyncio
import atexit
import json
import os
import threading
import weakref
from typing import List, Optional, Sequence, Union

from . import _native
from ._handle import NativeHandle
from .sampling import SamplingParams, options_from

Chunk = _native.Chunk

_live_engines: "weakref.WeakSet[Engine]" = weakref.WeakSet()


@atexit.register
def _close_engines() -> None:
    # Engine threads are joined before the interpreter finalizes, never during.
    for engine in list(_live_engines):
        engine.close()


class Request(NativeHandle):
    """One submitted request. Iterate it for Chunk objects; ``close()`` cancels and frees it.

    ``cancel()`` may be called from any thread while another thread iterates: the iteration then
    ends with a chunk whose finish_reason is "cancelled".
    """

    def __init__(self, native: _native.Request):
        self._native = native

    @property
    def id(self) -> int:
        return self._native.id

    def poll(self, timeout: Optional[float] = None) -> Optional[Chunk]:
        """The next chunk, None if none came within ``timeout`` seconds (None = wait), or
        StopIteration at the end of the stream."""
        ms = -1 if timeout is None else max(0, int(timeout * 1000))
        return self._native.poll(ms)

    def __iter__(self) -> "Request":
        return self

    def __next__(self) -> Chunk:
        return self._native.poll(-1)

    def __aiter__(self) -> "_AsyncChunks":
        return _AsyncChunks(self)

    def cancel(self) -> None:
        self._native.cancel()

    @property
    def closed(self) -> bool:
        return self._native.closed


class _AsyncChunks:
    """The thread-safe bridge behind ``async for chunk in request``."""

    _END = object()

    def __init__(self, request: Request):
        self._request = request
        self._queue: Optional[asyncio.Queue] = None
        self._thread: Optional[threading.Thread] = None
        self._stop = threading.Event()

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        self._queue = asyncio.Queue()
        queue = self._queue

        def pump() -> None:
            item: object = self._END
            try:
                while not self._stop.is_set():
                    try:
                        chunk = self._request.poll(0.05)
                    except StopIteration:
                        break
                    if chunk is not None:
                        loop.call_soon_threadsafe(queue.put_nowait, chunk)
            except BaseException as exc:  # delivered to the awaiting coroutine
                item = exc
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:
                pass  # the loop is closed; nobody is waiting any more

        self._thread = threading.Thread(target=pump, name="deepinfer-async-poll", daemon=True)
        self._thread.start()

    def __aiter__(self) -> "_AsyncChunks":
        return self

    async def __anext__(self) -> Chunk:
        if self._thread is None:
            self._start()
        assert self._queue is not None
        try:
            item = await self._queue.get()
        except asyncio.CancelledError:
            await self.aclose()
            raise
        if item is self._END:
            raise StopAsyncIteration
        if isinstance(item, BaseException):
            raise item
        return item

    async def aclose(self) -> None:
        """Cancels the request and stops the helper thread (``break`` out of ``async for``
        leaves this to the garbage collector; call it or use ``async with`` to be prompt)."""
        self._request.cancel()
        self._stop.set()
        if self._thread is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._thread.join)

    async def __aenter__(self) -> "_AsyncChunks":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()


class Engine(NativeHandle):
    """An inference engine over one model directory.

    ``Engine(model, max_num_seqs=8, kv_cache_bytes=1 << 26)``: keyword arguments are the engine
    keys of ``deepinfer.options_schema()``.
    """

    def __init__(self, model: Union[str, os.PathLike], **options):
        self.model = os.fspath(model)
        self._native = _native.Engine(self.model, options_from(options))
        self._tokenizer = None
        self._tokenizer_lock = threading.Lock()
        _live_engines.add(self)

    @property
    def tokenizer(self):
        """The model directory's tokenizer (loaded on first use), for text prompts."""
        with self._tokenizer_lock:
            if self._tokenizer is None:
                self._tokenizer = _native.Tokenizer(self.model)
            return self._tokenizer

    def submit(self, prompt, params: Optional[SamplingParams] = None) -> Request:
        """Submits a prompt — token ids, text (encoded with the model's tokenizer, control tokens
        recognised) or a recipe ``Prepared`` (whose own sampling applies) — and returns at once."""
        from .recipe import Prepared
        if isinstance(prompt, Prepared):
            if params is not None:
                raise ValueError("params: a Prepared request carries its own sampling")
            return Request(self._native.submit_prepared(prompt._native))
        ids = self._prompt_ids(prompt)
        opts = params.to_options() if params is not None else None
        return Request(self._native.submit(ids, opts))

    def _prompt_ids(self, prompt) -> List[int]:
        if isinstance(prompt, str):
            return self.tokenizer.encode(prompt, added_tokens=True, add_special=True)
        if isinstance(prompt, Sequence) and all(isinstance(t, int) for t in prompt):
            return list(prompt)
        raise TypeError("prompt: expected a str, a list of token ids or a Prepared, got "
                        f"{type(prompt).__name__}")

    def metrics(self, prometheus: bool = False):
        """Engine metrics: a dict, or the Prometheus text exposition."""
        text = self._native.metrics(1 if prometheus else 0)
        return text if prometheus else json.loads(text)

    def info(self) -> dict:
        return json.loads(self._native.info())

    def close(self) -> None:
        """Cancels unfinished requests and stops the engine. Idempotent."""
        self._native.close()
        if self._tokenizer is not None:
            self._tokenizer.close()

    @property
    def closed(self) -> bool:
        return self._native.closed
