"""1,000 create / generate / destroy cycles leave the process's resident memory flat."""
import gc

from deepinfer import LLM, Recipe, SamplingParams

from conftest import V4_NAMES, load_v4

CYCLES = 1000
# Allowed RSS growth over the measured cycles after warm-up (allocator noise, not a leak).
BOUND_BYTES = 8 << 20


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_create_generate_destroy_cycles_do_not_grow_rss():
    model, prompt, greedy = load_v4(V4_NAMES[0])
    params = SamplingParams(temperature=0, max_tokens=4, ignore_eos=True, logprobs=2)
    chat = {"model": "deepseek-v4", "messages": [{"role": "user", "content": "hi"}]}
    recipe = Recipe()

    def cycle():
        with LLM(model, kv_cache_bytes=1 << 20) as llm:
            out = llm.generate([prompt], params)[0].outputs[0]
            assert out.token_ids == greedy[:4]
            with llm.engine.submit(prompt, params) as req:
                next(req)  # leave it unfinished: close cancels and frees it
        with recipe.prepare("chat", chat) as p, p.parser() as parser:
            parser.push("x", finish_reason="stop")
            parser.response()

    for _ in range(50):
        cycle()
    gc.collect()
    before = rss_bytes()
    for _ in range(CYCLES):
        cycle()
    gc.collect()
    grown = rss_bytes() - before
    print(f"RSS growth over {CYCLES} cycles: {grown / 1024:.0f} KiB")
    assert grown < BOUND_BYTES, f"RSS grew {grown} bytes over {CYCLES} cycles"
