// The JSON Schema Test Suite (draft 2020-12) against the grammar: for every schema the compiler
// accepts, each valid instance must be accepted and each invalid one rejected, byte for byte, in
// its compact spelling and indented; schemas it refuses must be refused with an error naming the
// keyword. Known departures are listed (with reasons) in the fixture folder and may only shrink.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "engine/constrain/json_schema_compiler.h"
#include "tests/constrain/json_instance.h"
#include "tests/constrain/test_util.h"

namespace di::engine::constrain {
namespace {

namespace fs = std::filesystem;
using testing::full_match;
using testing::InstanceWriter;
using testing::ojson;

const std::string kDir = std::string(DI_FIXTURES_DIR) + "/constrain/json-schema-test-suite";

std::set<std::string> known_departures() {
  std::set<std::string> out;
  std::ifstream f(kDir + "/known_departures.txt");
  for (std::string line; std::getline(f, line);) {
    if (line.empty() || line[0] == '#') continue;
    out.insert(line.substr(0, line.find(" -- ")));
  }
  return out;
}

struct Tally {
  int cases = 0, compiled = 0, refused = 0, tests = 0, agree = 0;
  uint64_t max_work = 0;
  std::vector<std::string> refusals;  // "file / description: message"
};

void run_file(const fs::path& file, const std::set<std::string>& known, Tally& t, std::set<std::string>& seen) {
  ojson groups = ojson::parse(testing::read_file(file.string()));
  const std::string name = file.filename().string();
  for (const ojson& g : groups) {
    ++t.cases;
    const std::string desc = g["description"].get<std::string>();
    JsonSchemaOptions opts;
    // Format is an annotation in the required tests and an assertion in optional/format.
    opts.assert_formats = file.string().find("optional/format") != std::string::npos;
    auto grammar = compile_json_schema(g["schema"], opts);
    if (!grammar.is_ok()) {
      ++t.refused;
      t.refusals.push_back(name + " / " + desc + ": " + grammar.status().message());
      if (getenv("DI_SHOW_REFUSALS")) std::printf("REFUSED %s / %s: %s\n", name.c_str(), desc.c_str(), grammar.status().message().c_str());
      const Status& st = grammar.status();
      // A refusal must be deliberate (unsupported or over a limit) and name what it refuses.
      EXPECT_TRUE(st.code() == StatusCode::kUnsupported || st.code() == StatusCode::kLimit)
          << name << " / " << desc << ": " << st.message();
      size_t q = st.message().find('\'');
      ASSERT_NE(q, std::string::npos) << st.message();
      std::string named = st.message().substr(q + 1, st.message().find('\'', q + 1) - q - 1);
      EXPECT_NE(g["schema"].dump().find(named), std::string::npos)
          << name << " / " << desc << ": error names '" << named << "', absent from the schema: " << st.message();
      continue;
    }
    ++t.compiled;
    t.max_work = std::max(t.max_work, (*grammar)->compile_work());
    InstanceWriter writer(g["schema"]);
    for (const ojson& test : g["tests"]) {
      const bool valid = test["valid"].get<bool>();
      const std::string id = name + " | " + desc + " | " + test["description"].get<std::string>();
      for (int indent : {-1, 2}) {
        ++t.tests;
        const std::string text = writer.write(test["data"], indent);
        const bool accepted = full_match(*grammar, text);
        if (accepted == valid) {
          ++t.agree;
          continue;
        }
        seen.insert(id);
        EXPECT_TRUE(known.count(id)) << (valid ? "valid instance rejected: " : "invalid instance accepted: ") << id
                                     << "\n  instance: " << text;
      }
    }
  }
}

TEST(JsonSchemaSuite, CompiledSchemasAgreeWithEveryInstance) {
  const std::set<std::string> known = known_departures();
  std::set<std::string> seen;
  Tally t;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(kDir + "/draft2020-12")) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 46u);
  // The report the structured-output issue asks for: pass counts per file, then every refusal.
  std::printf("%-44s %9s %9s\n", "file", "compiled", "agree");
  for (const auto& f : files) {
    const Tally before = t;
    run_file(f, known, t, seen);
    std::printf("%-44s %4d/%-4d %4d/%-4d\n", fs::relative(f, kDir + "/draft2020-12").string().c_str(),
                t.compiled - before.compiled, t.cases - before.cases, t.agree - before.agree, t.tests - before.tests);
  }
  for (const std::string& r : t.refusals) std::printf("refused: %s\n", r.c_str());
  std::printf("JSON Schema Test Suite: %d cases, %d compiled, %d refused; %d/%d instance checks agree\n", t.cases,
              t.compiled, t.refused, t.agree, t.tests);
  std::printf("JSON Schema Test Suite: largest compile %llu work units\n", (unsigned long long)t.max_work);
  // Every schema of the suite fits the default compile budget with a wide margin.
  EXPECT_LE(t.max_work, GrammarLimits::kDefaultCompileWork / 4);
  for (const std::string& k : known) {
    EXPECT_TRUE(seen.count(k)) << "listed departure no longer happens (remove it): " << k;
  }
}

}  // namespace
}  // namespace di::engine::constrain
