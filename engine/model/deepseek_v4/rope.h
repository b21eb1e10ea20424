// Rope for deepseek_v4: the family's two rope configs (main and compress, "default" or YaRN)
// over the shared RotaryEmbedding, in the interleaved layout on a head's trailing `dim`
// channels. V4 pairs channels (2i, 2i+1); the inverse rotation undoes it on attention outputs
// (K = V).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/deepseek_v4/config.h"
#include "engine/model/rotary_embedding.h"

namespace di::engine::deepseek_v4 {

class Rope {
 public:
  Rope() = default;
  explicit Rope(const RopeConfig& config);

  const std::vector<float>& inv_freq() const { return rotary_.inv_freq(); }
  int32_t dim() const { return rotary_.dim(); }
  float scale() const { return rotary_.attention_scaling(); }  // YaRN's attention factor (1 otherwise)

  // Rotates the last dim() channels of each of `count` vectors of `width` floats (`stride` apart)
  // by position `pos` (inverse: by -pos).
  void apply(float* x, int64_t count, int64_t width, int64_t stride, int64_t pos,
             bool inverse = false) const {
    rotary_.apply(x + (width - dim()), count, stride, pos, inverse);
  }

 private:
  RotaryEmbedding rotary_;
};

}  // namespace di::engine::deepseek_v4
