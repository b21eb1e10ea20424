// The weights-loading progress line: ProgressMeter's grace period, throttling and text on a
// made-up clock (no sleeping, no timing-bound asserts); LoadProgress routes to an installed log
// handler as records; WeightLoader reports the bytes of the tensors a family takes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/log.h"
#include "base/progress_meter.h"
#include "engine/model/model.h"
#include "engine/model/weight_loader.h"
#include "engine/model/weight_progress.h"

namespace di {
namespace {

using log::ProgressMeter;
using log::ProgressOutput;

constexpr int64_t kGiB = int64_t{1} << 30;

TEST(ProgressMeter, NothingForALoadThatEndsWithinTheGracePeriod) {
  for (bool bar : {true, false}) {
    ProgressMeter m("weights", 10 * kGiB, bar, 100.0);
    EXPECT_FALSE(m.update(kGiB, 100.5));
    EXPECT_FALSE(m.update(9 * kGiB, 101.99));
    EXPECT_FALSE(m.finish(101.999));
    EXPECT_FALSE(m.shown());
  }
}

TEST(ProgressMeter, BarAppearsAfterTwoSecondsAndRedrawsAtMostEveryTenthOfASecond) {
  ProgressMeter m("weights", 10 * kGiB, /*bar=*/true, 0.0);
  EXPECT_FALSE(m.update(kGiB, 1.0));
  auto first = m.update(4 * kGiB, 2.0);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->kind, ProgressOutput::kBar);
  EXPECT_EQ(first->text, "weights: [############..................]  40% 4.00 GiB / 10.00 GiB, 2.00 GiB/s, ETA 3s");
  EXPECT_FALSE(m.update(5 * kGiB, 2.05));  // throttled
  auto next = m.update(5 * kGiB, 2.5);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->text, "weights: [###############...............]  50% 5.00 GiB / 10.00 GiB, 2.00 GiB/s, ETA 3s");
  auto last = m.finish(4.0);
  ASSERT_TRUE(last);
  EXPECT_EQ(last->kind, ProgressOutput::kBar);
  EXPECT_EQ(last->text, "weights: [##############################] 100% 10.00 GiB / 10.00 GiB, 2.50 GiB/s");
}

TEST(ProgressMeter, RecordsAreAtMostOneEveryFiveSecondsAndNoneAtTheEnd) {
  ProgressMeter m("weights", 100 * kGiB, /*bar=*/false, 10.0);
  std::vector<std::string> lines;
  // A tensor every 50 ms for 30 s.
  for (int i = 1; i <= 600; ++i) {
    auto out = m.update(int64_t{i} * (100 * kGiB / 600), 10.0 + 0.05 * i);
    if (out) {
      EXPECT_EQ(out->kind, ProgressOutput::kRecord);
      lines.push_back(out->text);
    }
  }
  // At 2 s, then 7, 12, 17, 22, 27 s.
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0].rfind("weights:   6% ", 0), 0u) << lines[0];
  EXPECT_EQ(lines[0].find('['), std::string::npos);
  EXPECT_EQ(lines[0].find('\r'), std::string::npos);
  EXPECT_FALSE(m.finish(40.0));
}

TEST(ProgressMeter, FormatsUnknownTotalsAndLongEtas) {
  EXPECT_EQ(ProgressMeter::format("weights", 3 * kGiB, 0, 2.0, true), "weights: 3.00 GiB, 1.50 GiB/s");
  EXPECT_EQ(ProgressMeter::format("weights", kGiB, 200 * kGiB, 10.0, false),
            "weights:   0% 1.00 GiB / 200.00 GiB, 102.40 MiB/s, ETA 33m10s");
  EXPECT_EQ(ProgressMeter::format("weights", kGiB, 1000 * kGiB, 10.0, false),
            "weights:   0% 1.00 GiB / 1000.00 GiB, 102.40 MiB/s, ETA 2h46m");
  EXPECT_EQ(ProgressMeter::format("weights", 0, kGiB, 0.0, false), "weights:   0% 0 B / 1.00 GiB, 0 B/s");
}

struct Collected {
  std::vector<std::pair<int32_t, std::string>> records;
};

void collect(void* user, int32_t level, const char* message, size_t len) {
  static_cast<Collected*>(user)->records.emplace_back(level, std::string(message, len));
}

TEST(LoadProgress, AnInstalledHandlerGetsRecordsNotABar) {
  Collected c;
  log::set_sink(collect, &c, log::Level::kInfo);
  EXPECT_FALSE(log::progress_bar_available());
  double now = 0;
  {
    engine::LoadProgress p(8 * kGiB, [&] { return now; });
    for (int i = 0; i < 128; ++i) {  // 64 MiB every 0.25 s for 32 s
      now += 0.25;
      p.advance(int64_t{64} << 20);
    }
    p.finish();
  }
  log::set_sink(nullptr, nullptr, log::Level::kWarn);
  // At 2, 7, 12, 17, 22, 27 and 32 s.
  ASSERT_EQ(c.records.size(), 7u);
  for (const auto& [level, text] : c.records) {
    EXPECT_EQ(level, static_cast<int32_t>(log::Level::kInfo));
    EXPECT_EQ(text.find('\r'), std::string::npos);
    EXPECT_EQ(text.find('\n'), std::string::npos);
  }
  EXPECT_EQ(c.records[0].second, "weights:   6% 512.00 MiB / 8.00 GiB, 256.00 MiB/s, ETA 30s");
}

TEST(LoadProgress, NothingWhenInfoRecordsAreOff) {
  Collected c;
  log::set_sink(collect, &c, log::Level::kWarn);
  double now = 0;
  engine::LoadProgress p(kGiB, [&] { return now; });
  now = 10;
  p.advance(kGiB / 2);
  p.finish();
  log::set_sink(nullptr, nullptr, log::Level::kWarn);
  EXPECT_TRUE(c.records.empty());
}

struct Counter final : engine::WeightProgress {
  int64_t bytes = 0;
  int calls = 0;
  void advance(int64_t b) override { bytes += b, ++calls; }
};

TEST(LoadProgress, WeightLoaderReportsTheBytesOfEveryTensorTaken) {
  const std::string dir = std::string(DI_FIXTURES_DIR) + "/model_llama/llama3_gqa_tied";
  engine::WeightStore store;
  auto ck = engine::Checkpoint::open(dir);
  ASSERT_TRUE(ck.is_ok()) << ck.status().message();
  store.checkpoint = std::move(ck).value();
  int64_t expected = 0;
  for (const std::string& n : store.checkpoint->names()) expected += store.checkpoint->find(n)->nbytes;
  Counter counter;
  {
    engine::ScopedWeightProgress current(&counter);
    engine::WeightLoader w(store, "llama");
    EXPECT_EQ(w.take_prefix({""}).size(), store.checkpoint->size());
  }
  EXPECT_EQ(counter.bytes, expected);
  EXPECT_EQ(counter.calls, static_cast<int>(store.checkpoint->size()));
  EXPECT_EQ(engine::current_weight_progress(), nullptr);  // the scope restored "none"
}

}  // namespace
}  // namespace di
