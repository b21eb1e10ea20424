# The DeepSeek-V4-Flash-width slice the GPU benchmarks share (issue 18): V4-Flash's widths and
# one layer of each kind (sliding + hash-routed MoE, CSA, HCA), as a transformers config. Only
# the routed-expert count varies between the benchmarks that build it.
from transformers import DeepseekV4Config


def v4_flash_slice_config(n_routed_experts=256, **extra):
    return DeepseekV4Config(
        vocab_size=129280, hidden_size=4096, num_hidden_layers=3, num_attention_heads=64, head_dim=512,
        qk_rope_head_dim=64, q_lora_rank=1024, o_groups=8, o_lora_rank=1024, moe_intermediate_size=2048,
        n_routed_experts=n_routed_experts, num_experts_per_tok=6, n_shared_experts=1, sliding_window=128,
        hc_mult=4, index_n_heads=64, index_head_dim=128, index_topk=512, max_position_embeddings=65536,
        layer_types=["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"],
        mlp_layer_types=["hash_moe", "moe", "moe"],
        compress_rates={"compressed_sparse_attention": 4, "heavily_compressed_attention": 128},
        **extra)
