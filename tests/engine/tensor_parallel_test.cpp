// Tensor parallelism's sharding rules against the full tensors: every rank's shards reassemble
// the checkpoint's tensors, and the sharded products (column-parallel concatenated, row-parallel
// summed) equal the unsharded ones on the CPU kernels.
#include "engine/parallel/tensor_parallel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/activation.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/linear.h"

namespace di::engine::parallel {
namespace {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<float> random_values(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(gen);
  return v;
}

TpPlan plan_or_die(const TpGeometry& g, int32_t rank, int32_t tp, VocabSharding v = VocabSharding::kReplicated) {
  Result<TpPlan> p = plan_tensor_parallel(g, rank, tp, v);
  EXPECT_TRUE(p.is_ok()) << p.status().message();
  return p.is_ok() ? *p : TpPlan{};
}

TensorShard shard_or_die(const TpPlan& p, const std::string& name, const Shape& shape) {
  Result<TensorShard> s = shard_tensor(p, name, shape);
  EXPECT_TRUE(s.is_ok()) << name << ": " << s.status().message();
  return s.is_ok() ? *s : TensorShard{};
}

std::vector<float> take_shard(const std::vector<float>& full, const Shape& shape, const TensorShard& s) {
  std::vector<float> out(static_cast<size_t>(numel(s.shape)));
  copy_shard(full.data(), shape, s, sizeof(float), out.data());
  return out;
}

// Writes every rank's shard back at its place in a tensor of the full shape and checks that it
// matches the original there and that each element is held by `copies` ranks.
void expect_shards_reassemble(const TpGeometry& g, int32_t tp, VocabSharding vocab, const std::string& name,
                              const Shape& shape, int32_t copies_when_split) {
  SCOPED_TRACE(name + " tp=" + std::to_string(tp));
  const std::vector<float> full = random_values(numel(shape), 7);
  std::vector<int32_t> held(full.size(), 0);
  for (int32_t r = 0; r < tp; ++r) {
    const TpPlan p = plan_or_die(g, r, tp, vocab);
    const TensorShard s = shard_or_die(p, name, shape);
    const std::vector<float> part = take_shard(full, shape, s);
    ASSERT_EQ(static_cast<int64_t>(part.size()), numel(s.shape));
    if (s.dim < 0) {
      EXPECT_EQ(part, full);
      for (int32_t& h : held) ++h;
      continue;
    }
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < s.dim; ++d) outer *= shape[static_cast<size_t>(d)];
    for (size_t d = static_cast<size_t>(s.dim) + 1; d < shape.size(); ++d) inner *= shape[d];
    const int64_t mid = shape[static_cast<size_t>(s.dim)];
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t m = 0; m < s.count; ++m) {
        for (int64_t i = 0; i < inner; ++i) {
          const size_t at = static_cast<size_t>((o * mid + s.begin + m) * inner + i);
          ASSERT_EQ(part[static_cast<size_t>((o * s.count + m) * inner + i)], full[at]);
          ++held[at];
        }
      }
    }
  }
  TensorShard probe = shard_or_die(plan_or_die(g, 0, tp, vocab), name, shape);
  const int32_t expected = probe.dim < 0 ? tp : copies_when_split;
  for (size_t i = 0; i < held.size(); ++i) ASSERT_EQ(held[i], expected) << "element " << i;
}

struct Named {
  std::string name;
  Shape shape;
  int32_t copies = 1;  // ranks holding each element of a split tensor
};

// A llama / qwen layer: 8 query heads, 2 kv heads of 4, hidden 16, intermediate 24, vocab 37.
constexpr int32_t kHeads = 8, kKvHeads = 2, kHeadDim = 4, kHidden = 16, kInter = 24;
constexpr int64_t kVocab = 37;
const TpGeometry kLlama{kHeads, kKvHeads, kVocab};

