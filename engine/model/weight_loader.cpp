// WeightLoader: see weight_loader.h.
#include "engine/model/weight_loader.h"

#include "engine/model/weight_progress.h"

#include <cstring>

namespace di::engine {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string names_text(const std::vector<std::string>& names) {
  std::string s = "'" + names[0] + "'";
  if (names.size() > 1) {
    s += " (or";
    for (size_t i = 1; i < names.size(); ++i) s += " '" + names[i] + "'";
    s += ")";
  }
  return s;
}

}  // namespace

std::string WeightLoader::pick(const std::vector<std::string>& names) const {
  for (const std::string& n : names)
    if (store_.checkpoint->find(n)) return n;
  return "";
}

Result<const TensorView*> WeightLoader::take(const std::vector<std::string>& names,
                                             const std::vector<int64_t>& shape) {
  const std::string name = pick(names);
  if (name.empty())
    return Status::not_found("missing tensor " + names_text(names) + " that this " + family_ +
                             " config needs");
  const TensorView* t = store_.checkpoint->find(name);
  if (t->shape != shape)
    return Status::invalid_argument("tensor '" + name + "' in " + t->file + ": shape " +
                                    t->shape_text() + ", expected " + shape_text(shape) +
                                    " from config.json");
  taken_.insert(name);
  if (WeightProgress* p = current_weight_progress()) p->advance(t->nbytes);
  return t;
}

Result<const float*> WeightLoader::f32(const std::vector<std::string>& names,
                                       const std::vector<int64_t>& shape) {
  DI_ASSIGN_OR_RETURN(const TensorView* t, take(names, shape));
  if (t->dtype != DType::kF32 && t->dtype != DType::kBF16 && t->dtype != DType::kF16)
    return Status::invalid_argument("tensor '" + t->name + "' in " + t->file + ": dtype " +
                                    t->dtype_text + ", expected F32, BF16 or F16");
  if (t->dtype == DType::kF32 && reinterpret_cast<uintptr_t>(t->data) % alignof(float) == 0)
    return reinterpret_cast<const float*>(t->data);
  DI_ASSIGN_OR_RETURN(auto v, tensor_to_f32(*t));
  store_.owned_f32.push_back(std::move(v));
  return store_.owned_f32.back().data();
}

Result<const TensorView*> WeightLoader::take_scale(const std::string& weight, const std::vector<int64_t>& grid) {
  const std::string base = weight.size() > 7 && weight.compare(weight.size() - 7, 7, ".weight") == 0
                               ? weight.substr(0, weight.size() - 7)
                               : weight;
  const std::vector<std::string> names = {base + ".scale", base + ".weight_scale_inv"};
  const std::string name = pick(names);
  if (name.empty())
    return Status::not_found("tensor '" + weight + "' is quantized but its scale " + names_text(names) +
                             " is missing");
  const TensorView* s = store_.checkpoint->find(name);
  if (s->dtype != DType::kF8E8M0 && s->dtype != DType::kF32)
    return Status::invalid_argument("tensor '" + name + "' in " + s->file + ": dtype " + s->dtype_text +
                                    ", expected F8_E8M0 or F32 (the scales of '" + weight + "')");
  if (s->shape != grid)
    return Status::invalid_argument("tensor '" + name + "' in " + s->file + ": scale grid " + s->shape_text() +
                                    ", expected " + shape_text(grid) + " for '" + weight + "'");
  taken_.insert(name);
  if (WeightProgress* p = current_weight_progress()) p->advance(s->nbytes);
  return s;
}

