// Token masks over the real DeepSeek-V3 vocabulary (128k tokens) against brute force: at every
// step of a walk through a valid output, the bitmask must equal "this token's bytes can be
// accepted now" checked token by token; EOS exactly when the output can end; rollback restores
// every mask exactly.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/constrain/ebnf_compiler.h"
#include "engine/constrain/json_schema_compiler.h"
#include "engine/constrain/matcher.h"
#include "engine/constrain/regex_compiler.h"
#include "tests/constrain/test_util.h"
#include "tests/constrain/test_vocab.h"

namespace di::engine::constrain {
namespace {

std::shared_ptr<const TokenVocabulary> vocab() {
  std::string err;
  auto v = testing::deepseek_vocab(&err);
  EXPECT_TRUE(v) << err;
  return v;
}

// Longest-match tokenization of text (any tokenization is a valid path through the grammar).
std::vector<uint32_t> greedy_tokens(const TokenVocabulary& v, const std::string& text) {
  static std::unordered_map<std::string, uint32_t> by_bytes;
  if (by_bytes.empty()) {
    for (uint32_t id = 0; id < v.size(); ++id) {
      if (!v.is_special(id) && !v.token(id).empty()) by_bytes.emplace(v.token(id), id);
    }
  }
  std::vector<uint32_t> out;
  for (size_t i = 0; i < text.size();) {
    for (size_t n = std::min<size_t>(32, text.size() - i); n > 0; --n) {
      auto it = by_bytes.find(text.substr(i, n));
      if (it != by_bytes.end()) {
        out.push_back(it->second);
        i += n;
        break;
      }
      if (n == 1) ADD_FAILURE() << "no token for byte " << int(uint8_t(text[i]));
    }
  }
  return out;
}

// The mask by definition: each token checked on its own.
std::vector<uint32_t> brute_force_mask(Matcher& m, const TokenVocabulary& v) {
  std::vector<uint32_t> words(v.mask_words(), 0);
  bool first[256];
  for (int b = 0; b < 256; ++b) first[b] = m.can_accept_bytes(std::string(1, char(b)));
  for (uint32_t id = 0; id < v.size(); ++id) {
    bool ok;
    if (v.is_eos(id)) {
      ok = m.can_end() && !m.is_terminated();
    } else if (v.is_special(id) || v.token(id).empty()) {
      ok = false;
    } else {
      ok = first[uint8_t(v.token(id)[0])] && m.can_accept_bytes(v.token(id));
    }
    if (ok) words[id >> 5] |= 1u << (id & 31);
  }
  return words;
}

void walk_and_compare(std::shared_ptr<const Grammar> g, const std::string& text) {
  auto v = vocab();
  ASSERT_TRUE(v);
  auto cg = std::make_shared<CompiledGrammar>(g, v);
  Matcher m(cg);
  std::vector<uint32_t> mask(v->mask_words());
  std::vector<uint32_t> tokens = greedy_tokens(*v, text);
  tokens.push_back(1);  // EOS
  for (size_t step = 0; step < tokens.size(); ++step) {
    uint32_t n = m.fill_mask(mask.data());
    std::vector<uint32_t> want = brute_force_mask(m, *v);
    uint32_t diff = 0, first_diff = UINT32_MAX;
    for (uint32_t id = 0; id < v->size(); ++id) {
      bool a = mask[id >> 5] >> (id & 31) & 1, b = want[id >> 5] >> (id & 31) & 1;
      if (a != b) {
        ++diff;
        if (first_diff == UINT32_MAX) first_diff = id;
      }
    }
    ASSERT_EQ(diff, 0u) << "step " << step << ": " << diff << " tokens differ, first id " << first_diff << " '"
                        << v->token(first_diff) << "' (mask says " << (mask[first_diff >> 5] >> (first_diff & 31) & 1) << ")";
    EXPECT_GT(n, 0u);
    ASSERT_TRUE(mask[tokens[step] >> 5] >> (tokens[step] & 31) & 1) << "step " << step << ": the walk's own token is masked";
    ASSERT_TRUE(m.accept_token(tokens[step]).is_ok()) << "step " << step;
  }
  EXPECT_TRUE(m.is_terminated());
}

TEST(Mask, JsonSchemaMaskEqualsBruteForceOnDeepSeekVocab) {
  auto g = compile_json_schema_text(R"({
    "type": "object",
    "properties": {
      "name": {"type": "string", "maxLength": 12},
      "age": {"type": "integer", "minimum": 0, "maximum": 150},
      "tags": {"type": "array", "items": {"enum": ["a", "b c", 1.5]}, "maxItems": 3},
      "mail": {"type": "string", "format": "email"},
      "note": {"type": ["string", "null"], "pattern": "^[a-z]+\\d?$"}
    },
    "required": ["name", "age"],
    "additionalProperties": false
  })");
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  walk_and_compare(*g, "{\"name\": \"Ada \\\"L\\u00e9\\\"\", \"age\": 36,\n  \"tags\": [\"b c\", 1.5],\"mail\":\"ada@x.org\", \"note\": \"abc1\"}");
}

TEST(Mask, FreeJsonMaskEqualsBruteForce) {
  auto g = compile_any_json();
  ASSERT_TRUE(g.is_ok());
  walk_and_compare(*g, "[{\"k\": [1e5, -0.25, true, null]}, \"\xE4\xB8\xAD\xE6\x96\x87\", {}]");
}

TEST(Mask, RegexAndEbnfMasksEqualBruteForce) {
  auto r = compile_regex("[A-Z][a-z]{2,8}( [0-9]+)?\\.");
  ASSERT_TRUE(r.is_ok());
  walk_and_compare(*r, "Hello 2024.");
  auto e = compile_ebnf("root ::= (call \"\\n\")+\ncall ::= name \"(\" (arg (\", \" arg)*)? \")\"\n"
                        "name ::= [a-z_]+\narg ::= [0-9]+ | call");
  ASSERT_TRUE(e.is_ok()) << e.status().message();
  walk_and_compare(*e, "foo(1, bar(22))\nbaz()\n");
}

TEST(Mask, RollbackRestoresEveryMaskExactly) {
  auto v = vocab();
  ASSERT_TRUE(v);
  auto g = compile_json_schema_text(R"({"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}},
                                  "b":{"type":"string"}},"required":["a","b"]})");
  ASSERT_TRUE(g.is_ok());
  Matcher m(std::make_shared<CompiledGrammar>(*g, v));
  std::mt19937 rng(7);
  std::vector<std::vector<uint32_t>> masks;
  std::vector<uint32_t> taken;
  std::vector<uint32_t> mask(v->mask_words());
  for (int step = 0; step < 30 && !m.is_terminated(); ++step) {
    m.fill_mask(mask.data());
    masks.push_back(mask);
    const std::vector<uint32_t> allowed = testing::allowed_ids(mask, v->size());
    ASSERT_FALSE(allowed.empty());
    uint32_t t = allowed[rng() % allowed.size()];
    ASSERT_TRUE(m.accept_token(t).is_ok());
    taken.push_back(t);
  }
  ASSERT_GE(taken.size(), 10u);
  for (int round = 0; round < 5; ++round) {
    uint32_t k = 1 + rng() % uint32_t(taken.size());
    ASSERT_TRUE(m.rollback(k).is_ok());
    size_t at = taken.size() - k;
    m.fill_mask(mask.data());
    ASSERT_EQ(mask, masks[at]) << "after rollback of " << k;
    for (size_t i = at; i < taken.size(); ++i) ASSERT_TRUE(m.accept_token(taken[i]).is_ok());
  }
  EXPECT_FALSE(m.rollback(uint32_t(taken.size()) + 1).is_ok());
  ASSERT_TRUE(m.rollback(uint32_t(taken.size())).is_ok());
  m.fill_mask(mask.data());
  EXPECT_EQ(mask, masks[0]);
}

