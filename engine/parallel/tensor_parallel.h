// Tensor parallelism's weight sharding rules (Megatron-LM's layout, as vLLM loads it): which part
// of each named checkpoint tensor rank r of tp keeps. Column-parallel linears (q/k/v, MLA's
// q_b/kv_b, gate/up) split their output rows, row-parallel ones (o_proj, down_proj) their input
// columns, whose partial products the model all-reduces. Plain functions over shapes and names,
// no device and no communicator: the CPU tests check them, the models' loaders call them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace di::engine::parallel {

// The head counts the split follows; every other size is read off the tensor's own shape.
struct TpGeometry {
  int32_t num_attention_heads = 0;
  int32_t num_key_value_heads = 0;  // MLA models: any value, their kv_b_proj splits by query head
  int64_t vocab_size = 0;
};

// How embed_tokens and lm_head are held: whole on every rank, or split by vocabulary rows (the
// embedding's partial lookups are all-reduced, lm_head's logits all-gathered).
enum class VocabSharding { kReplicated, kVocabParallel };

// What rank tp_rank of tp_size holds, in units of heads and vocabulary rows.
struct TpPlan {
  int32_t tp_rank = 0;
  int32_t tp_size = 1;
  int32_t head_begin = 0;  // this rank's query heads: [head_begin, head_begin + num_heads)
  int32_t num_heads = 0;
  int32_t kv_head_begin = 0;  // this rank's kv heads
  int32_t num_kv_heads = 0;
  // Ranks that hold each kv head: 1 when tp divides the kv heads, tp / num_key_value_heads when
  // tp exceeds them (every rank then holds the one kv head its query heads read).
  int32_t kv_replicas = 1;
  VocabSharding vocab = VocabSharding::kReplicated;
  int64_t vocab_begin = 0;  // rows of embed_tokens / lm_head this rank holds
  int64_t vocab_rows = 0;
  // Rows every rank's vocabulary shard is padded to (ceil(vocab / tp)), so all-gathered logits
  // line up; equals vocab_rows except on the last ranks when tp does not divide the vocabulary.
  int64_t vocab_rows_padded = 0;
  TpGeometry full;
};

// Refuses a layout the rules cannot split evenly: query heads not divisible by tp, or kv heads
// neither divisible by tp nor dividing it. Errors name the field and the sizes.
Result<TpPlan> plan_tensor_parallel(const TpGeometry& geometry, int32_t tp_rank, int32_t tp_size,
                                    VocabSharding vocab = VocabSharding::kReplicated);

enum class ShardKind {
  kReplicated,      // whole on every rank (norms, MLA's low-rank down projections, the router)
  kColumnParallel,  // a range of dim 0 (output rows; for a bias, its entries)
  kRowParallel,     // a range of dim 1 (input columns); the outputs are partial sums
  // A row-parallel linear's bias: whole on every rank but added once, after the all-reduce (or
  // before it on rank 0 only), or the sum would count it tp times.
  kRowParallelBias,
};

struct TensorShard {
  ShardKind kind = ShardKind::kReplicated;
  int32_t dim = -1;  // the split dimension; -1 when replicated
  int64_t begin = 0;
  int64_t count = 0;
  std::vector<int64_t> shape;  // the shard's shape (the full shape when replicated)
};

// The rule for one tensor by its transformers name (model.layers.N.self_attn.q_proj.weight,
// lm_head.weight, ...) for llama / qwen2 / qwen3 and DeepSeek's MLA and dense MLP, shared experts
// included. An unknown name, a routed expert's weight (placed by expert parallelism, not split),
// or a shape the split does not divide is an error naming the tensor.
Result<TensorShard> shard_tensor(const TpPlan& plan, const std::string& name, const std::vector<int64_t>& full_shape);

// Copies `shard` of a row-major tensor of `full_shape` (elements of `element_size` bytes) into
// `out`, which holds the shard's elements densely.
void copy_shard(const void* full, const std::vector<int64_t>& full_shape, const TensorShard& shard,
                size_t element_size, void* out);

}  // namespace di::engine::parallel
