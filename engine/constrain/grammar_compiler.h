// GrammarCompiler: one per model vocabulary — compiles constraint specs (JSON Schema, regex, EBNF
// with embedded schemas and special tokens, any JSON) into CompiledGrammars and caches them by a hash of the canonical source, so a schema
// sent with many requests is compiled (and its token masks classified) once. Thread-safe.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "base/status.h"
#include "engine/constrain/compiled_grammar.h"
#include "engine/constrain/json_schema_compiler.h"
#include "engine/constrain/token_vocabulary.h"

namespace di::engine::constrain {

// What to compile: the request seam's spec (request/constraint_spec.h).
using di::request::ConstraintKind;
using di::request::ConstraintSpec;

class GrammarCompiler {
 public:
  // `limits` bound every compile (the work budget refuses hostile specs with kLimit).
  explicit GrammarCompiler(std::shared_ptr<const TokenVocabulary> vocab, size_t capacity = 256,
                           const GrammarLimits& limits = {});

  // Refuses (kInvalidArgument, "<kind>: no output can satisfy it ...") a spec whose language is
  // empty: a request under it could only end at once with an invalid output.
  Result<std::shared_ptr<const CompiledGrammar>> compile(const ConstraintSpec& spec);

  const std::shared_ptr<const TokenVocabulary>& vocab() const { return vocab_; }
  size_t hits() const;
  size_t misses() const;
  size_t size() const;

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const CompiledGrammar> grammar;
  };

  std::shared_ptr<const TokenVocabulary> vocab_;
  size_t capacity_;
  GrammarLimits limits_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<uint64_t, std::list<Entry>::iterator> by_hash_;
  size_t hits_ = 0, misses_ = 0;
};

// The grammar alone (no vocabulary), for tests and tools.
Result<std::shared_ptr<const Grammar>> compile_constraint(const ConstraintSpec& spec, const GrammarLimits& limits = {});

}  // namespace di::engine::constrain
