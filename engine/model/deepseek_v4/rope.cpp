// Rope: see rope.h. The fp32 steps mirror transformers' (exponent and reciprocal in fp32, the
// YaRN correction range in double) so the frequencies agree to the last bit or two.
#include "engine/model/deepseek_v4/rope.h"

#include <algorithm>
#include <cmath>

namespace di::engine::deepseek_v4 {
namespace {

// YaRN (Peng et al. 2023, eq. 17-19): the dimension at which a frequency makes `rotations`
// turns over the original context.
double correction_dim(double rotations, int32_t dim, double base, double max_pos) {
  return (dim * std::log(max_pos / (rotations * 2 * M_PI))) / (2 * std::log(base));
}

}  // namespace

Rope::Rope(const RopeConfig& c, int32_t /*head_dim*/) : dim_(c.dim) {
  const int32_t half = dim_ / 2;
  std::vector<float> pos_freqs(half);
  for (int32_t i = 0; i < half; ++i) {
    const float e = static_cast<float>(2 * i) / static_cast<float>(dim_);
    pos_freqs[i] = static_cast<float>(std::pow(c.rope_theta, static_cast<double>(e)));
  }
  inv_freq_.resize(half);
  if (c.rope_type != "yarn") {
    for (int32_t i = 0; i < half; ++i) inv_freq_[i] = 1.0f / pos_freqs[i];
    return;
  }
  scale_ = static_cast<float>(c.attention_factor);
  const float factor = static_cast<float>(c.factor);
  double low = std::floor(correction_dim(c.beta_fast, dim_, c.rope_theta, c.original_max_position_embeddings));
  double high = std::ceil(correction_dim(c.beta_slow, dim_, c.rope_theta, c.original_max_position_embeddings));
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dim_ - 1));
  if (low == high) high += 0.001;  // avoid a zero-width ramp
  for (int32_t i = 0; i < half; ++i) {
    const float extrapolation = 1.0f / pos_freqs[i];
    const float interpolation = 1.0f / (factor * pos_freqs[i]);
    float ramp = (static_cast<float>(i) - static_cast<float>(low)) / static_cast<float>(high - low);
    ramp = std::clamp(ramp, 0.0f, 1.0f);
    const float keep = 1.0f - ramp;  // share of the unscaled frequency
    inv_freq_[i] = interpolation * (1.0f - keep) + extrapolation * keep;
  }
}

void Rope::apply(float* x, int64_t count, int64_t width, int64_t stride, int64_t pos,
                 bool inverse) const {
  const int32_t half = dim_ / 2;
  float cs[256], sn[256];
  std::vector<float> big;
  float* c = cs;
  float* s = sn;
  if (half > 256) {
    big.resize(2 * half);
    c = big.data();
    s = big.data() + half;
  }
  const float fpos = static_cast<float>(pos);
  for (int32_t i = 0; i < half; ++i) {
    const float f = inv_freq_[i] * fpos;
    c[i] = static_cast<float>(std::cos(static_cast<double>(f))) * scale_;
    s[i] = static_cast<float>(std::sin(static_cast<double>(f))) * scale_;
    if (inverse) s[i] = -s[i];
  }
  for (int64_t v = 0; v < count; ++v) {
    float* r = x + v * stride + (width - dim_);
    for (int32_t i = 0; i < half; ++i) {
      const float x0 = r[2 * i], x1 = r[2 * i + 1];
      r[2 * i] = x0 * c[i] - x1 * s[i];
      r[2 * i + 1] = x1 * c[i] + x0 * s[i];
    }
  }
}

}  // namespace di::engine::deepseek_v4
