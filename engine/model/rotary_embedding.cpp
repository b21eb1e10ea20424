// RotaryEmbedding and parse_rope_config. See rotary_embedding.h. The frequency arithmetic runs
// in fp32 step by step as transformers' torch code does (the correction range in double), so
// the frequencies agree to the last bit or two.
#include "engine/model/rotary_embedding.h"

#include <algorithm>
#include <cmath>

#include "engine/model/config_fields.h"

namespace di::engine {
namespace {

using nlohmann::json;

Status bad(const std::string& key, const std::string& why) {
  return Status::invalid_argument("config.json: " + key + ": " + why);
}

// YaRN (Peng et al. 2023, eq. 17-19): the dimension at which a frequency makes `rotations`
// turns over the original context.
double correction_dim(double rotations, int32_t dim, double base, double max_pos) {
  return (dim * std::log(max_pos / (rotations * 2 * M_PI))) / (2 * std::log(base));
}

// theta ** (2i / dim) for i < dim / 2, the exponent in fp32 as torch.arange(...).float() / dim.
std::vector<float> pos_freqs(double theta, int32_t dim) {
  std::vector<float> out(dim / 2);
  for (int32_t i = 0; i < dim / 2; ++i) {
    const float e = static_cast<float>(2 * i) / static_cast<float>(dim);
    out[i] = static_cast<float>(std::pow(theta, static_cast<double>(e)));
  }
  return out;
}

}  // namespace

double yarn_get_mscale(double scale, double mscale) {
  if (scale <= 1) return 1.0;
  return 0.1 * mscale * std::log(scale) + 1.0;
}

Result<RopeConfig> parse_rope_config(const json& config, int32_t dim, int64_t max_position_embeddings) {
  RopeConfig rope;
  rope.dim = dim;
  if (dim <= 0 || dim % 2) return bad("head_dim", "rotary width " + std::to_string(dim) + " is not a positive even number");
  const json empty = json::object();
  std::string key = "rope_parameters";
  const json* d = config_find(config, key);
  if (!d) {
    key = "rope_scaling";
    d = config_find(config, key);
  }
  if (d && !d->is_object()) return bad(key, "expected an object, got " + d->dump());
  if (!d) d = &empty;
  DI_ASSIGN_OR_RETURN(double top_theta, config_number(config, "rope_theta", 10000.0));
  DI_ASSIGN_OR_RETURN(rope.rope_theta, config_number(*d, "rope_theta", top_theta));
  if (!(rope.rope_theta > 1.0)) return bad(key + ".rope_theta", "expected a number > 1");
  std::string type = "default";
  if (config_find(*d, "rope_type")) {
    DI_ASSIGN_OR_RETURN(type, config_string(*d, "rope_type", "default"));
  } else if (config_find(*d, "type")) {
    DI_ASSIGN_OR_RETURN(type, config_string(*d, "type", "default"));
  }
  rope.rope_type = type;
  if (type == "default") return rope;
  if (type != "linear" && type != "llama3" && type != "yarn")
    return bad(key + ".rope_type", "'" + type + "' is not supported (default, linear, llama3 or yarn)");

  const bool needs_factor = type != "yarn";
  if (needs_factor && !config_find(*d, "factor")) return bad(key + ".factor", "missing (" + type + " needs it)");
  DI_ASSIGN_OR_RETURN(rope.factor, config_number(*d, "factor", 0.0));
  if (type == "linear") {
    if (!(rope.factor > 0)) return bad(key + ".factor", "expected a positive number");
    return rope;
  }
  if (!config_find(*d, "original_max_position_embeddings"))
    return bad(key + ".original_max_position_embeddings", "missing (" + type + " needs it)");
  DI_ASSIGN_OR_RETURN(rope.original_max_position_embeddings,
                      config_number(*d, "original_max_position_embeddings"));
  if (!(rope.original_max_position_embeddings > 0))
    return bad(key + ".original_max_position_embeddings", "expected a positive number");
  if (type == "llama3") {
    DI_ASSIGN_OR_RETURN(rope.low_freq_factor, config_number(*d, "low_freq_factor"));
    DI_ASSIGN_OR_RETURN(rope.high_freq_factor, config_number(*d, "high_freq_factor"));
    if (!(rope.factor > 0)) return bad(key + ".factor", "expected a positive number");
    if (!(rope.high_freq_factor > rope.low_freq_factor) || !(rope.low_freq_factor > 0))
      return bad(key + ".high_freq_factor", "expected high_freq_factor > low_freq_factor > 0");
    return rope;
  }
  // yarn: without a factor, transformers takes the context extension ratio.
  if (rope.factor == 0.0)
    rope.factor = static_cast<double>(max_position_embeddings) / rope.original_max_position_embeddings;
  if (!(rope.factor > 0)) return bad(key + ".factor", "expected a positive number");
  DI_ASSIGN_OR_RETURN(double beta_fast, config_number(*d, "beta_fast", 0.0));
  DI_ASSIGN_OR_RETURN(double beta_slow, config_number(*d, "beta_slow", 0.0));
  rope.beta_fast = beta_fast != 0.0 ? beta_fast : 32.0;  // transformers: `or 32`
  rope.beta_slow = beta_slow != 0.0 ? beta_slow : 1.0;
  DI_ASSIGN_OR_RETURN(rope.mscale, config_number(*d, "mscale", 0.0));
  DI_ASSIGN_OR_RETURN(rope.mscale_all_dim, config_number(*d, "mscale_all_dim", 0.0));
  DI_ASSIGN_OR_RETURN(rope.attention_factor, config_number(*d, "attention_factor", -1.0));
  DI_ASSIGN_OR_RETURN(rope.truncate, config_bool(*d, "truncate", true));
  return rope;
}

RotaryEmbedding::RotaryEmbedding(const RopeConfig& c, RopeLayout layout) : dim_(c.dim), layout_(layout) {
  const int32_t half = dim_ / 2;
  const std::vector<float> pos = pos_freqs(c.rope_theta, dim_);
  inv_freq_.resize(half);
  for (int32_t i = 0; i < half; ++i) inv_freq_[i] = 1.0f / pos[i];
  if (c.rope_type == "linear") {
    for (float& f : inv_freq_) f /= static_cast<float>(c.factor);
  } else if (c.rope_type == "llama3") {
    // Llama 3.1: long wavelengths are divided by factor, short ones kept, the band between
    // interpolated smoothly in 1/wavelength.
    const float factor = static_cast<float>(c.factor), lo = static_cast<float>(c.low_freq_factor),
                hi = static_cast<float>(c.high_freq_factor);
    const float old_len = static_cast<float>(c.original_max_position_embeddings);
    const double low_wavelen = c.original_max_position_embeddings / c.low_freq_factor;
    const double high_wavelen = c.original_max_position_embeddings / c.high_freq_factor;
    for (float& f : inv_freq_) {
      const float wavelen = static_cast<float>(2 * M_PI) / f;
      const float base = wavelen > low_wavelen ? f / factor : f;
      if (!(wavelen < high_wavelen) && !(wavelen > low_wavelen)) {
        const float smooth = (old_len / wavelen - lo) / (hi - lo);
        f = (1.0f - smooth) * base / factor + smooth * base;
      } else {
        f = base;
      }
    }
  } else if (c.rope_type == "yarn") {
    if (c.attention_factor >= 0) {
      scale_ = static_cast<float>(c.attention_factor);
    } else if (c.mscale != 0.0 && c.mscale_all_dim != 0.0) {
      scale_ = static_cast<float>(yarn_get_mscale(c.factor, c.mscale) / yarn_get_mscale(c.factor, c.mscale_all_dim));
    } else {
      scale_ = static_cast<float>(yarn_get_mscale(c.factor, 1.0));
    }
    double low = correction_dim(c.beta_fast, dim_, c.rope_theta, c.original_max_position_embeddings);
    double high = correction_dim(c.beta_slow, dim_, c.rope_theta, c.original_max_position_embeddings);
    if (c.truncate) {
      low = std::floor(low);
      high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, static_cast<double>(dim_ - 1));
    if (low == high) high += 0.001;  // transformers' guard against a zero-width ramp
    const float factor = static_cast<float>(c.factor);
    for (int32_t i = 0; i < half; ++i) {
      const float extrapolation = 1.0f / pos[i];
      const float interpolation = 1.0f / (factor * pos[i]);
      float ramp = (static_cast<float>(i) - static_cast<float>(low)) / static_cast<float>(high - low);
      ramp = std::clamp(ramp, 0.0f, 1.0f);
      const float keep = 1.0f - ramp;  // share of the unscaled frequency
      inv_freq_[i] = interpolation * (1.0f - keep) + extrapolation * keep;
    }
  }
}

void RotaryEmbedding::apply(float* x, int64_t count, int64_t stride, int64_t pos, bool inverse) const {
  const int32_t half = dim_ / 2;
  float cs_small[256], sn_small[256];
  std::vector<float> big;
  float* cs = cs_small;
  float* sn = sn_small;
  if (half > 256) {
    big.resize(2 * static_cast<size_t>(half));
    cs = big.data();
    sn = big.data() + half;
  }
  const float fpos = static_cast<float>(pos);
  for (int32_t i = 0; i < half; ++i) {
    const float f = inv_freq_[i] * fpos;
    cs[i] = static_cast<float>(std::cos(static_cast<double>(f))) * scale_;
    sn[i] = static_cast<float>(std::sin(static_cast<double>(f))) * scale_;
    if (inverse) sn[i] = -sn[i];
  }
  for (int64_t v = 0; v < count; ++v) {
    float* r = x + v * stride;
    if (layout_ == RopeLayout::kHalf) {
      for (int32_t i = 0; i < half; ++i) {
        const float x0 = r[i], x1 = r[i + half];
        r[i] = x0 * cs[i] - x1 * sn[i];
        r[i + half] = x1 * cs[i] + x0 * sn[i];
      }
    } else {
      for (int32_t i = 0; i < half; ++i) {
        const float x0 = r[2 * i], x1 = r[2 * i + 1];
        r[2 * i] = x0 * cs[i] - x1 * sn[i];
        r[2 * i + 1] = x1 * cs[i] + x0 * sn[i];
      }
    }
  }
}

}  // namespace di::engine
