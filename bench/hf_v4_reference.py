# The transformers reference for bench_gpu_v4 (run by scripts/gpu-check.sh --hf): DeepseekV4ForCausalLM
# at the same V4-Flash widths and layer kinds (3 layers: sliding + hash-routed MoE, CSA, HCA; 256
# routed experts), random bf16 weights of its own, eager: batch-1 decode after a 4096-token
# prompt (median step with the model's cache) and one 8192-token prefill.
import time
import torch
import transformers
from transformers import DeepseekV4ForCausalLM

from v4_flash_slice import v4_flash_slice_config

torch.manual_seed(0)
cfg = v4_flash_slice_config()
torch.set_default_dtype(torch.bfloat16)
with torch.device("cuda"):
    model = DeepseekV4ForCausalLM(cfg).eval()
torch.set_default_dtype(torch.float32)
print("transformers", transformers.__version__, "torch", torch.__version__,
      f"{sum(p.numel() for p in model.parameters()) * 2 / 1e9:.1f} GB bf16", flush=True)


def timed(f):
    torch.cuda.synchronize()
    t = time.perf_counter()
    out = f()
    torch.cuda.synchronize()
    return out, (time.perf_counter() - t) * 1e3


with torch.inference_mode():
    prompt = torch.randint(0, cfg.vocab_size, (1, 4096), device="cuda")
    out, ms = timed(lambda: model(input_ids=prompt, use_cache=True, logits_to_keep=1))
    print(f"HF eager prefill 4096: {ms:.1f} ms", flush=True)
    pkv = out.past_key_values
    steps = []
    tok = out.logits[:, -1:].argmax(-1)
    for i in range(12):
        out, ms = timed(lambda: model(input_ids=tok, past_key_values=pkv, use_cache=True))
        pkv = out.past_key_values
        tok = out.logits[:, -1:].argmax(-1)
        if i >= 2:
            steps.append(ms)
    print(f"HF eager decode b=1 ctx 4096: {sorted(steps)[len(steps) // 2]:.2f} ms/token", flush=True)
    long = torch.randint(0, cfg.vocab_size, (1, 8192), device="cuda")
    ts = [timed(lambda: model(input_ids=long, logits_to_keep=1))[1] for _ in range(2)]
    print(f"HF eager prefill 8192: {min(ts):.1f} ms", flush=True)
