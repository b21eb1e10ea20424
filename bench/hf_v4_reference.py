# The transformers reference for bench_gpu_v4 (run by scripts/gpu-check.sh --hf): DeepseekV4ForCausalLM
# at the same V4-Flash widths and layer kinds (3 layers: sliding + hash-routed MoE, CSA, HCA; 256
# routed experts), random bf16 weights of its own, eager: batch-1 decode after a 4096-token
# prompt (median step with the model's cache) and one 8192-token prefill.
import time
import torch
import transformers
from transformers import DeepseekV4Config, DeepseekV4ForCausalLM

torch.manual_seed(0)
cfg = DeepseekV4Config(
    vocab_size=129280, hidden_size=4096, num_hidden_layers=3, num_attention_heads=64, head_dim=512,
    qk_rope_head_dim=64, q_lora_rank=1024, o_groups=8, o_lora_rank=1024, moe_intermediate_size=2048,
    n_routed_experts=256, num_experts_per_tok=6, n_shared_experts=1, sliding_window=128, hc_mult=4,
    index_n_heads=64, index_head_dim=128, index_topk=512, max_position_embeddings=65536,
    layer_types=["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"],
    mlp_layer_types=["hash_moe", "moe", "moe"],
    compress_rates={"compressed_sparse_attention": 4, "heavily_compressed_attention": 128})
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
