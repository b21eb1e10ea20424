// mHC: see hyper_connection.h. Everything in fp32, as transformers keeps these modules in fp32.
#include "engine/model/deepseek_v4/hyper_connection.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/linear.h"
#include "kernels/cpu/rms_norm.h"

namespace di::engine::deepseek_v4 {
namespace {

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// mixes[rows, out] = fn @ rms(streams row) (unweighted RMSNorm over all hc * hidden values).
std::vector<float> mix_logits(const DeepseekV4Config& c, const float* fn, int64_t out,
                              const float* streams, int64_t rows) {
  const int64_t width = c.hc_mult * c.hidden_size;
  std::vector<float> normed(static_cast<size_t>(rows * width));
  kernels::cpu::rms_norm(streams, nullptr, rows, width, width, static_cast<float>(c.rms_norm_eps),
                         normed.data());
  std::vector<float> mixes(static_cast<size_t>(rows * out));
  kernels::cpu::linear(normed.data(), rows, width, fn, out, mixes.data());
  return mixes;
}

}  // namespace

void hc_pre(const DeepseekV4Config& c, const HcWeights& w, const float* streams, int64_t rows,
            float* collapsed, float* post, float* comb) {
  const int64_t hc = c.hc_mult, H = c.hidden_size, mix = (2 + hc) * hc;
  const float eps = static_cast<float>(c.hc_eps);
  const std::vector<float> mixes = mix_logits(c, w.fn, mix, streams, rows);
  for (int64_t r = 0; r < rows; ++r) {
    const float* m = mixes.data() + r * mix;
    float pre[16];
    for (int64_t i = 0; i < hc; ++i) {
      pre[i] = sigmoid(m[i] * w.scale[0] + w.base[i]) + eps;
      post[r * hc + i] = 2.0f * sigmoid(m[hc + i] * w.scale[1] + w.base[hc + i]);
    }
    float* cm = comb + r * hc * hc;  // [i][j]
    for (int64_t i = 0; i < hc; ++i) {  // softmax over j, then + eps
      float mx = -INFINITY;
      for (int64_t j = 0; j < hc; ++j) {
        cm[i * hc + j] = m[2 * hc + i * hc + j] * w.scale[2] + w.base[2 * hc + i * hc + j];
        mx = std::max(mx, cm[i * hc + j]);
      }
      float sum = 0.f;
      for (int64_t j = 0; j < hc; ++j) sum += (cm[i * hc + j] = std::exp(cm[i * hc + j] - mx));
      for (int64_t j = 0; j < hc; ++j) cm[i * hc + j] = cm[i * hc + j] / sum + eps;
    }
    // Sinkhorn-Knopp: a column pass first, then (iters - 1) row + column passes.
    auto normalise_columns = [&] {
      for (int64_t j = 0; j < hc; ++j) {
        float s = 0.f;
        for (int64_t i = 0; i < hc; ++i) s += cm[i * hc + j];
        for (int64_t i = 0; i < hc; ++i) cm[i * hc + j] /= (s + eps);
      }
    };
    normalise_columns();
    for (int32_t it = 1; it < c.hc_sinkhorn_iters; ++it) {
      for (int64_t i = 0; i < hc; ++i) {
        float s = 0.f;
        for (int64_t j = 0; j < hc; ++j) s += cm[i * hc + j];
        for (int64_t j = 0; j < hc; ++j) cm[i * hc + j] /= (s + eps);
      }
      normalise_columns();
    }
    const float* x = streams + r * hc * H;
    float* y = collapsed + r * H;
    for (int64_t d = 0; d < H; ++d) {
      float acc = 0.f;
      for (int64_t i = 0; i < hc; ++i) acc += pre[i] * x[i * H + d];
      y[d] = acc;
    }
  }
}

void hc_post(const DeepseekV4Config& c, const float* out, const float* post, const float* comb,
             int64_t rows, float* streams) {
  const int64_t hc = c.hc_mult, H = c.hidden_size;
  std::vector<float> old(static_cast<size_t>(hc * H));
  for (int64_t r = 0; r < rows; ++r) {
    float* x = streams + r * hc * H;
    std::copy(x, x + hc * H, old.begin());
    const float* cm = comb + r * hc * hc;
    const float* o = out + r * H;
    for (int64_t k = 0; k < hc; ++k) {
      const float p = post[r * hc + k];
      for (int64_t d = 0; d < H; ++d) {
        float acc = 0.f;
        for (int64_t j = 0; j < hc; ++j) acc += cm[j * hc + k] * old[j * H + d];
        x[k * H + d] = p * o[d] + acc;
      }
    }
  }
}

void hc_head(const DeepseekV4Config& c, const DeepseekV4Weights& w, const float* streams,
             int64_t rows, float* y) {
  hc_head(c, w.hc_head_fn, w.hc_head_base, w.hc_head_scale, streams, rows, y);
}

void hc_head(const DeepseekV4Config& c, const float* fn, const float* base, const float* scale,
             const float* streams, int64_t rows, float* y) {
  const int64_t hc = c.hc_mult, H = c.hidden_size;
  const float eps = static_cast<float>(c.hc_eps);
  const std::vector<float> mixes = mix_logits(c, fn, hc, streams, rows);
  for (int64_t r = 0; r < rows; ++r) {
    float pre[16];
    for (int64_t i = 0; i < hc; ++i)
      pre[i] = sigmoid(mixes[r * hc + i] * scale[0] + base[i]) + eps;
    const float* x = streams + r * hc * H;
    for (int64_t d = 0; d < H; ++d) {
      float acc = 0.f;
      for (int64_t i = 0; i < hc; ++i) acc += pre[i] * x[i * H + d];
      y[r * H + d] = acc;
    }
  }
}

}  // namespace di::engine::deepseek_v4
