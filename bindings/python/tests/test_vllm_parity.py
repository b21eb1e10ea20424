"""What a vLLM user writes works the same here: SamplingParams' max_tokens default (16),
structured output given as vLLM gives it, logprobs as dict[id, Logprob] with token text, a wrong
type as a typed InvalidArgumentError, and LLM.chat(messages, sampling_params, tools=...)
rendered by the recipe (its prompt ids equal `deepinfer render`'s for the same request).
"""
import json
import re
import subprocess

import pytest

import deepinfer
from deepinfer import InvalidArgumentError, LLM, SamplingParams
from deepinfer.llm import Logprob
from deepinfer.sampling import StructuredOutputsParams

from conftest import BUILD


def test_max_tokens_defaults_to_16_as_in_vllm(tiny_engine):
    assert SamplingParams().max_tokens == 16
    with LLM(tiny_engine) as llm:
        o = llm.generate("Hi", SamplingParams(temperature=0, ignore_eos=True))[0].outputs[0]
    assert len(o.token_ids) == 16
    assert o.finish_reason == "length"


@pytest.mark.parametrize("field,value", [("temperature", "hot"), ("top_p", "x"),
                                         ("max_tokens", 2.5), ("seed", True)])
def test_a_wrong_type_is_a_typed_error_naming_the_field(tiny_engine, field, value):
    with pytest.raises(InvalidArgumentError, match=field):
        SamplingParams(**{field: value}).to_dict()
    with LLM(tiny_engine) as llm, pytest.raises(InvalidArgumentError, match=field):
        llm.generate("Hi", SamplingParams(**{field: value}))


def test_structured_outputs_choice_regex_and_json(tiny_engine):
    schema = {"type": "object", "properties": {"unit": {"enum": ["celsius", "fahrenheit"]}},
              "required": ["unit"], "additionalProperties": False}
    with LLM(tiny_engine) as llm:
        def text(**kw):
            p = SamplingParams(temperature=0, max_tokens=48, **kw)
            o = llm.generate("Pick one:", p)[0].outputs[0]
            assert o.finish_reason == "stop", (kw, o)
            return o.text
        assert text(structured_outputs=StructuredOutputsParams(choice=["yes", "no (maybe)"])) \
            in ("yes", "no (maybe)")
        assert re.fullmatch(r"[a-c]{3}", text(structured_outputs={"regex": "[a-c]{3}"}))
        value = json.loads(text(structured_outputs=StructuredOutputsParams(json=schema)))
        assert value["unit"] in ("celsius", "fahrenheit") and set(value) == {"unit"}
        # vLLM's older fields mean the same.
        assert text(guided_json=json.dumps(schema)) == text(structured_outputs={"json": schema})
        assert text(guided_choice=["a", "b"]) in ("a", "b")
        # Any JSON object: random weights write free strings that never close in 48 tokens, so
        # only the mapping and the opening brace are checked.
        p = SamplingParams(temperature=0, max_tokens=8, structured_outputs={"json_object": True})
        assert p.to_dict()["constraint_json_object"] == 1
        assert llm.generate("Pick one:", p)[0].outputs[0].text.lstrip().startswith("{")


def test_structured_outputs_refuses_two_at_once():
    with pytest.raises(InvalidArgumentError, match="exactly one"):
        SamplingParams(structured_outputs={"regex": "a", "choice": ["b"]}).to_dict()
    with pytest.raises(InvalidArgumentError, match="not both"):
        SamplingParams(structured_outputs={"regex": "a"}, guided_regex="b").to_dict()
    with pytest.raises(InvalidArgumentError, match="unknown"):
        SamplingParams(structured_outputs={"jsn": {}}).to_dict()


def test_logprobs_are_dicts_of_logprob_with_token_text(tiny_engine, tiny_tokenizer):
    with LLM(tiny_engine) as llm:
        o = llm.generate("Once upon a time", SamplingParams(temperature=0, max_tokens=5,
                                                            ignore_eos=True, logprobs=3))[0].outputs[0]
    assert len(o.logprobs) == len(o.token_ids) == 5
    total = 0.0
    for tok, d in zip(o.token_ids, o.logprobs):
        assert tok in d and all(isinstance(v, Logprob) for v in d.values())
        assert len(d) == 3  # greedy: the sampled token is one of the top 3
        assert d[tok].rank == 1
        assert sorted(v.rank for v in d.values()) == [1, 2, 3]
        for tid, v in d.items():
            assert v.decoded_token == tiny_tokenizer.decode([tid])
        total += d[tok].logprob
    assert o.cumulative_logprob == pytest.approx(total)


