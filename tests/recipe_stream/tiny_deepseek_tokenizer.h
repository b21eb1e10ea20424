// Test helper: writes a minimal DeepSeek-style tokenizer.json (the 256 byte tokens of the GPT-2
// byte-level alphabet, no merges, and DeepSeek's control tokens as added tokens) into a fresh
// folder, so C ABI tests get a recipe with a tokenizer without any downloaded file. Depends on
// nothing but nlohmann/json and the standard library.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace di::testing {

// GPT-2's byte → printable code point map, written as UTF-8.
inline std::string byte_level_char(uint8_t b) {
  auto printable = [](int x) { return (x >= 33 && x <= 126) || (x >= 161 && x <= 172) || x >= 174; };
  uint32_t cp = b;
  if (!printable(b)) {
    cp = 256;
    for (int x = 0; x < b; ++x) cp += printable(x) ? 0 : 1;
  }
  std::string s;
  if (cp < 0x80) {
    s.push_back(static_cast<char>(cp));
  } else {
    s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return s;
}

// The control tokens, with ids from 256 on in this order.
inline const std::vector<std::string>& tiny_control_tokens() {
  static const std::vector<std::string> k = {
      "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>",
      "<think>", "</think>", "｜DSML｜", "<｜System｜>", "<｜latest_reminder｜>", "<｜image｜>",
      "<｜deepseek_image｜>"};
  return k;
}

inline int32_t tiny_token_id(const std::string& token) {
  const auto& k = tiny_control_tokens();
  for (size_t i = 0; i < k.size(); ++i)
    if (k[i] == token) return static_cast<int32_t>(256 + i);
  return -1;
}

// Writes tokenizer.json and tokenizer_config.json under `dir` (created) and returns `dir`.
inline std::string write_tiny_deepseek_tokenizer(const std::string& dir) {
  using nlohmann::json;
  std::filesystem::create_directories(dir);
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_level_char(static_cast<uint8_t>(b))] = b;
  json added = json::array();
  const auto& k = tiny_control_tokens();
  for (size_t i = 0; i < k.size(); ++i) {
    vocab[k[i]] = 256 + i;
    added.push_back({{"id", 256 + i}, {"content", k[i]}, {"single_word", false},
                     {"lstrip", false}, {"rstrip", false}, {"normalized", false},
                     {"special", i < 2}});
  }
  json tok = {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model",
       {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"byte_fallback", false},
        {"vocab", vocab}, {"merges", json::array()}}}};
  std::ofstream(dir + "/tokenizer.json") << tok.dump();
  std::ofstream(dir + "/tokenizer_config.json")
      << json{{"bos_token", k[0]}, {"eos_token", k[1]}, {"add_bos_token", false}}.dump();
  return dir;
}

}  // namespace di::testing
