// Builds small tokenizer.json documents for unit tests: all 256 byte tokens in the byte-level
// alphabet plus the given merges and added tokens, so each test states exactly what it uses.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "recipe/tokenizer/byte_level.h"

namespace di::recipe::testing {

// A byte-level BPE over ids 0..255 (id = byte) with `merges` given as raw-byte pairs; each
// merge result gets the next id from 256 on, in order.
inline nlohmann::json tiny_tokenizer(const std::vector<std::pair<std::string, std::string>>& merges,
                                     bool merges_as_arrays = false) {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_level_encode(std::string(1, static_cast<char>(b)))] = b;
  nlohmann::json m = nlohmann::json::array();
  int next = 256;
  for (const auto& [l, r] : merges) {
    const std::string a = byte_level_encode(l), b = byte_level_encode(r);
    if (!vocab.contains(a + b)) vocab[a + b] = next++;
    if (merges_as_arrays) m.push_back({a, b});
    else m.push_back(a + " " + b);
  }
  return {
      {"version", "1.0"},
      {"added_tokens", nlohmann::json::array()},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"},
           {"pattern",
            {{"Regex",
              R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}}},
           {"behavior", "Isolated"},
           {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}}},
      {"post_processor", {{"type", "ByteLevel"}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model",
       {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"byte_fallback", false},
        {"vocab", vocab}, {"merges", m}}}};
}

inline nlohmann::json added_token(int id, const std::string& content, bool special,
                                  bool normalized = false) {
  return {{"id", id},          {"content", content}, {"single_word", false}, {"lstrip", false},
          {"rstrip", false},   {"normalized", normalized}, {"special", special}};
}

}  // namespace di::recipe::testing