std::vector<Named> llama_tensors(int32_t tp) {
  const int32_t kv_copies = tp > kKvHeads ? tp / kKvHeads : 1;
  const std::string l = "model.layers.3.";
  return {
      {"model.embed_tokens.weight", {kVocab, kHidden}},
      {"lm_head.weight", {kVocab, kHidden}},
      {"model.norm.weight", {kHidden}},
      {l + "input_layernorm.weight", {kHidden}},
      {l + "post_attention_layernorm.weight", {kHidden}},
      {l + "self_attn.q_proj.weight", {kHeads * kHeadDim, kHidden}},
      {l + "self_attn.q_proj.bias", {kHeads * kHeadDim}},
      {l + "self_attn.k_proj.weight", {kKvHeads * kHeadDim, kHidden}, kv_copies},
      {l + "self_attn.k_proj.bias", {kKvHeads * kHeadDim}, kv_copies},
      {l + "self_attn.v_proj.weight", {kKvHeads * kHeadDim, kHidden}, kv_copies},
      {l + "self_attn.o_proj.weight", {kHidden, kHeads * kHeadDim}},
      {l + "self_attn.q_norm.weight", {kHeadDim}},
      {l + "self_attn.k_norm.weight", {kHeadDim}},
      {l + "mlp.gate_proj.weight", {kInter, kHidden}},
      {l + "mlp.up_proj.weight", {kInter, kHidden}},
      {l + "mlp.up_proj.bias", {kInter}},
      {l + "mlp.down_proj.weight", {kHidden, kInter}},
  };
}

TEST(TensorParallel, LlamaShardsReassembleFullTensors) {
  for (int32_t tp : {1, 2, 4, 8}) {
    for (VocabSharding v : {VocabSharding::kReplicated, VocabSharding::kVocabParallel}) {
      for (const Named& t : llama_tensors(tp)) expect_shards_reassemble(kLlama, tp, v, t.name, t.shape, t.copies);
    }
  }
}

// DeepSeek-V2-Lite-like MLA attention (no q_lora: q_proj) and V3-like (q_a / q_b), a dense MLP
// layer and a MoE layer's shared experts and router.
TEST(TensorParallel, DeepSeekShardsReassembleFullTensors) {
  constexpr int32_t heads = 4, nope = 6, rope = 2, v_dim = 5, kv_lora = 12, q_lora = 10, hidden = 16;
  const TpGeometry g{heads, heads, 50};
  const std::string l = "model.layers.0.";
  const std::vector<Named> tensors = {
      {l + "self_attn.q_proj.weight", {heads * (nope + rope), hidden}},
      {l + "self_attn.q_a_proj.weight", {q_lora, hidden}},
      {l + "self_attn.q_a_layernorm.weight", {q_lora}},
      {l + "self_attn.q_b_proj.weight", {heads * (nope + rope), q_lora}},
      {l + "self_attn.kv_a_proj_with_mqa.weight", {kv_lora + rope, hidden}},
      {l + "self_attn.kv_a_layernorm.weight", {kv_lora}},
      {l + "self_attn.kv_b_proj.weight", {heads * (nope + v_dim), kv_lora}},
      {l + "self_attn.o_proj.weight", {hidden, heads * v_dim}},
      {l + "mlp.gate_proj.weight", {32, hidden}},
      {l + "mlp.down_proj.weight", {hidden, 32}},
      {l + "mlp.gate.weight", {6, hidden}},
      {l + "mlp.gate.e_score_correction_bias", {6}},
      {l + "mlp.shared_experts.gate_proj.weight", {8, hidden}},
      {l + "mlp.shared_experts.up_proj.weight", {8, hidden}},
      {l + "mlp.shared_experts.down_proj.weight", {hidden, 8}},
  };
  for (int32_t tp : {1, 2, 4}) {
    for (const Named& t : tensors) expect_shards_reassemble(g, tp, VocabSharding::kReplicated, t.name, t.shape, 1);
  }
}

TEST(TensorParallel, EachRankHoldsTheKvHeadsItsQueryHeadsRead) {
  for (int32_t tp : {1, 2, 4, 8}) {
    for (int32_t r = 0; r < tp; ++r) {
      const TpPlan p = plan_or_die(kLlama, r, tp);
      for (int32_t h = p.head_begin; h < p.head_begin + p.num_heads; ++h) {
        const int32_t kv = h / (kHeads / kKvHeads);  // grouped-query attention's mapping
        EXPECT_GE(kv, p.kv_head_begin) << "tp " << tp << " rank " << r << " head " << h;
        EXPECT_LT(kv, p.kv_head_begin + p.num_kv_heads) << "tp " << tp << " rank " << r << " head " << h;
      }
      EXPECT_EQ(p.kv_replicas, tp > kKvHeads ? tp / kKvHeads : 1);
    }
  }
}

