# Writes a random-weight checkpoint for the serving benchmark (bench/serving_bench.sh) on the GPU
# machine, saved by transformers as a user's checkpoint would be: the Llama-3-8B shape, or the
# DeepSeek-V4-Flash-width slice of issue 18 (3 layers: sliding + hash MoE, CSA, HCA; 32 routed
# experts so it fits the disk — a token reads the same bytes as with 256). bf16 weights.
# Usage: python3 bench/make_serving_checkpoint.py {llama|v4} OUT_DIR TOKENIZER_DIR
#   TOKENIZER_DIR: tokenizer.json (+ tokenizer_config.json) copied next to the weights.
import os
import shutil
import sys
import time

import torch

family, out, tok_dir = sys.argv[1], sys.argv[2], sys.argv[3]
torch.manual_seed(0)
t0 = time.time()
if family == "llama":
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                      num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=8192,
                      rope_theta=500000.0, bos_token_id=128000, eos_token_id=128001, torch_dtype="bfloat16")
    cls = LlamaForCausalLM
elif family == "v4":
    from transformers import DeepseekV4ForCausalLM
    from v4_flash_slice import v4_flash_slice_config
    cfg = v4_flash_slice_config(n_routed_experts=32, torch_dtype="bfloat16")
    cls = DeepseekV4ForCausalLM
else:
    sys.exit(f"unknown family {family!r}: llama or v4")
torch.set_default_dtype(torch.bfloat16)
with torch.device("cuda"):
    model = cls(cfg).eval()
    # Small weights keep random logits tame (no NaN from a long random residual stream).
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.02)
model.save_pretrained(out, safe_serialization=True)
for name in ("tokenizer.json", "tokenizer_config.json"):
    if os.path.exists(os.path.join(tok_dir, name)):
        shutil.copy(os.path.join(tok_dir, name), out)
size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
print(f"{family}: {size / 1e9:.2f} GB in {out} ({time.time() - t0:.0f} s)", flush=True)
