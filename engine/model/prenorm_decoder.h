// The pre-norm residual decoder on the CPU that Llama and DeepSeek V2/V3 share: embed the
// tokens, then per layer x += attention(rms_norm(x)) and x += mlp(rms_norm(x)), then the final
// norm and lm_head on the rows that want logits. A family supplies its layer's two norm
// weights, its attention and its MLP (dense or MoE); the loop and the residual stream are here.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "engine/model/model.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/rms_norm.h"

namespace di::engine {

struct PrenormDecoder {
  int64_t hidden_size = 0;
  int32_t num_layers = 0;
  int64_t vocab_size = 0;
  float eps = 1e-6f;
  const float* embed = nullptr;       // [vocab, hidden]
  const float* final_norm = nullptr;  // [hidden]
  const float* lm_head = nullptr;     // [vocab, hidden]
};

// Writes seq's logits (num_tokens rows when seq.all_logits, else the last row) to `logits`.
// norms(l) -> {input_layernorm, post_attention_layernorm} of layer l; attention(l, h, out) and
// mlp(l, h, out) read h and write out, both [num_tokens, hidden]. `final_hidden`, when given,
// gets the last layer's output [num_tokens, hidden] (before the final norm).
template <class LayerNorms, class Attention, class Mlp>
void prenorm_decoder_forward(const PrenormDecoder& d, const SequenceInput& seq, float* logits, LayerNorms&& norms,
                             Attention&& attention, Mlp&& mlp, std::vector<float>* final_hidden = nullptr) {
  namespace cpu = di::kernels::cpu;
  const int64_t L = seq.num_tokens, H = d.hidden_size;
  std::vector<float> x(static_cast<size_t>(L * H)), h(x.size()), out(x.size());
  for (int64_t i = 0; i < L; ++i)
    std::memcpy(x.data() + i * H, d.embed + static_cast<int64_t>(seq.tokens[i]) * H, static_cast<size_t>(H) * sizeof(float));
  for (int32_t l = 0; l < d.num_layers; ++l) {
    const std::pair<const float*, const float*> n = norms(l);
    cpu::rms_norm(x.data(), n.first, L, H, H, d.eps, h.data());
    attention(l, h.data(), out.data());
    for (size_t i = 0; i < x.size(); ++i) x[i] += out[i];
    cpu::rms_norm(x.data(), n.second, L, H, H, d.eps, h.data());
    mlp(l, h.data(), out.data());
    for (size_t i = 0; i < x.size(); ++i) x[i] += out[i];
  }
  const int64_t first = seq.all_logits ? 0 : L - 1, rows = L - first;
  cpu::rms_norm(x.data() + first * H, d.final_norm, rows, H, H, d.eps, h.data());
  cpu::linear(h.data(), rows, H, d.lm_head, d.vocab_size, logits);
  if (final_hidden) *final_hidden = std::move(x);
}

}  // namespace di::engine