TEST(TensorParallel, VocabParallelPadsTheLastRanks) {
  // 37 rows over 4 ranks: 10, 10, 10, 7, every rank padded to 10 for the logits' all-gather.
  int64_t next = 0;
  for (int32_t r = 0; r < 4; ++r) {
    const TpPlan p = plan_or_die(kLlama, r, 4, VocabSharding::kVocabParallel);
    EXPECT_EQ(p.vocab_rows_padded, 10);
    EXPECT_EQ(p.vocab_begin, next);
    EXPECT_EQ(p.vocab_rows, r < 3 ? 10 : 7);
    next += p.vocab_rows;
  }
  EXPECT_EQ(next, kVocab);
}

// y = x W^T for W [out, in]: column-parallel (W's rows split) concatenates exactly, since each
// output element is the same reduction; row-parallel (W's columns split) sums partial products,
// equal within fp32 rounding of the reordered sum.
struct MatmulCase {
  int64_t rows, in, out;
  int32_t tp;
};

TEST(TensorParallel, ColumnParallelMatmulConcatenatesToFullMatmul) {
  for (const MatmulCase c : {MatmulCase{3, 16, 32, 2}, MatmulCase{5, 40, 64, 4}, MatmulCase{1, 7, 96, 8}}) {
    SCOPED_TRACE("rows " + std::to_string(c.rows) + " in " + std::to_string(c.in) + " out " + std::to_string(c.out));
    const TpGeometry g{c.tp, c.tp, 1};
    const std::vector<float> x = random_values(c.rows * c.in, 1), w = random_values(c.out * c.in, 2);
    std::vector<float> full(static_cast<size_t>(c.rows * c.out));
    kernels::cpu::linear(x.data(), c.rows, c.in, w.data(), c.out, full.data());
    std::vector<float> joined(full.size());
    for (int32_t r = 0; r < c.tp; ++r) {
      const TensorShard s = shard_or_die(plan_or_die(g, r, c.tp), "model.layers.0.mlp.up_proj.weight", {c.out, c.in});
      ASSERT_EQ(s.kind, ShardKind::kColumnParallel);
      const std::vector<float> ws = take_shard(w, {c.out, c.in}, s);
      // Rank r's outputs are columns [begin, begin + count) of y.
      kernels::cpu::linear(x.data(), c.rows, c.in, ws.data(), s.count, joined.data() + s.begin, c.in, c.out);
    }
    EXPECT_EQ(joined, full);
  }
}

// |sum - reordered sum| <= n * eps * sum |x_k w_k|, with n the reduction length (Higham 3.1).
void expect_within_fp32_rounding(const std::vector<float>& got, const std::vector<float>& want,
                                 const std::vector<float>& bound_scale, int64_t n) {
  ASSERT_EQ(got.size(), want.size());
  const double eps = std::ldexp(1.0, -24);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::abs(double(got[i]) - double(want[i])), 2.0 * n * eps * bound_scale[i] + 1e-30) << "element " << i;
  }
}

std::vector<float> abs_products(const std::vector<float>& x, const std::vector<float>& w, int64_t rows, int64_t in,
                                int64_t out) {
  std::vector<float> s(static_cast<size_t>(rows * out), 0.f);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < out; ++o) {
      double a = 0;
      for (int64_t k = 0; k < in; ++k) a += std::abs(double(x[r * in + k]) * w[o * in + k]);
      s[static_cast<size_t>(r * out + o)] = static_cast<float>(a);
    }
  }
  return s;
}

TEST(TensorParallel, RowParallelMatmulSummedOverRanksEqualsFullMatmul) {
  // down_proj splits its input evenly, o_proj by heads (here 8 heads of in / 8).
  for (const char* name : {"model.layers.1.mlp.down_proj.weight", "model.layers.1.self_attn.o_proj.weight"}) {
    for (const MatmulCase c : {MatmulCase{3, 16, 16, 2}, MatmulCase{5, 64, 7, 4}, MatmulCase{4, 96, 33, 8}}) {
      SCOPED_TRACE(std::string(name) + " in " + std::to_string(c.in) + " tp " + std::to_string(c.tp));
      const TpGeometry g{8, 8, 1};
      const std::vector<float> x = random_values(c.rows * c.in, 3), w = random_values(c.out * c.in, 4);
      std::vector<float> full(static_cast<size_t>(c.rows * c.out));
      kernels::cpu::linear(x.data(), c.rows, c.in, w.data(), c.out, full.data());
      std::vector<float> sum(full.size(), 0.f), part(full.size());
      for (int32_t r = 0; r < c.tp; ++r) {
        const TensorShard s = shard_or_die(plan_or_die(g, r, c.tp), name, {c.out, c.in});
        ASSERT_EQ(s.kind, ShardKind::kRowParallel);
        const std::vector<float> ws = take_shard(w, {c.out, c.in}, s);
        // Rank r holds x's columns [begin, begin + count): the column-parallel layer before it
        // produced exactly those.
        kernels::cpu::linear(x.data() + s.begin, c.rows, s.count, ws.data(), c.out, part.data(), c.in, c.out);
        for (size_t i = 0; i < sum.size(); ++i) sum[i] += part[i];  // the all-reduce
      }
      expect_within_fp32_rounding(sum, full, abs_products(x, w, c.rows, c.in, c.out), c.in);
    }
  }
}

