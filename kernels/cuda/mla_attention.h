// Multi-head latent attention (DeepSeek-V2/V3) in its weight-absorbed form for every row of a
// step at once (varlen: prefill chunks and decode tokens of many sequences packed together):
// MQA with one K=V head per token, the latent cache entry [kv_lora_rank latent | rope] the
// queries were absorbed into. Row r of sequence s at position p attends to the sequence's
// entries 0..p (causal), all of them read from the paged latent cache, so the step's own entries
// must be written there first. The values are the entries' latent part only. fp32 queries and
// output, an fp32 or bf16 cache (bf16_cache); an online softmax, so no scratch grows with the
// context. Knows sequences only
// through the TokenBatch.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/cuda/token_batch.h"

namespace di::kernels::cuda {

struct MlaAttentionArgs {
  TokenBatch batch;
  const float* q = nullptr;  // [rows, num_heads, latent_dim + rope_dim]
  float* out = nullptr;      // [rows, num_heads, latent_dim]; padding rows get zeros
  int32_t num_heads = 0;
  int32_t latent_dim = 0;  // kv_lora_rank: a multiple of 4, at most 512
  int32_t rope_dim = 0;    // a multiple of 4
  float scale = 1.f;
  int32_t cache_group = 0;  // entry p of a sequence: position p's [latent | rope], fp32
  int32_t cache_layer = 0;
  // Key ranges per row, each reduced by its own block and merged after (flash-decoding's split
  // KV): range i covers keys [i * keys_per_split, (i + 1) * keys_per_split). 1 reduces in one
  // pass; at most 256. `partial` holds mla_attention_partial_floats(...) floats.
  int32_t splits = 1;
  int64_t keys_per_split = 0;
  float* partial = nullptr;
  // Products on the tensor cores in tf32 (fp32 accumulation; scores good to ~1e-3 relative): for
  // the bf16 models, whose activations carry less. Needs latent_dim and rope_dim multiples of 8.
  bool tensor_cores = false;
  // The cache holds bf16 entries (entry p: [latent | rope] as bf16, the bf16 models' cache):
  // products in bf16 on the tensor cores, the probabilities rounded to bf16 for the value
  // products (fp32 accumulation). Needs latent_dim + rope_dim a multiple of 16 and latent_dim a
  // multiple of 8; `tensor_cores` is then ignored.
  bool bf16_cache = false;
};

// Splits worth launching for `rows` rows of up to `max_keys` keys each on this device, for the
// fp32, the tensor-core or the bf16-cache instance.
int32_t mla_attention_splits(int64_t rows, int32_t num_heads, int64_t max_keys, bool tensor_cores = false,
                             bool bf16_cache = false);

// Whether the bf16-cache instance takes these widths.
inline bool mla_bf16_cache_fits(int32_t latent_dim, int32_t rope_dim) {
  return latent_dim > 0 && latent_dim <= 512 && latent_dim % 8 == 0 && (latent_dim + rope_dim) % 16 == 0;
}

// The range length for `splits` ranges over up to `max_keys` keys: whole 32-key tiles, so no
// range ends in a sliver of a tile.
inline int64_t mla_attention_keys_per_split(int64_t max_keys, int32_t splits) {
  const int64_t per = (max_keys + splits - 1) / splits;
  return (per + 31) / 32 * 32;
}

inline int64_t mla_attention_partial_floats(int64_t rows, int32_t num_heads, int32_t latent_dim, int32_t splits) {
  return splits > 1 ? int64_t{splits} * rows * num_heads * (latent_dim + 2) : 0;
}

// out = softmax(q . entry * scale over the row's keys) . entry[:latent_dim]. Bad widths or splits
// are invalid_argument; nothing is launched then.
Status mla_attention(const MlaAttentionArgs& args, void* stream);

}  // namespace di::kernels::cuda
