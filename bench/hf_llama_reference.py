# The transformers reference for bench_gpu_llama (run by scripts/gpu-check.sh --hf): a Llama-3-8B-shaped LlamaForCausalLM with random
# bf16 weights (same shapes, its own random values), batch-1 decode (128-token prompt, 128 new,
# ignore EOS) eager and static cache + torch.compile, and one 8192-token prefill (eager, SDPA).
import os, time, torch, transformers
from transformers import LlamaConfig, LlamaForCausalLM
torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=131072,
                  rope_theta=500000.0, rms_norm_eps=1e-5,
                  rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                    original_max_position_embeddings=8192))
with torch.device("cuda"):
    model = LlamaForCausalLM(cfg).to(torch.bfloat16).eval()
print("transformers", transformers.__version__, "torch", torch.__version__, flush=True)
ids = torch.randint(0, 128256, (1, 128), device="cuda")

def gen(n, **kw):
    torch.cuda.synchronize(); t = time.perf_counter()
    model.generate(ids, max_new_tokens=n, min_new_tokens=n, do_sample=False, pad_token_id=0, **kw)
    torch.cuda.synchronize(); return time.perf_counter() - t

def decode_ms(**kw):
    gen(8, **kw); gen(8, **kw)
    best = 1e9
    for _ in range(2):
        best = min(best, (gen(129, **kw) - gen(1, **kw)) / 128)
    return best * 1e3

with torch.inference_mode():
    ms = decode_ms()
    print(f"HF eager decode b=1: {ms:.2f} ms/token = {1e3/ms:.1f} tok/s", flush=True)
    long = torch.randint(0, 128256, (1, 8192), device="cuda")
    model(long[:, :512]); torch.cuda.synchronize()
    ts = []
    for _ in range(3):
        torch.cuda.synchronize(); t = time.perf_counter(); model(long, logits_to_keep=1); torch.cuda.synchronize()
        ts.append(time.perf_counter() - t)
    print(f"HF eager prefill 8192: {sorted(ts)[1]*1e3:.1f} ms", flush=True)

    if os.environ.get("HF_COMPILE", "0") != "1":
        raise SystemExit(0)
    try:
        t = time.perf_counter()
        ms = decode_ms(cache_implementation="static")
        print(f"HF static+compile decode b=1: {ms:.2f} ms/token = {1e3/ms:.1f} tok/s (incl. compile warm-up {time.perf_counter()-t:.0f} s)", flush=True)
    except Exception as e:
        print("HF static+compile failed:", repr(e)[:300], flush=True)