TEST(Mask, RejectedTokensLeaveTheStateUnchanged) {
  auto v = vocab();
  ASSERT_TRUE(v);
  auto g = compile_regex("ab+");
  ASSERT_TRUE(g.is_ok());
  Matcher m(std::make_shared<CompiledGrammar>(*g, v));
  std::vector<uint32_t> before(v->mask_words()), after(v->mask_words());
  m.fill_mask(before.data());
  uint32_t x = greedy_tokens(*v, "x")[0];
  Status s = m.accept_token(x);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(std::to_string(x)), std::string::npos);
  EXPECT_EQ(m.accept_token(1).code(), StatusCode::kInvalidArgument);   // EOS before the output is complete
  EXPECT_EQ(m.accept_token(0).code(), StatusCode::kInvalidArgument);   // BOS: special
  EXPECT_EQ(m.accept_token(v->size()).code(), StatusCode::kInvalidArgument);
  m.fill_mask(after.data());
  EXPECT_EQ(before, after);
  EXPECT_EQ(m.num_steps(), 0u);
  ASSERT_TRUE(m.accept_bytes("ab").is_ok());
  EXPECT_TRUE(m.can_end());
  ASSERT_TRUE(m.accept_token(1).is_ok());
  EXPECT_TRUE(m.is_terminated());
  EXPECT_EQ(m.accept_token(x).code(), StatusCode::kState);
  m.reset();
  EXPECT_FALSE(m.is_terminated());
  EXPECT_EQ(m.num_steps(), 0u);
}

}  // namespace
}  // namespace di::engine::constrain
