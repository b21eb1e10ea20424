// 8 threads x 125 random operations through the C ABI — submit (poll or callback), poll,
// cancel, destroy — then the engine is destroyed with requests still open. No crash, no leak
// (the ASan suite runs this), every request ends, the pool is full before the destroy.
#include <atomic>
#include <mutex>
#include <random>
#include <thread>

#include "tests/capi_engine/capi_engine_fixture.h"

namespace di_test {
namespace {

TEST(CapiEngineStress, EightThreadsOfRandomSubmitPollCancelDestroyAllEnd) {
  V4Fixture f = load_v4_fixture("mixed_yarn_hc2");
  di_engine* e = engine(f.dir, R"({"max_model_len": 128, "max_num_seqs": 8, "max_num_batched_tokens": 32})").release();
  std::atomic<int> finals{0}, callback_requests{0}, submitted{0};
  std::mutex mu;
  std::vector<di_request*> kept;  // polled to the end below
  auto on_chunk = [](const di_chunk* c, void* user) {
    if (c->is_final) static_cast<std::atomic<int>*>(user)->fetch_add(1);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<uint32_t>(t));
      std::vector<di_request*> mine;
      for (int op = 0; op < 125; ++op) {
        const unsigned kind = rng() % 5;
        if (kind <= 1 || mine.empty()) {
          std::vector<int32_t> prompt;
          const size_t len = 1 + rng() % 30;
          for (size_t k = 0; k < len; ++k) prompt.push_back(f.prompt[rng() % f.prompt.size()]);
          const std::string s = R"({"max_tokens": )" + std::to_string(1 + rng() % 10) + R"(, "temperature": )" +
                                (rng() % 2 ? "0" : "0.7") + R"(, "n": )" + std::to_string(1 + rng() % 2) + "}";
          Options o = options(s);
          di_request* r = nullptr;
          const bool callback = rng() % 3 == 0;
          if (di_submit(e, prompt.data(), prompt.size(), o.get(), callback ? +on_chunk : nullptr,
                        callback ? &finals : nullptr, &r, nullptr) == DI_OK) {
            ++submitted;
            if (callback) {
              ++callback_requests;
              di_request_destroy(r);  // the callback still gets its final chunk
            } else {
              mine.push_back(r);
            }
          }
        } else if (kind == 2) {
          di_chunk c;
          c.struct_size = sizeof c;
          di_poll_chunk(mine[rng() % mine.size()], static_cast<int32_t>(rng() % 3), &c, nullptr);
        } else if (kind == 3) {
          di_cancel(mine[rng() % mine.size()], nullptr);
        } else {
          const size_t i = rng() % mine.size();
          if (rng() % 2) {
            di_request_destroy(mine[i]);
            mine.erase(mine.begin() + static_cast<long>(i));
          }
        }
      }
      std::lock_guard<std::mutex> l(mu);
      kept.insert(kept.end(), mine.begin(), mine.end());
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_GT(submitted.load(), 200);
  for (di_request* r : kept) {
    di_chunk c;
    c.struct_size = sizeof c;
    di_status st;
    while ((st = di_poll_chunk(r, 60000, &c, nullptr)) == DI_OK) {}
    EXPECT_EQ(st, DI_END_OF_STREAM);
  }
  for (int i = 0; i < 2000 && finals.load() < callback_requests.load(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(finals.load(), callback_requests.load());
  nlohmann::json m;
  for (int i = 0; i < 1000; ++i) {
    m = metrics(e);
    if (m["kv_blocks_free"] == m["kv_blocks_total"]) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(m["kv_blocks_free"], m["kv_blocks_total"]);
  // Destroy with two requests open: both end cancelled, their handles stay usable.
  std::vector<int32_t> p(f.prompt.begin(), f.prompt.begin() + 10);
  Request a = submit(e, p, R"({"max_tokens": 100, "ignore_eos": 1})");
  Request b = submit(e, p, R"({"max_tokens": 100, "ignore_eos": 1})");
  di_engine_destroy(e);
  for (di_request* r : {a.get(), b.get()}) {
    auto out = drain(r);
    EXPECT_TRUE(out[0].finish == DI_FINISH_CANCELLED || out[0].finish == DI_FINISH_LENGTH);
    EXPECT_EQ(di_cancel(r, nullptr), DI_OK);  // no-op after the engine is gone
  }
  for (di_request* r : kept) di_request_destroy(r);
}

}  // namespace
}  // namespace di_test
