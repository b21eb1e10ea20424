// Grammar: the one representation every constraint compiles to — rules whose bodies are byte-level
// automata with "call rule R, continue at node N" edges (a recursive transition network). Knows
// nothing of tokens, JSON or regex syntax; compilers build Exprs and GrammarBuilder lowers them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace di::engine::constrain {

// ---- Expressions: what the compilers (regex, EBNF, JSON Schema) produce -------------------------

struct ByteRange {
  uint8_t lo = 0;
  uint8_t hi = 0;
};

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  enum class Kind : uint8_t { kNothing, kEmpty, kBytes, kSeq, kAlt, kRepeat, kRule };
  static constexpr uint32_t kUnbounded = UINT32_MAX;

  Kind kind = Kind::kNothing;
  std::vector<ByteRange> ranges;  // kBytes: one byte in any of these ranges
  std::vector<ExprPtr> items;     // kSeq, kAlt; kRepeat: items[0]
  uint32_t min = 0;               // kRepeat
  uint32_t max = 0;               // kRepeat; kUnbounded for no upper bound
  uint32_t rule = 0;              // kRule: the rule id to call
};

ExprPtr nothing();  // matches no string at all
ExprPtr empty();    // matches the empty string
ExprPtr bytes(std::vector<ByteRange> ranges);
ExprPtr byte_range(uint8_t lo, uint8_t hi);
ExprPtr literal(std::string_view s);
ExprPtr seq(std::vector<ExprPtr> items);
ExprPtr alt(std::vector<ExprPtr> items);
ExprPtr repeat(ExprPtr e, uint32_t min, uint32_t max);
inline ExprPtr star(ExprPtr e) { return repeat(std::move(e), 0, Expr::kUnbounded); }
inline ExprPtr plus(ExprPtr e) { return repeat(std::move(e), 1, Expr::kUnbounded); }
inline ExprPtr opt(ExprPtr e) { return repeat(std::move(e), 0, 1); }
ExprPtr rule_ref(uint32_t rule);

// ---- The compiled automaton ---------------------------------------------------------------------

struct ByteEdge {
  uint8_t lo = 0;
  uint8_t hi = 0;
  uint32_t target = 0;
};

struct CallEdge {
  uint32_t rule = 0;    // callee
  uint32_t target = 0;  // where the caller continues after the callee returns
};

// A node is one position inside one rule. Rules are deterministic over bytes (at most one edge
// per byte), so nondeterminism comes only from calls and from a final node that also continues.
struct GrammarNode {
  uint32_t first_byte_edge = 0;
  uint32_t num_byte_edges = 0;
  uint32_t first_call_edge = 0;
  uint32_t num_call_edges = 0;
  bool final = false;  // the rule may return here
};

struct GrammarRule {
  std::string name;
  uint32_t start = 0;  // node id
};

class Grammar {
 public:
  const std::vector<GrammarNode>& nodes() const { return nodes_; }
  const GrammarNode& node(uint32_t id) const { return nodes_[id]; }
  const ByteEdge* byte_edges(const GrammarNode& n) const { return byte_edges_.data() + n.first_byte_edge; }
  const CallEdge* call_edges(const GrammarNode& n) const { return call_edges_.data() + n.first_call_edge; }
  const std::vector<GrammarRule>& rules() const { return rules_; }
  uint32_t root_rule() const { return root_; }
  uint32_t root_start() const { return rules_[root_].start; }
  // True when no string at all matches (e.g. the JSON Schema `false`, or a required property that
  // additionalProperties forbids): the start node is a dead end.
  bool matches_nothing() const { return matches_nothing_; }

  // The node reached from `node` by byte `b`, or UINT32_MAX.
  uint32_t next(uint32_t node, uint8_t b) const {
    const GrammarNode& n = nodes_[node];
    const ByteEdge* e = byte_edges(n);
    for (uint32_t i = 0; i < n.num_byte_edges; ++i) {
      if (b < e[i].lo) return UINT32_MAX;  // edges are sorted and disjoint
      if (b <= e[i].hi) return e[i].target;
    }
    return UINT32_MAX;
  }

  // Human-readable dump of the rules (for debugging and error messages).
  std::string to_string() const;

 private:
  friend class GrammarBuilder;
  std::vector<GrammarNode> nodes_;
  std::vector<ByteEdge> byte_edges_;
  std::vector<CallEdge> call_edges_;
  std::vector<GrammarRule> rules_;
  uint32_t root_ = 0;
  bool matches_nothing_ = false;
};

// Limits that keep a hostile schema or grammar from exhausting memory at compile time.
struct GrammarLimits {
  uint32_t max_nfa_nodes_per_rule = 400000;
  uint32_t max_nodes = 1000000;
};

// Collects rules as Exprs, then lowers each to a deterministic byte automaton (subset
// construction over bytes and calls). Rejects undefined rules and left recursion, which the
// matcher's stack machine cannot run.
class GrammarBuilder {
 public:
  uint32_t declare(std::string name);
  void define(uint32_t rule, ExprPtr body);
  bool defined(uint32_t rule) const { return rule < bodies_.size() && bodies_[rule] != nullptr; }
  const std::string& name(uint32_t rule) const { return names_[rule]; }
  uint32_t num_rules() const { return static_cast<uint32_t>(names_.size()); }

  Result<std::shared_ptr<const Grammar>> build(uint32_t root, const GrammarLimits& limits = {}) const;

 private:
  std::vector<std::string> names_;
  std::vector<ExprPtr> bodies_;
};

}  // namespace di::engine::constrain
