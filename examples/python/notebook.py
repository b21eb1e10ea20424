# %% [markdown]
# # DeepInfer from Python
#
# Notebook-style walk through the binding (each `# %%` is a cell in VS Code / Jupytext):
# tokenize, generate a batch, stream one request, and serve a Chat Completions request through
# the recipe. Run: `python3 examples/python/notebook.py MODEL_DIR` (e.g. models/tiny-v4, the
# bundled tiny model with random weights, so its text is gibberish).

# %%
import asyncio
import sys

import deepinfer
from deepinfer import LLM, Parser, Recipe, SamplingParams, Tokenizer

model = sys.argv[1] if len(sys.argv) > 1 else "models/tiny-v4"
print("deepinfer", deepinfer.__version__, deepinfer.build_info())

# %% Tokenizer
tok = Tokenizer(model)
ids = tok.encode("Hello, 世界!")
print(ids, "->", repr(tok.decode(ids)))

# %% Batch generation, vLLM style
llm = LLM(model, max_num_seqs=8)
params = SamplingParams(temperature=0.8, seed=0, max_tokens=16, logprobs=1)
for out in llm.generate(["The capital of France is", "def fib(n):"], params):
    o = out.outputs[0]
    print(f"{out.prompt!r} -> {o.text!r} ({len(o.token_ids)} tokens, {o.finish_reason})")

# %% Streaming one request, token by token
with llm.engine.submit("Once upon a time", SamplingParams(max_tokens=16, seed=1)) as req:
    for chunk in req:
        print(chunk.text, end="", flush=True)
print()

# %% The same with async for (a helper thread polls; the event loop stays free)
async def stream():
    with llm.engine.submit("Async", SamplingParams(max_tokens=8, seed=2)) as req:
        return "".join([chunk.text async for chunk in req])

print(repr(asyncio.run(stream())))

# %% A Chat Completions request through the recipe, streamed as server-sent events
recipe = Recipe(model)
prepared = recipe.prepare("chat", {
    "model": "deepseek-v4", "stream": True, "max_tokens": 24,
    "messages": [{"role": "user", "content": "Write a haiku about the sea."}],
})
parser = prepared.parser()
with llm.engine.submit(prepared) as req:
    for chunk in req:
        for event in parser.push(chunk):
            print("data:", event["raw"])

# %% A rejected request is an exception carrying the API's error response
try:
    recipe.prepare("chat", {"model": "deepseek-v4", "messages": []})
except deepinfer.InvalidArgumentError as e:
    print(e.http_status, e.body)

# %%
llm.close()
print("done")