// A whole SwiGLU MLP: gate/up column-parallel, silu(gate) * up on each rank's slice, down_proj
// row-parallel with its bias added once; summed over ranks it is the unsharded MLP.
TEST(TensorParallel, ShardedSwiGluMlpSumsToFullMlp) {
  constexpr int64_t rows = 3, hidden = 16, inter = 48;
  const std::string l = "model.layers.2.mlp.";
  const std::vector<float> x = random_values(rows * hidden, 5), gate = random_values(inter * hidden, 6),
                           up = random_values(inter * hidden, 7), down = random_values(hidden * inter, 8),
                           bias = random_values(hidden, 9);
  auto mlp = [&](const std::vector<float>& g, const std::vector<float>& u, const std::vector<float>& d, int64_t n,
                 const float* b) {
    std::vector<float> a(static_cast<size_t>(rows * n)), c(static_cast<size_t>(rows * n)),
        y(static_cast<size_t>(rows * hidden));
    kernels::cpu::linear(x.data(), rows, hidden, g.data(), n, a.data());
    kernels::cpu::linear(x.data(), rows, hidden, u.data(), n, c.data());
    kernels::cpu::silu_and_mul(a.data(), c.data(), rows * n, a.data());
    kernels::cpu::linear(a.data(), rows, n, d.data(), hidden, y.data());
    if (b != nullptr) kernels::cpu::add_bias(y.data(), rows, hidden, hidden, b);
    return y;
  };
  const std::vector<float> full = mlp(gate, up, down, inter, bias.data());
  const TpGeometry g{4, 4, 1};
  for (int32_t tp : {1, 2, 4}) {
    SCOPED_TRACE("tp " + std::to_string(tp));
    std::vector<float> sum(full.size(), 0.f);
    for (int32_t r = 0; r < tp; ++r) {
      const TpPlan p = plan_or_die(g, r, tp);
      const TensorShard sg = shard_or_die(p, l + "gate_proj.weight", {inter, hidden});
      const TensorShard su = shard_or_die(p, l + "up_proj.weight", {inter, hidden});
      const TensorShard sd = shard_or_die(p, l + "down_proj.weight", {hidden, inter});
      const TensorShard sb = shard_or_die(p, l + "down_proj.bias", {hidden});
      ASSERT_EQ(sb.kind, ShardKind::kRowParallelBias);
      const float* b = r == 0 ? bias.data() : nullptr;  // added once: on rank 0, before the all-reduce
      const std::vector<float> y = mlp(take_shard(gate, {inter, hidden}, sg), take_shard(up, {inter, hidden}, su),
                                       take_shard(down, {hidden, inter}, sd), sg.count, b);
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += y[i];
    }
    // Bound: the down projection's reordered sum over the intermediate, with |h| <= ~|x||w| terms.
    for (size_t i = 0; i < sum.size(); ++i) EXPECT_NEAR(sum[i], full[i], 1e-4f * (1.f + std::abs(full[i])));
  }
}