def _render_ids(model_dir, body):
    out = subprocess.run([str(BUILD / "bin" / "deepinfer"), "render", "--encoding", "dsv4",
                          "--protocol", "chat", "--tokenizer", model_dir,
                          "--options", json.dumps({"recipe_model": body["model"]})],
                         input=json.dumps(body), capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["ids"]


TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Current weather of a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]


def test_chat_renders_with_the_recipe_and_parses_the_output(tiny_engine, tiny_model):
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}]
    params = SamplingParams(temperature=0, max_tokens=12)
    with LLM(tiny_engine) as llm:
        [r] = llm.chat(messages, params)
        body = {"model": llm.model_name, "messages": messages, "temperature": 0, "max_tokens": 12}
        assert r.prompt_token_ids == _render_ids(tiny_model, body)
        # The answer is the recipe's parse of what the engine wrote for those ids.
        raw = llm.generate(r.prompt_token_ids, params)[0].outputs[0]
        with deepinfer.Recipe(tiny_model, recipe_model=llm.model_name) as recipe:
            with recipe.prepare("chat", body) as p, p.parser() as parser:
                parser.push(raw.text, token_ids=raw.token_ids, finish_reason=raw.finish_reason)
                message = parser.response()["choices"][0]["message"]
        o = r.outputs[0]
        assert o.token_ids == raw.token_ids
        assert o.text == (message["content"] or "")
        assert o.reasoning_content == message.get("reasoning_content")
        assert o.finish_reason == raw.finish_reason

        # tools reach the prompt; two conversations give two outputs, in order.
        [with_tools] = llm.chat(messages, params, tools=TOOLS)
        body["tools"] = TOOLS
        assert with_tools.prompt_token_ids == _render_ids(tiny_model, body)
        assert len(with_tools.prompt_token_ids) > len(r.prompt_token_ids)
        assert with_tools.outputs[0].tool_calls is None or isinstance(with_tools.outputs[0].tool_calls, list)
        both = llm.chat([messages, [{"role": "user", "content": "Bye"}]], params)
        assert [b.prompt_token_ids for b in both][0] == r.prompt_token_ids
        assert len(both) == 2 and both[1].prompt_token_ids != r.prompt_token_ids


def test_chat_rejections_are_the_apis_errors(tiny_engine):
    with LLM(tiny_engine) as llm:
        with pytest.raises(deepinfer.DeepInferError) as e:
            llm.chat([{"role": "user"}])
        assert e.value.http_status == 400
        with pytest.raises(InvalidArgumentError, match="LLM.generate"):
            llm.chat([{"role": "user", "content": "x"}],
                     SamplingParams(structured_outputs={"regex": "a+"}))


def test_one_default_model_name_for_the_recipe_and_serve(tiny_model, tiny_recipe):
    # `deepinfer serve --model models/tiny-v4` serves "tiny-v4"; a recipe made on that directory
    # answers the same name by default, and still the names it answered before.
    import os
    name = os.path.basename(os.path.normpath(tiny_model))
    for model in (name, "deepseek-v4", "deepseek-chat"):
        with tiny_recipe.prepare("chat", {"model": model, "messages": [{"role": "user", "content": "x"}]}) as p:
            assert p.parser_options["model"] == model
    with pytest.raises(deepinfer.NotFoundError) as e:
        tiny_recipe.prepare("chat", {"model": "other", "messages": [{"role": "user", "content": "x"}]})
    assert e.value.http_status == 404
    with deepinfer.Recipe(os.path.join(tiny_model, "tokenizer.json")) as by_file:
        by_file.prepare("chat", {"model": name, "messages": [{"role": "user", "content": "x"}]}).close()
    with deepinfer.Recipe() as bare:
        bare.prepare("chat", {"model": "deepseek-v4", "messages": [{"role": "user", "content": "x"}]}).close()
        with pytest.raises(deepinfer.NotFoundError):
            bare.prepare("chat", {"model": name, "messages": [{"role": "user", "content": "x"}]})
