"""1,000 engine create / generate / destroy cycles on the bundled tiny model leave the process's
memory flat: the C heap (exact, from glibc's own count) and the resident set (coarse)."""
import ctypes
import gc
import time

from deepinfer import LLM, SamplingParams

CYCLES = 1000
# Allowed growth over the measured cycles after warm-up. malloc's count of bytes in use is exact,
# so its bound leaves room only for the interpreter's own caches; any handle, response or event
# buffer leaked per cycle exceeds it. RSS also moves with pages malloc keeps for reuse; one leaked
# engine keeps its KV cache and touched weights resident, far more than its bound.
C_HEAP_BOUND_BYTES = 256 << 10
RSS_BOUND_BYTES = 24 << 20
# Small limits keep each engine's KV cache small; the cycle is about handles, not throughput.
ENGINE = dict(max_num_seqs=2, max_model_len=64)


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


_libc = ctypes.CDLL(None)
_libc.mallinfo2.restype = _MallInfo2


def c_heap_bytes():
    """Bytes malloc has handed out and not taken back, over every arena and mmapped chunk."""
    m = _libc.mallinfo2()
    return m.uordblks + m.hblkhd


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_create_generate_destroy_cycles_do_not_grow_rss(tiny_model, tiny_tokenizer, tiny_recipe):
    # The shared tiny_tokenizer fixture stays open, so every engine shares its loaded
    # tokenizer.json (as a service's recipe and engine do) instead of parsing 129k tokens a cycle.
    prompt = tiny_tokenizer.encode("Leak check", add_special=True)
    params = SamplingParams(temperature=0, max_tokens=2, ignore_eos=True, logprobs=2)
    unfinished = SamplingParams(temperature=0, max_tokens=40, ignore_eos=True)
    chat = {"model": "deepseek-v4", "messages": [{"role": "user", "content": "hi"}]}
    first = []

    def cycle():
        with LLM(tiny_model, **ENGINE) as llm:
            out = llm.generate([prompt], params)[0].outputs[0]
            if not first:
                first.append(out.token_ids)
            assert out.token_ids == first[0] and len(out.token_ids) == 2
            assert out.text == tiny_tokenizer.decode(out.token_ids)
            with llm.engine.submit(prompt, unfinished) as req:
                next(req)  # left unfinished: close cancels and frees it
        with tiny_recipe.prepare("chat", chat) as p, p.parser() as parser:
            parser.push("x", finish_reason="stop")
            parser.response()

    for _ in range(30):
        cycle()
    gc.collect()
    before, c_before = rss_bytes(), c_heap_bytes()
    t0 = time.monotonic()
    for _ in range(CYCLES):
        cycle()
    elapsed = time.monotonic() - t0
    gc.collect()
    grown, c_grown = rss_bytes() - before, c_heap_bytes() - c_before
    print(f"{CYCLES} engine cycles in {elapsed:.1f}s ({elapsed / CYCLES * 1e3:.1f} ms each); "
          f"C heap growth {c_grown} B, RSS growth {grown / 1024:.0f} KiB")
    assert c_grown < C_HEAP_BOUND_BYTES, f"the C heap grew {c_grown} bytes over {CYCLES} cycles"
    assert grown < RSS_BOUND_BYTES, f"RSS grew {grown} bytes over {CYCLES} cycles"
