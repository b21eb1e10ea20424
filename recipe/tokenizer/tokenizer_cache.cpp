// load_shared_tokenizer: a map from the files' identity to a weak_ptr, pruned as it is used.
// Parsing a 129k-token tokenizer.json costs far more than an engine's other start-up work, and a
// service typically opens the same model directory's tokenizer for its engine and its recipe.
#include "recipe/tokenizer/tokenizer_cache.h"

#include <filesystem>
#include <map>
#include <mutex>

namespace di::recipe {
namespace {

namespace fs = std::filesystem;

// Canonical path, size and mtime of tokenizer.json and of its tokenizer_config.json (if any);
// empty when the files cannot be identified (then the load is not shared).
std::string identity(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  const fs::path file = fs::is_directory(p, ec) ? p / "tokenizer.json" : p;
  std::string key;
  for (const fs::path& f : {file, file.parent_path() / "tokenizer_config.json"}) {
    const fs::path c = fs::canonical(f, ec);
    if (ec) {
      if (f == file) return {};
      key += "|-";  // no config file
      continue;
    }
    const auto size = fs::file_size(c, ec);
    if (ec) return {};
    const auto mtime = fs::last_write_time(c, ec);
    if (ec) return {};
    key += "|" + c.string() + ":" + std::to_string(size) + ":" +
           std::to_string(mtime.time_since_epoch().count());
  }
  return key;
}

struct Cache {
  std::mutex mu;
  std::map<std::string, std::weak_ptr<const Tokenizer>> loaded;
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: engines may outlive static destruction
  return *c;
}

}  // namespace

Result<std::shared_ptr<const Tokenizer>> load_shared_tokenizer(const std::string& path) {
  const std::string key = identity(path);
  if (key.empty()) return Tokenizer::load(path);  // load reports the missing file
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> l(c.mu);
    auto it = c.loaded.find(key);
    if (it != c.loaded.end()) {
      if (auto t = it->second.lock()) return std::shared_ptr<const Tokenizer>(std::move(t));
    }
  }
  // Parse outside the lock: other tokenizers load meanwhile; two first loads of the same files
  // may race, and then the later one is the one shared from now on.
  DI_ASSIGN_OR_RETURN(std::shared_ptr<const Tokenizer> t, Tokenizer::load(path));
  std::lock_guard<std::mutex> l(c.mu);
  for (auto it = c.loaded.begin(); it != c.loaded.end();) it = it->second.expired() ? c.loaded.erase(it) : std::next(it);
  c.loaded[key] = t;
  return t;
}

}  // namespace di::recipe
