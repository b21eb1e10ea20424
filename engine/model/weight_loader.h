// WeightLoader: takes a model family's tensors out of a Checkpoint by name with the shape and
// dtype the config implies, converts them to fp32 for the CPU, and remembers which it took so
// that anything left over is reported. Knows no family; families say what they expect.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/model/quant_config.h"
#include "engine/model/safetensors.h"
#include "kernels/weight_format.h"

namespace di::engine {

// Owns the checkpoint mapping and any converted copies; weights point into it.
struct WeightStore {
  std::unique_ptr<Checkpoint> checkpoint;
  std::deque<std::vector<float>> owned_f32;
  std::deque<std::vector<int32_t>> owned_i32;
  std::string first_quantized;  // name of the first fp8/fp4 weight taken, "" when none
};

class WeightLoader {
 public:
  WeightLoader(WeightStore& store, std::string family) : store_(store), family_(std::move(family)) {}

  // The first of `names` present in the checkpoint (several spellings of one tensor), or "".
  std::string pick(const std::vector<std::string>& names) const;

  // A float tensor (F32, BF16 or F16 on disk) of exactly `shape`, as fp32. fp32 data that is
  // suitably aligned is used in place; the rest is converted into the store.
  Result<const float*> f32(const std::vector<std::string>& names, const std::vector<int64_t>& shape);
  // A linear layer's weight [out, in] as stored: F32/BF16/F16 (as fp32, like f32()), F8_E4M3 with
  // its block scale, or packed FP4 (I8/U8 [out, in / 2]) with its per-32 scale. The scale is
  // the weight's name with ".weight" replaced by ".scale" (DeepSeek's) or ".weight_scale_inv"
  // (DeepSeek-V3's), F8_E8M0 or F32, on the grid quant() gives; anything else is an error naming
  // the tensor. Quantized data stays in the mapping.
  Result<kernels::LinearWeight> linear(const std::vector<std::string>& names, int64_t out, int64_t in);
  void set_quant(const QuantConfig& q) { quant_ = q; }
  // linear() hands BF16 weights over as they are stored (WeightFormat::kBf16) instead of as fp32
  // copies: for device loaders, which upload the mapping's bytes.
  void keep_bf16(bool on) { keep_bf16_ = on; }
  const QuantConfig& quant() const { return quant_; }
  // An integer tensor (I64 or I32 on disk) of exactly `shape`, as int32.
  Result<const int32_t*> i32(const std::vector<std::string>& names,
                             const std::vector<int64_t>& shape);
  // A tensor of exactly `shape` as stored (any dtype; no conversion), for device loaders.
  Result<const TensorView*> tensor(const std::vector<std::string>& names, const std::vector<int64_t>& shape) {
    return take(names, shape);
  }
  // Takes every tensor whose name starts with one of `prefixes` as is (no conversion).
  std::vector<const TensorView*> take_prefix(const std::vector<std::string>& prefixes);

  // Fails naming the first tensors nobody took (an extra tensor is a wrong config or checkpoint);
  // with `prefix`, only among the tensors whose names start with it.
  Status check_all_taken(const std::string& prefix = "") const;

 private:
  Result<const TensorView*> take(const std::vector<std::string>& names,
                                 const std::vector<int64_t>& shape);
  Result<const TensorView*> take_scale(const std::string& weight, const std::vector<int64_t>& grid);
  WeightStore& store_;
  std::string family_;
  QuantConfig quant_;
  bool keep_bf16_ = false;
  std::set<std::string> taken_;
};

// The decoder ends every family shares: model.embed_tokens, model.norm and lm_head ([vocab,
// hidden] each but the norm). Tied: the head is the embedding, and a stored copy (some exports
// keep one) is taken unused.
struct DecoderEnds {
  const float* embed = nullptr;
  const float* norm = nullptr;
  const float* lm_head = nullptr;
};
Result<DecoderEnds> load_decoder_ends(WeightLoader& w, int64_t vocab_size, int64_t hidden_size, bool tie_word_embeddings);

}  // namespace di::engine
