// RotaryEmbedding for the families that read their rope from config.json's rope_parameters (or
// the older rope_scaling + rope_theta): inverse frequencies for default, linear, llama3 and YaRN
// scaling as transformers 5.17 computes them in fp32, the cos/sin scale (YaRN's attention
// factor), and the rotation in either channel layout. Model-agnostic: deepseek_v4's Rope is a
// view of it over that family's own config keys.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"

namespace di::engine {

// Which channels a rotation pairs: (i, i + dim/2) as Llama's rotate_half, or (2i, 2i+1) as
// DeepSeek's MLA rope (transformers' complex / interleaved form).
enum class RopeLayout { kHalf, kInterleaved };

struct RopeConfig {
  std::string rope_type = "default";  // default | linear | llama3 | yarn
  double rope_theta = 10000.0;
  int32_t dim = 0;                    // rotated channels (even)
  double factor = 1.0;
  // llama3
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  // llama3 and yarn
  double original_max_position_embeddings = 0;
  // yarn
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  double mscale = 0.0;          // 0: absent
  double mscale_all_dim = 0.0;  // 0: absent
  double attention_factor = -1.0;  // < 0: derived from factor / mscale
  bool truncate = true;
};

// Reads the rope of a config.json: rope_parameters, else rope_scaling (+ top-level rope_theta);
// `dim` is the rotated width the family implies. Unknown rope types are an error naming them.
Result<RopeConfig> parse_rope_config(const nlohmann::json& config, int32_t dim,
                                     int64_t max_position_embeddings);

// YaRN's attention temperature term: 0.1 * mscale * ln(scale) + 1 (1 when scale <= 1).
double yarn_get_mscale(double scale, double mscale);

class RotaryEmbedding {
 public:
  RotaryEmbedding() = default;
  RotaryEmbedding(const RopeConfig& config, RopeLayout layout);

  const std::vector<float>& inv_freq() const { return inv_freq_; }
  float attention_scaling() const { return scale_; }
  int32_t dim() const { return dim_; }

  // Rotates `count` vectors of dim() channels, `stride` floats apart, by position `pos`
  // (inverse: by -pos, which undoes it).
  void apply(float* x, int64_t count, int64_t stride, int64_t pos, bool inverse = false) const;

 private:
  std::vector<float> inv_freq_;
  int32_t dim_ = 0;
  float scale_ = 1.0f;
  RopeLayout layout_ = RopeLayout::kHalf;
};

}  // namespace di::engine
