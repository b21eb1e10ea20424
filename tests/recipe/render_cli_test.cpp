// `deepinfer render --messages`: every reference-encoder record through the CLI, as a user of
// DeepSeek's Python encoders would call it.
#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/recipe/golden.h"

namespace di::recipe {
namespace {

using ordered_json = nlohmann::ordered_json;

struct CliResult {
  int exit_code = -1;
  std::string out;
};

CliResult run_cli(const std::string& args, const std::string& stdin_text) {
  char path[] = "/tmp/di_render_XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  if (fd < 0) return {};
  {
    std::ofstream f(path, std::ios::binary);
    f << stdin_text;
  }
  close(fd);
  std::string cmd = std::string(DI_BINARY_DIR) + "/bin/deepinfer render " + args + " < " + path;
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p != nullptr) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    int st = pclose(p);
    r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  unlink(path);
  return r;
}

size_t replay_cli(const std::string& name) {
  auto records = testing::load_golden(name);
  for (const auto& r : records) {
    SCOPED_TRACE(r["id"].get<std::string>());
    CliResult res = run_cli("--encoding " + name + " --messages", r["input"].dump());
    ordered_json out = ordered_json::parse(res.out, nullptr, false);
    EXPECT_TRUE(out.is_object()) << res.out;
    if (!out.is_object()) continue;
    if (r.contains("error")) {
      EXPECT_EQ(res.exit_code, 2);
      EXPECT_TRUE(out.contains("error") && out["error"].is_string()) << res.out;
      continue;
    }
    EXPECT_EQ(res.exit_code, 0);
    EXPECT_EQ(out.value("prompt", ""), r["prompt"].get<std::string>());
    if (r.contains("multi_modal_data")) {
      EXPECT_EQ(out["multi_modal_data"], r["multi_modal_data"]);
    }
  }
  return records.size();
}

TEST(RenderCli, MessagesModeReproducesDsv32Records) { EXPECT_EQ(replay_cli("dsv32"), 40u); }
TEST(RenderCli, MessagesModeReproducesDsv4Records) { EXPECT_EQ(replay_cli("dsv4"), 40u); }
TEST(RenderCli, MessagesModeReproducesDsv41Records) { EXPECT_EQ(replay_cli("dsv41"), 40u); }

TEST(RenderCli, MalformedInputIsAnErrorWithExitCode2) {
  CliResult r = run_cli("--encoding dsv4 --messages", "{not json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(ordered_json::parse(r.out, nullptr, false).contains("error"));
  r = run_cli("--encoding dsv5 --messages", "{}");
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace di::recipe