// Grouped-query attention with q/k/v column-parallel and o_proj row-parallel: each rank attends
// over its own heads with the kv heads it holds (replicated when tp > kv heads), and the o_proj
// partial sums add up to the unsharded block.
TEST(TensorParallel, ShardedGqaAttentionSumsToFullAttention) {
  constexpr int64_t T = 5, q_width = kHeads * kHeadDim, kv_width = kKvHeads * kHeadDim;
  const std::string l = "model.layers.0.self_attn.";
  const std::vector<float> x = random_values(T * kHidden, 10), wq = random_values(q_width * kHidden, 11),
                           wk = random_values(kv_width * kHidden, 12), wv = random_values(kv_width * kHidden, 13),
                           wo = random_values(kHidden * q_width, 14);
  auto block = [&](const std::vector<float>& q_w, const std::vector<float>& k_w, const std::vector<float>& v_w,
                   const std::vector<float>& o_w, int64_t heads, int64_t kv_heads) {
    const int64_t qw = heads * kHeadDim, kw = kv_heads * kHeadDim;
    std::vector<float> q(static_cast<size_t>(T * qw)), k(static_cast<size_t>(T * kw)), v(k.size()), a(q.size()),
        y(static_cast<size_t>(T * kHidden));
    kernels::cpu::linear(x.data(), T, kHidden, q_w.data(), qw, q.data());
    kernels::cpu::linear(x.data(), T, kHidden, k_w.data(), kw, k.data());
    kernels::cpu::linear(x.data(), T, kHidden, v_w.data(), kw, v.data());
    const kernels::cpu::AttentionShape shape{T, 0, heads, kv_heads, kHeadDim, kHeadDim, 0.5f};
    kernels::cpu::causal_attention(shape, q.data(), {k.data(), kw, kHeadDim}, {v.data(), kw, kHeadDim}, a.data());
    kernels::cpu::linear(a.data(), T, qw, o_w.data(), kHidden, y.data());
    return y;
  };
  const std::vector<float> full = block(wq, wk, wv, wo, kHeads, kKvHeads);
  for (int32_t tp : {1, 2, 4, 8}) {
    SCOPED_TRACE("tp " + std::to_string(tp));
    std::vector<float> sum(full.size(), 0.f);
    for (int32_t r = 0; r < tp; ++r) {
      const TpPlan p = plan_or_die(kLlama, r, tp);
      auto part = [&](const std::string& name, const std::vector<float>& w, const Shape& shape) {
        return take_shard(w, shape, shard_or_die(p, l + name, shape));
      };
      const std::vector<float> y =
          block(part("q_proj.weight", wq, {q_width, kHidden}), part("k_proj.weight", wk, {kv_width, kHidden}),
                part("v_proj.weight", wv, {kv_width, kHidden}), part("o_proj.weight", wo, {kHidden, q_width}),
                p.num_heads, p.num_kv_heads);
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += y[i];  // the all-reduce after o_proj
    }
    for (size_t i = 0; i < sum.size(); ++i) EXPECT_NEAR(sum[i], full[i], 1e-4f * (1.f + std::abs(full[i])));
  }
}

TEST(TensorParallel, RefusesLayoutsThatDoNotSplit) {
  Result<TpPlan> heads = plan_tensor_parallel({6, 6, 10}, 0, 4);
  ASSERT_FALSE(heads.is_ok());
  EXPECT_EQ(heads.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(heads.status().message().find("num_attention_heads 6"), std::string::npos) << heads.status().message();

  Result<TpPlan> kv = plan_tensor_parallel({12, 3, 10}, 0, 4);  // 3 kv heads over 4 ranks
  ASSERT_FALSE(kv.is_ok());
  EXPECT_NE(kv.status().message().find("num_key_value_heads 3"), std::string::npos) << kv.status().message();

  EXPECT_FALSE(plan_tensor_parallel(kLlama, 2, 2).is_ok());
  EXPECT_FALSE(plan_tensor_parallel(kLlama, 0, 0).is_ok());

  const TpPlan p = plan_or_die(kLlama, 0, 4);
  Result<TensorShard> uneven = shard_tensor(p, "model.layers.0.mlp.gate_proj.weight", {10, kHidden});
  ASSERT_FALSE(uneven.is_ok());
  EXPECT_NE(uneven.status().message().find("model.layers.0.mlp.gate_proj.weight"), std::string::npos);

  Result<TensorShard> expert = shard_tensor(p, "model.layers.1.mlp.experts.5.down_proj.weight", {kHidden, 8});
  ASSERT_FALSE(expert.is_ok());
  EXPECT_EQ(expert.status().code(), StatusCode::kUnsupported);

  Result<TensorShard> unknown = shard_tensor(p, "model.layers.1.self_attn.rotary.inv_freq", {8});
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);

  Result<TensorShard> scale = shard_tensor(p, "model.layers.1.mlp.up_proj.weight_scale_inv", {1, 1});
  ASSERT_FALSE(scale.is_ok());
  EXPECT_EQ(scale.status().code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace di::engine::parallel
