// TransformersParity: the suite every CPU model family runs against its transformers fixtures
// (full-sequence logits, greedy continuation, prefill + decode, chunked prefill), defined once.
// It holds test definitions, so a test binary includes it from one source file only and there
// instantiates it over its fixtures:
//   INSTANTIATE_TEST_SUITE_P(Families, TransformersParity, parity_cases(ids, 1, 32), parity_case_name);
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tests/common/model_checks.h"

namespace di::test {

struct ParityCase {
  FixtureId id;
  int32_t num_threads = 1;
  int32_t long_chunk = 32;  // a prefill chunk that reaches past the family's window or compression block
};

inline void PrintTo(const ParityCase& c, std::ostream* os) { *os << c.id.family << "/" << c.id.name; }

// Every fixture of `ids` with the same threads and long chunk, as the suite's parameters.
inline auto parity_cases(const std::vector<FixtureId>& ids, int32_t num_threads, int32_t long_chunk) {
  std::vector<ParityCase> cases;
  for (const FixtureId& id : ids) cases.push_back({id, num_threads, long_chunk});
  return ::testing::ValuesIn(cases);
}

inline std::string parity_case_name(const ::testing::TestParamInfo<ParityCase>& info) { return info.param.id.name; }

class TransformersParity : public ::testing::TestWithParam<ParityCase> {
 protected:
  void SetUp() override {
    f = load_fixture(GetParam().id);
    model = load_on(f.dir, "cpu", GetParam().num_threads);
    ASSERT_TRUE(model);
  }

  Fixture f;
  std::unique_ptr<engine::Model> model;
};

TEST_P(TransformersParity, FullSequenceLogitsMatchTransformers) {
  RecordProperty("worst_rel_err", std::to_string(expect_full_sequence_matches(*model, f, GetParam().id.name)));
}

TEST_P(TransformersParity, GreedyContinuationMatchesTransformers) {
  EXPECT_EQ(greedy_continuation(*model, f), f.greedy);
}

TEST_P(TransformersParity, PrefillThenDecodeEqualsFullForward) {
  expect_prefill_then_decode_equals_full(*model, f);
}

TEST_P(TransformersParity, AnyChunkingOfThePrefillEqualsOnePrefill) {
  expect_any_chunking_equals_one_prefill(*model, f, GetParam().long_chunk);
}

}  // namespace di::test
