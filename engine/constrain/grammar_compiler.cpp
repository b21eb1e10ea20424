// GrammarCompiler: canonical cache keys (a JSON schema is re-serialized so spacing does not
// matter), FNV-1a hashing with the full key kept to rule out collisions, and LRU eviction.
#include "engine/constrain/grammar_compiler.h"

#include "engine/constrain/ebnf_compiler.h"
#include "engine/constrain/regex_compiler.h"

namespace di::engine::constrain {

namespace {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

Result<std::string> cache_key(const ConstraintSpec& spec) {
  std::string key = std::to_string(int(spec.kind)) + "\n";
  switch (spec.kind) {
    case ConstraintKind::kJsonSchema: {
      auto j = nlohmann::ordered_json::parse(spec.source, nullptr, false);
      if (j.is_discarded()) return Status::parse("json_schema: the schema is not valid JSON");
      return key + spec.json.cache_key() + "\n" + j.dump();
    }
    case ConstraintKind::kJsonObject: return key + spec.json.cache_key();
    case ConstraintKind::kRegex: return key + spec.source;
    case ConstraintKind::kEbnf: {
      // Each embedded schema as its options and canonical text, lengths first so no two lists of
      // schemas and grammar texts can spell the same key.
      for (size_t i = 0; i < spec.schemas.size(); ++i) {
        auto j = nlohmann::ordered_json::parse(spec.schemas[i].source, nullptr, false);
        if (j.is_discarded()) return Status::parse("ebnf: embedded schema " + std::to_string(i) + " is not valid JSON");
        const std::string text = j.dump();
        key += spec.schemas[i].json.cache_key() + " " + std::to_string(text.size()) + ":" + text + "\n";
      }
      return key + std::to_string(spec.schemas.size()) + "\n" + spec.source;
    }
  }
  return key;
}

const char* kind_name(ConstraintKind k) {
  switch (k) {
    case ConstraintKind::kJsonSchema: return "json_schema";
    case ConstraintKind::kJsonObject: return "json_object";
    case ConstraintKind::kRegex: return "regex";
    case ConstraintKind::kEbnf: return "ebnf";
  }
  return "constraint";
}

}  // namespace

Result<std::shared_ptr<const Grammar>> compile_constraint(const ConstraintSpec& spec, const GrammarLimits& limits) {
  switch (spec.kind) {
    case ConstraintKind::kJsonSchema: return compile_json_schema_text(spec.source, spec.json, limits);
    case ConstraintKind::kJsonObject: return compile_any_json(spec.json, /*object_only=*/true, limits);
    case ConstraintKind::kRegex: return compile_regex(spec.source, limits);
    case ConstraintKind::kEbnf: return compile_ebnf(spec.source, spec.schemas, limits);
  }
  return Status::invalid_argument("constraint: unknown kind");
}

GrammarCompiler::GrammarCompiler(std::shared_ptr<const TokenVocabulary> vocab, size_t capacity, const GrammarLimits& limits)
    : vocab_(std::move(vocab)), capacity_(capacity == 0 ? 1 : capacity), limits_(limits) {}

Result<std::shared_ptr<const CompiledGrammar>> GrammarCompiler::compile(const ConstraintSpec& spec) {
  DI_ASSIGN_OR_RETURN(std::string key, cache_key(spec));
  const uint64_t h = fnv1a(key);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_hash_.find(h);
    if (it != by_hash_.end() && it->second->key == key) {
      lru_.splice(lru_.begin(), lru_, it->second);
      ++hits_;
      return it->second->grammar;
    }
    ++misses_;
  }
  // Compiled outside the lock: a large schema must not stall other requests' lookups.
  DI_ASSIGN_OR_RETURN(std::shared_ptr<const Grammar> g, compile_constraint(spec, limits_));
  // A constraint nothing satisfies would leave the sequence no token but a silent, invalid end:
  // refuse it up front (a misspelled keyword, e.g. "propetries" next to "required", is the usual cause).
  if (g->matches_nothing()) {
    return Status::invalid_argument(std::string(kind_name(spec.kind)) +
                                    ": no output can satisfy it (the grammar matches no string)");
  }
  auto compiled = std::make_shared<const CompiledGrammar>(std::move(g), vocab_);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_hash_.find(h);
  if (it != by_hash_.end()) {
    if (it->second->key == key) return it->second->grammar;  // compiled twice concurrently
    lru_.erase(it->second);                                  // a hash collision: keep the newer
    by_hash_.erase(it);
  }
  lru_.push_front(Entry{key, compiled});
  by_hash_[h] = lru_.begin();
  while (lru_.size() > capacity_) {
    by_hash_.erase(fnv1a(lru_.back().key));
    lru_.pop_back();
  }
  return compiled;
}

size_t GrammarCompiler::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

size_t GrammarCompiler::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}

size_t GrammarCompiler::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

}  // namespace di::engine::constrain