Result<kernels::LinearWeight> WeightLoader::linear(const std::vector<std::string>& names, int64_t out,
                                                   int64_t in) {
  using kernels::WeightFormat;
  kernels::LinearWeight lw;
  lw.out = out;
  lw.in = in;
  const std::string name = pick(names);
  const TensorView* t = name.empty() ? nullptr : store_.checkpoint->find(name);
  if (t && t->dtype == DType::kF8E4M3) {
    DI_ASSIGN_OR_RETURN(t, take(names, {out, in}));
    lw.format = WeightFormat::kFp8E4M3Block;
    lw.block_out = quant_.block_out;
    lw.block_in = quant_.block_in;
  } else if (t && (t->dtype == DType::kI8 || t->dtype == DType::kU8)) {
    // Packed FP4: two e2m1 codes a byte, one ue8m0 scale per 32 inputs of a row.
    if (in % QuantConfig::kFp4Group != 0)
      return Status::invalid_argument("tensor '" + name + "': packed FP4 needs in_features divisible by " +
                                      std::to_string(QuantConfig::kFp4Group) + ", config.json implies " +
                                      std::to_string(in));
    DI_ASSIGN_OR_RETURN(t, take(names, {out, in / 2}));
    lw.format = WeightFormat::kFp4E2M1Group32;
    lw.block_out = 1;
    lw.block_in = QuantConfig::kFp4Group;
  } else if (t && t->dtype == DType::kBF16 && keep_bf16_) {
    DI_ASSIGN_OR_RETURN(t, take(names, {out, in}));
    lw.format = WeightFormat::kBf16;
    lw.data = t->data;
    return lw;
  } else {
    DI_ASSIGN_OR_RETURN(const float* f, f32(names, {out, in}));
    lw.data = f;
    return lw;
  }
  DI_ASSIGN_OR_RETURN(const TensorView* s, take_scale(t->name, {lw.scale_rows(), lw.scale_cols()}));
  lw.data = t->data;
  lw.scale = s->data;
  lw.scale_format = s->dtype == DType::kF32 ? kernels::ScaleFormat::kF32 : kernels::ScaleFormat::kUE8M0;
  if (store_.first_quantized.empty()) store_.first_quantized = t->name;
  return lw;
}

Result<const int32_t*> WeightLoader::i32(const std::vector<std::string>& names,
                                         const std::vector<int64_t>& shape) {
  DI_ASSIGN_OR_RETURN(const TensorView* t, take(names, shape));
  const int64_t n = t->numel();
  std::vector<int32_t> out(static_cast<size_t>(n));
  if (t->dtype == DType::kI64) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t v;
      std::memcpy(&v, t->data + 8 * i, 8);
      if (v < INT32_MIN || v > INT32_MAX)
        return Status::invalid_argument("tensor '" + t->name + "': value " + std::to_string(v) +
                                        " does not fit in 32 bits");
      out[i] = static_cast<int32_t>(v);
    }
  } else if (t->dtype == DType::kI32) {
    std::memcpy(out.data(), t->data, static_cast<size_t>(n) * 4);
  } else {
    return Status::invalid_argument("tensor '" + t->name + "' in " + t->file + ": dtype " +
                                    t->dtype_text + ", expected I64 or I32");
  }
  store_.owned_i32.push_back(std::move(out));
  return store_.owned_i32.back().data();
}

std::vector<const TensorView*> WeightLoader::take_prefix(const std::vector<std::string>& prefixes) {
  std::vector<const TensorView*> out;
  for (const std::string& name : store_.checkpoint->names())
    for (const std::string& p : prefixes)
      if (name.rfind(p, 0) == 0) {
        taken_.insert(name);
        out.push_back(store_.checkpoint->find(name));
        if (WeightProgress* w = current_weight_progress()) w->advance(out.back()->nbytes);
        break;
      }
  return out;
}

Status WeightLoader::check_all_taken(const std::string& prefix) const {
  std::vector<std::string> extra;
  for (const std::string& name : store_.checkpoint->names())
    if (name.rfind(prefix, 0) == 0 && !taken_.count(name)) extra.push_back(name);
  if (extra.empty()) return Status::ok();
  std::string list;
  for (size_t i = 0; i < extra.size() && i < 5; ++i) list += (i ? ", '" : "'") + extra[i] + "'";
  if (extra.size() > 5) list += ", ... (" + std::to_string(extra.size()) + " in all)";
  return Status::invalid_argument("unexpected tensor " + list + " in the checkpoint: not part of a " +
                                  family_ + " model with this config.json");
}

Result<DecoderEnds> load_decoder_ends(WeightLoader& w, int64_t vocab_size, int64_t hidden_size, bool tie_word_embeddings) {
  DecoderEnds ends;
  DI_ASSIGN_OR_RETURN(ends.embed, w.f32({"model.embed_tokens.weight"}, {vocab_size, hidden_size}));
  DI_ASSIGN_OR_RETURN(ends.norm, w.f32({"model.norm.weight"}, {hidden_size}));
  if (tie_word_embeddings) {
    if (!w.pick({"lm_head.weight"}).empty()) DI_RETURN_IF_ERROR(w.f32({"lm_head.weight"}, {vocab_size, hidden_size}).status());
    ends.lm_head = ends.embed;
  } else {
    DI_ASSIGN_OR_RETURN(ends.lm_head, w.f32({"lm_head.weight"}, {vocab_size, hidden_size}));
  }
  return ends;
}

}  // namespace di::engine
