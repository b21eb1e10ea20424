// Causal scaled-dot-product attention on the CPU in fp32 over keys and values already gathered
// from a sequence's cache. Covers MHA, GQA/MQA (kv heads shared by groups of query heads) and
// MLA in latent space (one kv "head" whose value is a prefix of its key). Knows no cache layout.
#pragma once

#include <cstdint>

namespace di::kernels::cpu {

// Where keys or values live: element (token t, kv head g, channel c) is at
// data[t * token_stride + g * head_stride + c].
struct KvView {
  const float* data = nullptr;
  int64_t token_stride = 0;
  int64_t head_stride = 0;
};

struct AttentionShape {
  int64_t num_queries = 0;   // new tokens; query i sits at position first_pos + i
  int64_t first_pos = 0;     // keys 0..first_pos+i are visible to query i
  int64_t num_heads = 0;     // query heads
  int64_t num_kv_heads = 0;  // query head h reads kv head h / (num_heads / num_kv_heads)
  int64_t qk_dim = 0;        // channels of a query / key
  int64_t v_dim = 0;         // channels of a value
  float scale = 1.0f;        // softmax scale applied to q.k
};

// q: [num_queries, num_heads, qk_dim] dense. out: [num_queries, num_heads, v_dim] dense. The
// views must hold first_pos + num_queries tokens. Softmax in fp32 with the max subtracted.
void causal_attention(const AttentionShape& shape, const float* q, const KvView& k, const KvView& v,
                      float* out);

}  // namespace di::kernels::cpu
