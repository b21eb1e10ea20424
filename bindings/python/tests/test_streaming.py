"""Engine.submit streams: chunks concatenate to the one-shot result, async for works through the
thread bridge, cancel from another thread ends the stream promptly, Ctrl-C interrupts a blocking
wait, and other Python threads run while one waits (the GIL is released)."""
import asyncio
import os
import signal
import threading
import time

import pytest

import deepinfer
from deepinfer import SamplingParams

from conftest import V4_NAMES, load_v4

LONG = SamplingParams(temperature=0, max_tokens=4000, ignore_eos=True)


def test_stream_concatenates_to_generate(tiny_engine):
    params = SamplingParams(temperature=0, max_tokens=20, ignore_eos=True)
    with tiny_engine.submit("Streaming test", params) as req:
        chunks = list(req)
    ids = [t for c in chunks for t in c.token_ids]
    text = "".join(c.text for c in chunks)
    assert len(ids) == 20
    assert chunks[-1].is_final and chunks[-1].finish_reason == "length"
    assert all(c.finish_reason is None for c in chunks[:-1])
    assert all(c.request_id == req.id for c in chunks)
    o = deepinfer.LLM(tiny_engine).generate("Streaming test", params)[0].outputs[0]
    assert ids == o.token_ids and text == o.text
    assert chunks[-1].completion_tokens == 20
    assert chunks[-1].prompt_tokens == len(tiny_engine.tokenizer.encode("Streaming test",
                                                                        add_special=True))


def test_async_for_yields_the_same_chunks(tiny_engine):
    params = SamplingParams(temperature=0, max_tokens=12, ignore_eos=True)

    async def collect():
        out = []
        with tiny_engine.submit([5, 6, 7, 8], params) as req:
            async for chunk in req:
                out.extend(chunk.token_ids)
        return out

    async_ids = asyncio.run(collect())
    with tiny_engine.submit([5, 6, 7, 8], params) as req:
        sync_ids = [t for c in req for t in c.token_ids]
    assert async_ids == sync_ids and len(sync_ids) == 12


def test_async_consumers_run_concurrently_on_one_loop(tiny_engine):
    params = SamplingParams(temperature=0, max_tokens=10, ignore_eos=True)

    async def one(prompt):
        with tiny_engine.submit(prompt, params) as req:
            return [t for c in [c async for c in req] for t in c.token_ids]

    async def main():
        return await asyncio.gather(*(one([3, 4, i]) for i in range(10, 14)))

    results = asyncio.run(main())
    assert all(len(r) == 10 for r in results)


def test_cancel_from_another_thread_ends_promptly(tiny_engine):
    req = tiny_engine.submit([1, 2, 3], LONG)
    first = next(req)
    t0 = time.monotonic()
    threading.Timer(0.05, req.cancel).start()
    rest = list(req)
    elapsed = time.monotonic() - t0
    req.close()
    assert rest and rest[-1].finish_reason == "cancelled" and rest[-1].is_final
    total = len(first.token_ids) + sum(len(c.token_ids) for c in rest)
    assert total < 4000
    assert elapsed < 2.0, f"cancel took {elapsed:.2f}s to end the stream"


def test_close_from_another_thread_while_iterating(tiny_engine):
    req = tiny_engine.submit([1, 2, 3], LONG)
    next(req)
    threading.Timer(0.05, req.close).start()
    t0 = time.monotonic()
    with pytest.raises((deepinfer.StateError, StopIteration)):
        while True:
            next(req)
    assert time.monotonic() - t0 < 2.0
    assert req.closed


def test_ctrl_c_interrupts_a_blocking_wait():
    # One sequence at a time and 20 long requests ahead: the last one's wait yields no chunk
    # for seconds, so the interrupt must come from inside the native wait.
    model, prompt, _ = load_v4(V4_NAMES[0])
    params = SamplingParams(temperature=0, max_tokens=200, ignore_eos=True)
    with deepinfer.Engine(model, max_num_seqs=1) as engine:
        ahead = [engine.submit(prompt, params) for _ in range(20)]
        req = engine.submit(prompt, params)
        killer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
        t0 = time.monotonic()
        killer.start()
        with pytest.raises(KeyboardInterrupt):
            next(req)
        elapsed = time.monotonic() - t0
        # The interrupted wait cancelled its request: it ends with a cancelled chunk.
        last = list(req)[-1]
        for r in ahead + [req]:
            r.close()
    assert last.finish_reason == "cancelled" and last.token_ids == []
    assert elapsed < 2.0


def test_ctrl_c_interrupts_iteration_of_a_busy_stream(tiny_engine):
    with tiny_engine.submit([1, 2, 3], LONG) as req:
        killer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
        t0 = time.monotonic()
        killer.start()
        n = 0
        with pytest.raises(KeyboardInterrupt):
            for c in req:
                n += len(c.token_ids)
        assert time.monotonic() - t0 < 2.0 and n < 4000


def test_other_threads_run_while_waiting():
    model, prompt, _ = load_v4(V4_NAMES[0])
    ticks = 0
    stop = threading.Event()

    def spin():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    with deepinfer.Engine(model) as engine:
        with engine.submit(prompt, SamplingParams(temperature=0, max_tokens=200,
                                                  ignore_eos=True)) as req:
            t = threading.Thread(target=spin)
            t.start()
            t0 = time.monotonic()
            n = sum(len(c.token_ids) for c in req)
            waited = time.monotonic() - t0
            stop.set()
            t.join()
    assert n == 200
    # A held GIL would starve the spinner for the whole wait.
    assert ticks >= min(20, int(waited * 200)), (ticks, waited)


def test_poll_with_timeout_and_engine_close_ends_requests():
    model, prompt, _ = load_v4(V4_NAMES[0])  # fast to load; closed right after the submit
    engine = deepinfer.Engine(model)
    req = engine.submit(prompt, SamplingParams(temperature=0, max_tokens=200, ignore_eos=True))
    assert req.poll(timeout=5.0) is not None
    engine.close()
    engine.close()  # idempotent
    chunks = list(req)  # the request outlives its engine and ends cancelled
    assert chunks[-1].finish_reason == "cancelled"
    req.close()
    with pytest.raises(deepinfer.StateError):
        engine.submit([1, 2, 3])
    with pytest.raises(deepinfer.StateError):
        req.poll(0)


def test_metrics_and_info(tiny_engine):
    info = tiny_engine.info()
    assert info["model"]["vocab_size"] == tiny_engine.tokenizer.vocab_size
    assert isinstance(tiny_engine.metrics(), dict)
    assert "# TYPE" in tiny_engine.metrics(prometheus=True)
