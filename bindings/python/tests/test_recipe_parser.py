"""Recipe.prepare and Parser.push through the binding: rejected requests carry the API's error,
the DeepSeek recipe's output traces parse to their expected content, and a chat streams end to
end through recipe, engine and parser on the tiny model."""
import json

import pytest

import deepinfer
from deepinfer import Parser, Recipe

from conftest import ROOT

TRACES = json.loads((ROOT / "tests" / "fixtures" / "recipe_stream" / "traces.json").read_text())
TEXT_CASES = [c for c in TRACES["cases"]
              if all(isinstance(ch, str) for ch in c["chunks"]) and not c["expect"]["tool_calls"]]


def chat(content, **extra):
    return {"model": "deepseek-v4", "messages": [{"role": "user", "content": content}], **extra}


def test_prepare_renders_and_tokenizes(tiny_recipe, tiny_tokenizer):
    p = tiny_recipe.prepare("chat", chat("Hi there", max_tokens=5, temperature=0.3, stop=["X"]))
    assert "Hi there" in p.prompt
    assert p.token_ids and p.info["protocol"] == "chat"
    assert p.sampling["max_tokens"] == 5 and p.sampling["temperature"] == 0.3
    assert p.stop_sequences == ["X"] and p.stream is False
    assert p.constraint == {"type": "none"} and p.images == []
    assert p.parser_options["protocol"] == "chat"
    assert p.special_ranges and all(b < e for b, e in p.special_ranges)
    assert tiny_tokenizer.decode(p.token_ids) == p.prompt
    assert p.image_data(0) is None
    p.close()
    # A parser made from a prepared request, with an override of its id.
    q = tiny_recipe.prepare("chat", chat("Hi", stop=["X"], thinking={"type": "disabled"}))
    with q.parser(request_id="py1") as parser:
        parser.push("Hello X and more", finish_reason="stop")
        body = parser.response()
    assert body["id"] == "chatcmpl-py1"
    assert body["choices"][0]["message"]["content"] == "Hello "  # the request's stop string
    q.close()
    with pytest.raises(deepinfer.StateError):
        p.prompt


def test_rejected_request_carries_http_status_and_api_body():
    recipe = Recipe()
    with pytest.raises(deepinfer.InvalidArgumentError) as e:
        recipe.prepare("chat", {"model": "deepseek-v4", "messages": "nope"})
    assert e.value.http_status == 400
    assert "messages" in json.dumps(e.value.body)
    with pytest.raises(deepinfer.NotFoundError) as e:
        recipe.prepare("messages", {"model": "no-such-model", "max_tokens": 5,
                                    "messages": [{"role": "user", "content": "x"}]})
    assert e.value.http_status == 404
    assert e.value.body["type"] == "error"
    with pytest.raises(ValueError):
        recipe.prepare("smtp", "{}")
    with pytest.raises(deepinfer.DeepInferError):
        recipe.prepare("responses", b"{not json")


@pytest.mark.parametrize("case", TEXT_CASES, ids=[c["name"] for c in TEXT_CASES])
def test_recipe_traces_parse_to_expected_content(case):
    opts = dict(case["options"], protocol="chat")
    with Parser(opts) as parser:
        for i, ch in enumerate(case["chunks"]):
            last = i == len(case["chunks"]) - 1
            parser.push(ch, finish_reason=(case["engine_finish"] or None) if last else None)
        if not parser.ended:
            parser.finish()  # a stream that ended without a finish reason
        assert parser.ended
        msg = parser.response()["choices"][0]["message"]
    assert (msg.get("content") or "") == case["expect"]["content"]
    assert (msg.get("reasoning_content") or "") == case["expect"]["reasoning"]


def test_stream_events_are_dicts_and_match_the_response():
    with Parser({"protocol": "chat", "stream": True, "prompt_opened_thinking": True}) as parser:
        events = []
        for piece in ["Let me ", "think.</th", "ink>The an", "swer is 4", "2."]:
            events += parser.push(piece)
        events += parser.push("", finish_reason="stop", completion_tokens=9, prompt_tokens=3)
        assert parser.finish() == []  # already ended
        body = parser.response()
    assert events[-1]["data"] == "[DONE]" and events[-1]["event"] is None
    deltas = [e["data"]["choices"][0]["delta"] for e in events[:-1] if e["data"]["choices"]]
    assert "".join(d.get("content") or "" for d in deltas) == "The answer is 42."
    assert "".join(d.get("reasoning_content") or "" for d in deltas) == "Let me think."
    assert body["choices"][0]["message"]["content"] == "The answer is 42."


def test_bytes_split_inside_a_character_are_joined():
    text = "猫と犬".encode()
    with Parser({"protocol": "chat"}) as parser:
        for i in range(len(text)):
            parser.push(text[i:i + 1])
        parser.finish()
        assert parser.response()["choices"][0]["message"]["content"] == "猫と犬"


def test_bad_parser_options_are_named():
    with pytest.raises(deepinfer.DeepInferError) as e:
        Parser({"protocol": 7})
    assert "protocol" in e.value.message
    with pytest.raises(ValueError):
        Parser({"protocol": "chat"}).push("x", finish_reason="exploded")


def test_chat_streams_through_recipe_engine_and_parser(tiny_recipe, tiny_engine):
    # The last event each API defines for a stream (Responses: incomplete when max tokens hit).
    for protocol, body, last_events in [
        ("chat", chat("Tell me a story", max_tokens=12, stream=True), {None}),
        ("messages", dict(chat("Tell me a story"), max_tokens=12, stream=True), {"message_stop"}),
        ("responses", {"model": "deepseek-v4", "input": "Tell me a story",
                       "max_output_tokens": 12, "stream": True},
         {"response.completed", "response.incomplete"}),
    ]:
        prepared = tiny_recipe.prepare(protocol, body)
        parser = prepared.parser()
        events = []
        with tiny_engine.submit(prepared) as req:
            for chunk in req:
                events += parser.push(chunk)
        assert parser.ended, protocol
        assert events[-1]["event"] in last_events, (protocol, events[-1])
        if protocol == "chat":
            assert events[-1]["raw"] == "[DONE]"
        else:
            assert all(e["data"]["type"] == e["event"] for e in events)
        parser.response()  # the non-streaming body is available after the end
