"""LLM.generate: greedy output equals transformers' on the DeepSeek-V4 fixtures; text, logprobs
and finish reasons on the tiny model follow the library's invariants."""
import math
import re

import pytest

import deepinfer
from deepinfer import LLM, SamplingParams

from conftest import V4_NAMES, load_v4


def collapse_replacement(s):
    """Bytes that never form a character become U+FFFD both when streamed and when decoded at
    once, but the stream may write one per token where a one-shot decode writes one per run."""
    return re.sub("\ufffd+", "\ufffd", s)


@pytest.mark.parametrize("name", V4_NAMES)
def test_greedy_equals_transformers(name):
    model, prompt, greedy = load_v4(name)
    with LLM(model) as llm:
        out = llm.generate([prompt], SamplingParams(temperature=0, max_tokens=len(greedy),
                                                    ignore_eos=True))
    assert len(out) == 1
    o = out[0].outputs[0]
    assert o.token_ids == greedy
    assert o.finish_reason == "length"
    assert out[0].prompt_token_ids == prompt


def test_batch_equals_alone_and_keeps_prompt_order():
    model, prompt, greedy = load_v4(V4_NAMES[0])
    prompts = [prompt, prompt[:3], prompt[1:], prompt]
    params = SamplingParams(temperature=0, max_tokens=6, ignore_eos=True)
    with LLM(model) as llm:
        batched = llm.generate(prompts, params)
        alone = [llm.generate([p], params)[0] for p in prompts]
    assert [b.prompt_token_ids for b in batched] == prompts
    assert [b.outputs[0].token_ids for b in batched] == [a.outputs[0].token_ids for a in alone]
    assert batched[0].outputs[0].token_ids == greedy[:6]


def test_text_prompt_gives_text_that_decodes_the_ids(tiny_engine):
    with LLM(tiny_engine) as llm:
        out = llm.generate(["The capital of France is", "你好，世界"],
                           SamplingParams(temperature=0.8, seed=1, max_tokens=24, ignore_eos=True))
        tok = llm.engine.tokenizer
        for r in out:
            o = r.outputs[0]
            assert len(o.token_ids) == 24 and o.finish_reason == "length"
            assert r.prompt_token_ids == tok.encode(r.prompt, add_special=True)
            o.text.encode("utf-8")  # a str from valid UTF-8: strict encoding cannot fail
            assert collapse_replacement(o.text) == collapse_replacement(
                tok.decode(o.token_ids, skip_special=True))


def test_seeded_sampling_is_reproducible_and_n_gives_n_outputs(tiny_engine):
    params = SamplingParams(n=3, temperature=1.0, seed=7, max_tokens=8, ignore_eos=True)
    with LLM(tiny_engine) as llm:
        a = llm.generate("Hello", params)[0]
        b = llm.generate("Hello", params)[0]
    assert [o.index for o in a.outputs] == [0, 1, 2]
    assert [o.token_ids for o in a.outputs] == [o.token_ids for o in b.outputs]
    assert all(len(o.token_ids) == 8 for o in a.outputs)


def test_logprobs_are_consistent_with_greedy_choice(tiny_engine):
    with LLM(tiny_engine) as llm:
        o = llm.generate("Once upon a time", SamplingParams(temperature=0, max_tokens=6,
                                                            ignore_eos=True, logprobs=3))[0].outputs[0]
    assert len(o.logprobs) == len(o.token_ids) == 6
    assert len(o.top_logprobs) == 6
    for tok, lps, top in zip(o.token_ids, o.logprobs, o.top_logprobs):
        lp = lps[tok].logprob  # vLLM's dict[id, Logprob]
        assert len(top) == 3
        assert lp <= 0 and math.isfinite(lp)
        # greedy: the sampled token is the most likely one, with the same log-probability
        assert top[0][0] == tok and top[0][1] == pytest.approx(lp, abs=1e-5)
        assert [t[1] for t in top] == sorted((t[1] for t in top), reverse=True)


def test_stop_token_ends_with_stop(tiny_engine):
    with LLM(tiny_engine) as llm:
        first = llm.generate("abc", SamplingParams(temperature=0, max_tokens=5,
                                                   ignore_eos=True))[0].outputs[0]
        stop_at = first.token_ids[2]
        o = llm.generate("abc", SamplingParams(temperature=0, max_tokens=5, ignore_eos=True,
                                               stop_token_ids=[stop_at]))[0].outputs[0]
    assert o.finish_reason == "stop"
    assert o.token_ids == first.token_ids[:first.token_ids.index(stop_at) + 1]


def test_bad_prompt_type_is_a_type_error(tiny_engine):
    with LLM(tiny_engine) as llm:
        with pytest.raises(TypeError):
            llm.generate([3.5], SamplingParams(max_tokens=1))
        with pytest.raises(deepinfer.InvalidArgumentError):
            llm.generate([[]], SamplingParams(max_tokens=1))  # empty prompt
