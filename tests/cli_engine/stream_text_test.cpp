// Streamed text and the tokenizer's decode agree, through libdeepinfer.so on the bundled tiny
// model: a logit bias makes the model emit single-byte tokens that form ill-formed UTF-8 (cut-off
// leads, stray continuations, surrogates), and the chunks' text, concatenated, equals
// di_tokenizer_decode of the same ids (U+FFFD per maximal ill-formed subpart in both).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "deepinfer.h"
#include "tests/cli_engine/tiny_engine.h"
#include "tests/common/capi_calls.h"

namespace {

using di_test::error_text;
using di_test::for_each_chunk;

class StreamText : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_NO_FATAL_FAILURE(di_test::open_tiny_engine("di-stream-text", &dir_, &engine_));
    di_error* err = nullptr;
    ASSERT_EQ(di_tokenizer_create(dir_->data(), dir_->size(), &tokenizer_, &err), DI_OK) << error_text(err);
  }
  static void TearDownTestSuite() {
    di_tokenizer_destroy(tokenizer_);
    di_test::close_tiny_engine(dir_, engine_);
  }

  // The ids of the byte-level tokens that stand for exactly one of `bytes`.
  static std::vector<int32_t> single_byte_tokens(const std::string& bytes) {
    std::vector<int32_t> ids;
    const int64_t n = di_tokenizer_vocab_size(tokenizer_);
    for (int32_t id = 0; id < n; ++id) {
      char* piece = nullptr;
      size_t len = 0;
      if (di_tokenizer_token_to_piece(tokenizer_, id, &piece, &len, nullptr) != DI_OK) continue;
      if (len == 1 && bytes.find(piece[0]) != std::string::npos) ids.push_back(id);
      di_free(piece);
    }
    return ids;
  }

  static std::string* dir_;
  static di_engine* engine_;
  static di_tokenizer* tokenizer_;
};
std::string* StreamText::dir_ = nullptr;
di_engine* StreamText::engine_ = nullptr;
di_tokenizer* StreamText::tokenizer_ = nullptr;

TEST_F(StreamText, ChunkTextOfIllFormedByteTokensEqualsDecodeOfTheIds) {
  // ASCII, every kind of lead byte, continuation bytes at the edges of the lead-specific ranges,
  // and bytes that never occur in UTF-8.
  const std::string alphabet = "A\xC2\xDF\xE0\xE4\xED\xEF\xF0\xF4\x80\x8F\x90\x9F\xA0\xB8\xBF\xC0\xF5\xFF";
  const std::vector<int32_t> byte_ids = single_byte_tokens(alphabet);
  ASSERT_EQ(byte_ids.size(), alphabet.size()) << "the byte-level vocabulary has one token per byte";
  nlohmann::json bias = nlohmann::json::object();
  for (int32_t id : byte_ids) bias[std::to_string(id)] = 100;
  const std::vector<int32_t> prompt = {0, 1000, 2000, 3000};
  size_t longer_subparts = 0;  // replacement characters that stand for more than one byte
  for (int seed = 1; seed <= 6; ++seed) {
    const std::string sampling =
        nlohmann::json{{"temperature", 1.0}, {"seed", seed}, {"max_tokens", 40}, {"ignore_eos", 1}, {"logit_bias", bias}}
            .dump();
    di_options* o = nullptr;
    ASSERT_EQ(di_options_create(&o, nullptr), DI_OK);
    di_error* err = nullptr;
    ASSERT_EQ(di_options_update_json(o, sampling.data(), sampling.size(), &err), DI_OK) << error_text(err);
    di_request* r = nullptr;
    ASSERT_EQ(di_submit(engine_, prompt.data(), prompt.size(), o, nullptr, nullptr, &r, &err), DI_OK)
        << error_text(err);
    di_options_destroy(o);
    std::vector<int32_t> ids;
    std::string streamed;
    for_each_chunk(r, [&](const di_chunk& c) {
      ids.insert(ids.end(), c.token_ids, c.token_ids + c.num_tokens);
      streamed.append(c.text, c.text_len);
    });
    di_request_destroy(r);
    ASSERT_EQ(ids.size(), 40u);
    std::string bytes;
    for (int32_t id : ids) {
      bool biased = false;
      for (size_t k = 0; k < byte_ids.size(); ++k)
        if (byte_ids[k] == id) bytes += alphabet[k], biased = true;
      ASSERT_TRUE(biased) << "token " << id << " was not one of the biased byte tokens";
    }
    char* text = nullptr;
    size_t len = 0;
    ASSERT_EQ(di_tokenizer_decode(tokenizer_, ids.data(), ids.size(), 0, &text, &len, &err), DI_OK) << error_text(err);
    const std::string decoded(text, len);
    di_free(text);
    EXPECT_EQ(streamed, decoded) << "seed " << seed;
    // Count the U+FFFD that replaced a multi-byte subpart: bytes minus kept bytes minus U+FFFDs.
    size_t replacements = 0, kept = 0;
    for (size_t i = 0; i < decoded.size();) {
      if (decoded.compare(i, 3, "\xEF\xBF\xBD") == 0) {
        ++replacements;
        i += 3;
      } else {
        ++kept;
        ++i;
      }
    }
    longer_subparts += bytes.size() - kept - replacements;
  }
  // The byte mix did exercise subparts of more than one byte (where per-byte replacement differs).
  EXPECT_GT(longer_subparts, 0u);
}

}  // namespace
