"""Engine.submit streams: chunks concatenate to the one-shot result, async for works through the
thread bridge, cancel from another thread ends the stream promptly, Ctrl-C interrupts a blocking
wait, and other Python threads run while one waits (the GIL is released)."""
import asyncio
import os
import signal
import sys
import threading
import time

import pytest

import deepinfer
from deepinfer import SamplingParams


# As long as the tiny model allows: minutes of work even on a fast machine, so a stream that ends
# with "cancelled" was ended by the cancel, never by running out of tokens first.
LONG = SamplingParams(temperature=0, max_tokens=16000, ignore_eos=True)
# "Promptly": one engine step plus a poll slice, with room for a loaded CI machine; a cancel that
# did not work would run the whole LONG generation instead.
PROMPT_S = 10.0


def in_native_wait(thread_id):
    """True once `thread_id` is inside Request.__next__/poll's call into the library."""
    frame = sys._current_frames().get(thread_id)
    return frame is not None and frame.f_code.co_name in ("__next__", "poll") and \
        frame.f_code.co_filename.endswith("engine.py")


def when_waiting(thread_id, action):
    """Runs `action` on a new thread as soon as `thread_id` waits inside the library, so the test
    never depends on how long anything takes."""
    def run():
        while not in_native_wait(thread_id):
            time.sleep(0.001)
        action()
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


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
    threading.Thread(target=req.cancel).start()
    rest = list(req)
    elapsed = time.monotonic() - t0
    req.close()
    assert rest and rest[-1].finish_reason == "cancelled" and rest[-1].is_final
    total = len(first.token_ids) + sum(len(c.token_ids) for c in rest)
    assert total < 16000
    assert elapsed < PROMPT_S, f"cancel took {elapsed:.2f}s to end the stream"


def test_close_from_another_thread_while_iterating(tiny_engine):
    req = tiny_engine.submit([1, 2, 3], LONG)
    next(req)
    closer = when_waiting(threading.get_ident(), req.close)
    t0 = time.monotonic()
    with pytest.raises((deepinfer.StateError, StopIteration)):
        while True:
            next(req)
    assert time.monotonic() - t0 < PROMPT_S
    closer.join()
    assert req.closed


@pytest.fixture
def sigint_raises():
    # A process started in the background by a non-interactive shell inherits SIGINT ignored,
    # and Python then leaves it ignored; these tests need Python's KeyboardInterrupt handler.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_interrupts_a_blocking_wait(tiny_model, sigint_raises):
    # One sequence at a time and a LONG request ahead: the queued request's wait yields no chunk
    # before the ahead one ends (minutes away), so the interrupt must come from inside the
    # native wait. SIGINT is sent once the main thread is in that wait.
    with deepinfer.Engine(tiny_model, max_num_seqs=1) as engine:
        ahead = engine.submit([1, 2, 3], LONG)
        req = engine.submit([4, 5, 6], SamplingParams(temperature=0, max_tokens=200, ignore_eos=True))
        killer = when_waiting(threading.get_ident(), lambda: os.kill(os.getpid(), signal.SIGINT))
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            next(req)
        elapsed = time.monotonic() - t0
        killer.join()
        # The interrupted wait cancelled its request: it ends with a cancelled chunk.
        last = list(req)[-1]
        for r in (ahead, req):
            r.close()
    assert last.finish_reason == "cancelled" and last.token_ids == []
    assert elapsed < PROMPT_S


def test_ctrl_c_interrupts_iteration_of_a_busy_stream(tiny_engine, sigint_raises):
    with tiny_engine.submit([1, 2, 3], LONG) as req:
        n = len(next(req).token_ids)
        main = threading.get_ident()
        killer = when_waiting(main, lambda: os.kill(os.getpid(), signal.SIGINT))
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            for c in req:
                n += len(c.token_ids)
        killer.join()
        assert time.monotonic() - t0 < PROMPT_S and n < 16000


def test_other_threads_run_while_waiting(tiny_model):
    # The main thread waits on a request queued behind a LONG one (minutes of work); another
    # Python thread, which needs the GIL to notice the wait and to call cancel, ends it. A wait
    # that held the GIL would starve that thread and last until the LONG request finished.
    with deepinfer.Engine(tiny_model, max_num_seqs=1) as engine:
        with engine.submit([1, 2, 3], LONG) as ahead, engine.submit([4, 5, 6], LONG) as req:
            canceller = when_waiting(threading.get_ident(), req.cancel)
            t0 = time.monotonic()
            chunks = list(req)
            waited = time.monotonic() - t0
            canceller.join()
            ahead.cancel()
    assert chunks[-1].finish_reason == "cancelled" and chunks[-1].token_ids == []
    assert waited < PROMPT_S, waited


def test_poll_with_timeout_and_engine_close_ends_requests(tiny_model, tiny_tokenizer):
    # Its own engine (quick to open while the shared tiny_tokenizer is loaded), closed while the
    # LONG request is far from done.
    engine = deepinfer.Engine(tiny_model, max_num_seqs=1)
    req = engine.submit([1, 2, 3], LONG)
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


def test_streamed_text_of_ill_formed_byte_tokens_equals_decode(tiny_engine):
    # A logit bias makes the model emit single-byte tokens that form ill-formed UTF-8 (cut-off
    # leads, stray continuations, surrogates); the streamed chunks' text must equal the
    # tokenizer's decode of the same ids (U+FFFD per maximal ill-formed subpart in both).
    tok = tiny_engine.tokenizer
    alphabet = b"A\xc2\xdf\xe0\xe4\xed\xef\xf0\xf4\x80\x8f\x90\x9f\xa0\xb8\xbf\xc0\xf5\xff"
    byte_of = {}
    for i in range(tok.vocab_size):
        try:
            piece = tok.token_to_piece(i)
        except deepinfer.DeepInferError:
            continue
        if len(piece) == 1 and piece[0] in alphabet:
            byte_of[i] = piece
    assert sorted(byte_of.values()) == sorted(bytes([b]) for b in alphabet)
    longer_subparts = 0
    for seed in (1, 2, 3):
        params = SamplingParams(temperature=1.0, seed=seed, max_tokens=40, ignore_eos=True,
                                logit_bias={i: 100 for i in byte_of})
        with tiny_engine.submit([0, 1000, 2000, 3000], params) as req:
            chunks = list(req)
        ids = [t for c in chunks for t in c.token_ids]
        assert len(ids) == 40 and all(i in byte_of for i in ids)
        streamed = "".join(c.text for c in chunks)
        assert streamed == tok.decode(ids)
        # The same rule Python's own decoder follows (WHATWG / Unicode maximal subparts).
        raw = b"".join(byte_of[i] for i in ids)
        assert streamed == raw.decode("utf-8", errors="replace")
        kept = len(streamed.replace("\ufffd", "").encode())
        longer_subparts += len(raw) - kept - streamed.count("\ufffd")
    assert longer_subparts > 0  # the mix did contain subparts of more than one byte
