// Rope for deepseek_v4: inverse frequencies (default or YaRN, as transformers 5.17 computes
// them in fp32) and the interleaved rotation of a head's trailing `dim` channels. V4 pairs
// channels (2i, 2i+1); the inverse rotation undoes it on attention outputs (K = V).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/deepseek_v4/config.h"

namespace di::engine::deepseek_v4 {

class Rope {
 public:
  Rope() = default;
  Rope(const RopeConfig& config, int32_t head_dim);

  const std::vector<float>& inv_freq() const { return inv_freq_; }
  int32_t dim() const { return dim_; }
  float scale() const { return scale_; }  // YaRN's attention factor on cos and sin (1 otherwise)

  // Rotates the last dim() channels of each of `count` vectors of `width` floats (`stride` apart)
  // by position `pos` (inverse: by -pos).
  void apply(float* x, int64_t count, int64_t width, int64_t stride, int64_t pos,
             bool inverse = false) const;

 private:
  std::vector<float> inv_freq_;
  int32_t dim_ = 0;
  float scale_ = 1.0f;
};

}  // namespace di::engine::deepseek_v4
