// The tokenizer through the public C ABI, linked against libdeepinfer.so as a user's program
// is: ownership of returned arrays, flags, errors with codes and messages, NULL handling.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "deepinfer.h"
#include "tests/common/capi_calls.h"
#include "tests/tokenizer/tokenizer_files.h"

namespace {

struct Tok {
  di_tokenizer* t = nullptr;
  explicit Tok(const std::string& name) {
    const std::string dir = di::recipe::testing::tokenizer_dir(name);
    di_error* err = nullptr;
    EXPECT_EQ(di_tokenizer_create(dir.data(), dir.size(), &t, &err), DI_OK)
        << di_error_message(err) << " (run scripts/bootstrap.sh)";
    di_error_destroy(err);
  }
  ~Tok() { di_tokenizer_destroy(t); }
};

using di_test::encode;

TEST(CapiTokenizer, EncodeFlagsSelectRecognitionAndBos) {
  Tok tok("deepseek_v3");
  ASSERT_TRUE(tok.t);
  EXPECT_EQ(encode(tok.t, "<｜User｜>", DI_TOKENIZE_ADDED_TOKENS), (std::vector<int32_t>{128803}));
  EXPECT_EQ(encode(tok.t, "<｜User｜>", 0), (std::vector<int32_t>{30, 28217, 6756, 28217, 32}));
  EXPECT_EQ(encode(tok.t, "<｜User｜>", DI_TOKENIZE_ADDED_TOKENS | DI_TOKENIZE_ADD_SPECIAL),
            (std::vector<int32_t>{0, 128803}));
  EXPECT_TRUE(encode(tok.t, "", 0).empty());
  int32_t* ids = nullptr;
  size_t n = 0;
  di_error* err = nullptr;
  EXPECT_EQ(di_tokenizer_encode(tok.t, "x", 1, 8u, &ids, &n, &err), DI_E_INVALID_ARG);
  EXPECT_NE(std::string(di_error_message(err)).find("flags"), std::string::npos);
  di_error_destroy(err);
  EXPECT_EQ(di_tokenizer_encode(tok.t, "\xff", 1, 0, &ids, &n, nullptr), DI_E_INVALID_ARG);
}

TEST(CapiTokenizer, SegmentsReturnIdsAndFlatSpecialRanges) {
  Tok tok("deepseek_v3");
  ASSERT_TRUE(tok.t);
  const char* texts[] = {"<｜begin▁of▁sentence｜><｜User｜>", "<｜User｜>", "<｜Assistant｜>"};
  const size_t lens[] = {strlen(texts[0]), strlen(texts[1]), strlen(texts[2])};
  const uint8_t special[] = {1, 0, 1};
  int32_t* ids = nullptr;
  uint32_t* ranges = nullptr;
  size_t n = 0, nr = 0;
  ASSERT_EQ(di_tokenizer_encode_segments(tok.t, texts, lens, special, 3, &ids, &n, &ranges, &nr,
                                         nullptr),
            DI_OK);
  EXPECT_EQ(std::vector<int32_t>(ids, ids + n),
            (std::vector<int32_t>{0, 128803, 30, 28217, 6756, 28217, 32, 128804}));
  EXPECT_EQ(std::vector<uint32_t>(ranges, ranges + 2 * nr), (std::vector<uint32_t>{0, 2, 7, 8}));
  di_free(ids);
  di_free(ranges);
}

TEST(CapiTokenizer, DecodeAndPiecesAndLookups) {
  Tok tok("qwen3");
  ASSERT_TRUE(tok.t);
  const int32_t ids[] = {151644, 872, 198, 6023, 151645};
  char* text = nullptr;
  size_t len = 0;
  ASSERT_EQ(di_tokenizer_decode(tok.t, ids, 5, 0, &text, &len, nullptr), DI_OK);
  EXPECT_EQ(std::string(text, len), "<|im_start|>user\nhi<|im_end|>");
  di_free(text);
  ASSERT_EQ(di_tokenizer_decode(tok.t, ids, 5, DI_DECODE_SKIP_SPECIAL, &text, nullptr, nullptr), DI_OK);
  EXPECT_STREQ(text, "user\nhi");
  di_free(text);

  const int32_t bad[] = {872, 1 << 30};
  di_error* err = nullptr;
  EXPECT_EQ(di_tokenizer_decode(tok.t, bad, 2, 0, &text, &len, &err), DI_E_INVALID_ARG);
  EXPECT_NE(std::string(di_error_message(err)).find("ids[1]"), std::string::npos);
  di_error_destroy(err);

  char* piece = nullptr;
  ASSERT_EQ(di_tokenizer_token_to_piece(tok.t, 198, &piece, &len, nullptr), DI_OK);
  EXPECT_EQ(std::string(piece, len), "\n");
  di_free(piece);
  EXPECT_EQ(di_tokenizer_token_to_piece(tok.t, -1, &piece, &len, nullptr), DI_E_INVALID_ARG);

  int32_t id = -1;
  EXPECT_EQ(di_tokenizer_token_id(tok.t, "<|im_end|>", 10, &id, nullptr), DI_OK);
  EXPECT_EQ(id, 151645);
  EXPECT_EQ(di_tokenizer_token_id(tok.t, "<|nope|>", 8, &id, nullptr), DI_E_NOT_FOUND);
  EXPECT_EQ(di_tokenizer_vocab_size(tok.t), 151669);
  int32_t bos = 0, eos = 0, add_bos = 7;
  EXPECT_EQ(di_tokenizer_special_ids(tok.t, &bos, &eos, &add_bos, nullptr), DI_OK);
  EXPECT_EQ(bos, -1);
  EXPECT_EQ(eos, 151645);
  EXPECT_EQ(add_bos, 0);
}

TEST(CapiTokenizer, CreateErrorsCarryCodeAndMessage) {
  di_tokenizer* t = nullptr;
  di_error* err = nullptr;
  const std::string missing = "/nonexistent/model";
  EXPECT_EQ(di_tokenizer_create(missing.data(), missing.size(), &t, &err), DI_E_NOT_FOUND);
  EXPECT_EQ(di_error_code(err), DI_E_NOT_FOUND);
  EXPECT_NE(std::string(di_error_message(err)).find(missing), std::string::npos);
  EXPECT_EQ(t, nullptr);
  di_error_destroy(err);
  EXPECT_EQ(di_tokenizer_create(nullptr, 0, &t, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_tokenizer_vocab_size(nullptr), -1);
  EXPECT_EQ(di_tokenizer_special_ids(nullptr, nullptr, nullptr, nullptr, nullptr), DI_E_INVALID_ARG);
  di_tokenizer_destroy(nullptr);
}

}  // namespace
