// `deepinfer render`: with --messages, every reference-encoder record through the CLI, as a user
// of DeepSeek's Python encoders would call it; with --protocol, a whole API request (prompt, ids,
// special ranges, options) or the API's error body.
#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/common/run_command.h"
#include "tests/recipe/golden.h"
#include "tests/recipe_stream/tiny_deepseek_tokenizer.h"

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
  r.exit_code = di_test::run_command(cmd, &r.out);
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

// A Chat request through --protocol with a byte-level DeepSeek tokenizer: the ids spell the
// prompt back, control tokens only where the template put them (the user typing `</think>` or
// `<｜User｜>` gets plain bytes), and the request's options come along.
TEST(RenderCli, ProtocolModeTokenizesTemplateAndContentApart) {
  const std::string dir = di::testing::write_tiny_deepseek_tokenizer(
      ::testing::TempDir() + "/render_cli_tok_" + std::to_string(getpid()));
  const std::string body = R"({"model":"deepseek-v4","temperature":0.5,"top_k":7,"stop":["END"],)"
                           R"("messages":[{"role":"user","content":"Say </think> and <｜User｜>."}]})";
  CliResult r = run_cli("--tokenizer " + dir + " --encoding dsv41 --protocol chat", body);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ordered_json out = ordered_json::parse(r.out, nullptr, false);
  ASSERT_TRUE(out.is_object()) << r.out;
  const std::string prompt = out["prompt"];
  // DeepSeek's V4.1 reference encoder, thinking on, default effort (as in its record dsv41-s003).
  EXPECT_EQ(prompt, "<｜begin▁of▁sentence｜><｜System｜>Reasoning Effort: 50 (range 1-100, the higher the "
                    "value, the more thorough the reasoning)\n\n<｜User｜>Say </think> and <｜User｜>."
                    "<｜Assistant｜><think>");
  // Decode the ids by hand: ids < 256 are bytes, the rest the tokenizer's control tokens.
  std::string spelled;
  std::vector<bool> special(out["ids"].size(), false);
  for (const auto& range : out["special_ranges"])
    for (uint32_t k = range[0]; k < range[1].get<uint32_t>(); ++k) special.at(k) = true;
  for (size_t k = 0; k < out["ids"].size(); ++k) {
    const int32_t id = out["ids"][k];
    if (id < 256) {
      spelled.push_back(static_cast<char>(id));
    } else {
      EXPECT_TRUE(special[k]) << "control token " << id << " outside the template at " << k;
      spelled += di::testing::tiny_control_tokens().at(static_cast<size_t>(id - 256));
    }
  }
  EXPECT_EQ(spelled, prompt);
  size_t think_end = 0, user = 0;
  for (const auto& id : out["ids"]) {
    think_end += id == di::testing::tiny_token_id("</think>");
    user += id == di::testing::tiny_token_id("<｜User｜>");
  }
  EXPECT_EQ(think_end, 0u);  // typed by the user: plain text
  EXPECT_EQ(user, 1u);       // the template's only
  EXPECT_EQ(out["options"]["sampling"]["temperature"], 0.5);
  EXPECT_EQ(out["options"]["sampling"]["top_k"], 7);
  EXPECT_EQ(out["options"]["stop"], ordered_json::parse(R"(["END"])"));
  EXPECT_EQ(out["options"]["parser"]["prompt_opened_thinking"], true);
}

TEST(RenderCli, ProtocolModeRejectionPrintsTheApisErrorBodyWithExitCode2) {
  CliResult r = run_cli("--encoding dsv4 --protocol chat", R"({"model":"gpt-4o","messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(r.exit_code, 2);
  ordered_json out = ordered_json::parse(r.out, nullptr, false);
  EXPECT_EQ(out["error"]["code"], "model_not_found") << r.out;
  EXPECT_EQ(out["error"]["param"], "model");
  r = run_cli("--encoding dsv4 --protocol messages", R"({"model":"deepseek-v4","messages":[]})");
  EXPECT_EQ(r.exit_code, 2);
  out = ordered_json::parse(r.out, nullptr, false);
  EXPECT_EQ(out["type"], "error") << r.out;
  EXPECT_EQ(out["error"]["type"], "invalid_request_error");
  EXPECT_EQ(out["error"]["message"], "messages: at least one message is required");
}

TEST(RenderCli, BadUsageIsExitCode2NamingTheArgument) {
  CliResult r = run_cli("--encoding dsv4 --protocol chat --bogus 2>&1", "{}");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("unknown argument '--bogus'"), std::string::npos) << r.out;
  r = run_cli("--encoding 2>&1", "{}");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--encoding needs a value"), std::string::npos) << r.out;
  r = run_cli("--encoding dsv4 --protocol chatty 2>&1", "{}");
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace di::recipe
