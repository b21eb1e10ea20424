"""The Python binding's glue (pybind11 module + libdeepinfer.so) for a run under valgrind memcheck
(scripts/suites/capi_valgrind.sh, with PYTHONMALLOC=malloc): engine create / generate / destroy
cycles, an unfinished request closed, a cancel, recipe + parser, an error. Not a pytest module.
Usage: python3 valgrind_glue.py MODEL_DIR; prints "done" when every check passed."""
import sys

import deepinfer
from deepinfer import LLM, Recipe, SamplingParams, Tokenizer

model = sys.argv[1]
tok = Tokenizer(model)
prompt = tok.encode("Leak check", add_special=True)
LONG = SamplingParams(temperature=0, max_tokens=2000, ignore_eos=True)
for _ in range(2):
    with LLM(model, max_num_seqs=2, max_model_len=2048) as llm:
        params = SamplingParams(temperature=0, max_tokens=2, ignore_eos=True, logprobs=2)
        out = llm.generate([prompt], params)[0].outputs[0]
        assert len(out.token_ids) == 2 and out.text == tok.decode(out.token_ids)
        with llm.engine.submit(prompt, LONG) as req:
            next(req)  # left unfinished: close cancels and frees it
        req = llm.engine.submit(prompt, LONG)
        next(req)
        req.cancel()
        assert list(req)[-1].finish_reason == "cancelled"
        req.close()
chat = {"model": "deepseek-v4", "messages": [{"role": "user", "content": "hi"}]}
with Recipe(model) as recipe, recipe.prepare("chat", chat) as p, p.parser() as parser:
    parser.push("x", finish_reason="stop")
    assert parser.response()["object"] == "chat.completion"
try:
    deepinfer.Engine("/nonexistent")
    raise AssertionError("a missing model must raise")
except deepinfer.DeepInferError as e:
    assert e.message
tok.close()
print("done")
