// `deepinfer info`: the library's version and build capabilities, straight from the C ABI; with
// --model, what a model directory is (family, parameter count and dtypes from its safetensors
// headers) and what the engine makes of it here (device, limits, KV cache plan), as llama.cpp
// prints when it loads a model.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "deepinfer.h"
#include "tools/cli/commands.h"
#include "tools/cli/engine_session.h"

namespace di::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void usage() {
  std::printf(
      "usage: deepinfer info [--model DIR [engine flags]]\n"
      "  Prints {\"version\", \"cuda\", ...} as one JSON line. With --model: {\"build\", \"model\":\n"
      "  {\"family\", \"parameters\", \"dtypes\": {dtype: parameters}}, \"engine\": {device, limits,\n"
      "  KV cache}} for that directory, loading it with the engine flags given (--device,\n"
      "  --kv-cache-bytes, --max-model-len, ...).\n");
}

// The tensors' element counts by dtype, from the headers of the checkpoint's safetensors files
// (the 8-byte length, then the JSON header; the data is not read).
Result<json> count_parameters(const fs::path& dir) {
  std::set<std::string> files;
  if (fs::exists(dir / "model.safetensors.index.json")) {
    std::ifstream f(dir / "model.safetensors.index.json");
    const json index = json::parse(f, nullptr, false);
    if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
      return Status::parse("model.safetensors.index.json: expected {\"weight_map\": {...}}");
    for (const auto& [_, file] : index["weight_map"].items())
      if (file.is_string()) files.insert(file.get<std::string>());
  } else {
    files.insert("model.safetensors");
  }
  json dtypes = json::object();
  int64_t total = 0;
  for (const std::string& name : files) {
    std::ifstream f(dir / name, std::ios::binary);
    uint64_t len = 0;
    if (!f || !f.read(reinterpret_cast<char*>(&len), 8) || len > (uint64_t{100} << 20))
      return Status::io(name + ": not a readable safetensors file");
    std::string header(len, '\0');
    if (!f.read(header.data(), static_cast<std::streamsize>(len))) return Status::io(name + ": header cut short");
    const json h = json::parse(header, nullptr, false);
    if (!h.is_object()) return Status::parse(name + ": the header is not a JSON object");
    for (const auto& [key, t] : h.items()) {
      if (key == "__metadata__" || !t.is_object() || !t.contains("shape") || !t["shape"].is_array()) continue;
      int64_t n = 1;
      for (const json& d : t["shape"]) n *= d.is_number_integer() ? d.get<int64_t>() : 0;
      const std::string dtype = t.value("dtype", "?");
      dtypes[dtype] = dtypes.value(dtype, int64_t{0}) + n;
      total += n;
    }
  }
  return json{{"parameters", total}, {"dtypes", dtypes}};
}

json engine_info(di_engine* engine) {
  char* text = nullptr;
  size_t len = 0;
  if (di_engine_info(engine, &text, &len, nullptr) != DI_OK) return nullptr;
  json j = json::parse(std::string(text, len), nullptr, false);
  di_free(text);
  return j.is_discarded() ? json(nullptr) : j;
}

}  // namespace

int cmd_info(int argc, char** argv) {
  std::string model_dir;
  json sampling = json::object(), engine_opts = json::object();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage();
      return 0;
    }
    if (parse_common_switch(a, sampling, engine_opts)) continue;
    if (i + 1 >= argc) {
      std::fprintf(stderr, "deepinfer info: %s needs a value (or unexpected argument)\n", a.c_str());
      return 2;
    }
    const std::string v = argv[++i];
    bool consumed = false;
    std::string error;
    if (!parse_common_flag(a, v, sampling, engine_opts, &consumed, &error)) {
      std::fprintf(stderr, "deepinfer info: %s\n", error.c_str());
      return 2;
    }
    if (consumed && sampling.empty()) continue;
    if (a == "--model" && sampling.empty()) {
      model_dir = v;
      continue;
    }
    std::fprintf(stderr, "deepinfer info: unexpected argument '%s'\n", a.c_str());
    return 2;
  }
  const json build = json::parse(di_build_info());
  if (model_dir.empty()) {
    if (!engine_opts.empty()) {
      std::fprintf(stderr, "deepinfer info: engine flags need --model\n");
      return 2;
    }
    std::printf("%s\n", build.dump().c_str());
    return 0;
  }
  auto params = count_parameters(model_dir);
  if (!params.is_ok()) {
    std::fprintf(stderr, "deepinfer info: %s: %s\n", model_dir.c_str(), params.status().message().c_str());
    return 1;
  }
  auto session = EngineSession::open(model_dir, engine_opts);
  if (!session.is_ok()) {
    std::fprintf(stderr, "deepinfer info: %s\n", session.status().message().c_str());
    return session.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  json engine = engine_info((*session)->engine());
  json model = *params;
  if (engine.is_object() && engine.contains("model")) {
    for (const auto& [k, v] : engine["model"].items()) model[k] = v;
    engine.erase("model");
  }
  std::printf("%s\n", json{{"build", build}, {"model", model}, {"engine", engine}}.dump().c_str());
  return 0;
}

}  // namespace di::cli
