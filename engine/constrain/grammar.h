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
  // Where the construct starts in its source (a regex: the code point offset of a quantified
  // atom), or kNoOrigin. Only for errors: a compile over its work budget names the repetition
  // most of the automaton came from.
  static constexpr uint32_t kNoOrigin = UINT32_MAX;
  uint32_t origin = kNoOrigin;
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
// `e` tagged with a source offset (see Expr::origin); shared constants are copied, never changed.
ExprPtr with_origin(ExprPtr e, uint32_t origin);

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
  // Work units spent determinizing the rules (see GrammarLimits::max_compile_work).
  uint64_t compile_work() const { return compile_work_; }

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
  uint64_t compile_work_ = 0;
};

// Limits that keep a hostile schema or grammar from exhausting memory or CPU at compile time.
// A server compiles what clients send (response_format, strict tools), so every limit is
// refused with kLimit before the work is done, not after.
struct GrammarLimits {
  uint32_t max_nfa_nodes_per_rule = 400000;
  uint32_t max_nodes = 1000000;
  // Work budget of the subset construction, over all rules, in work units: one unit is one
  // automaton edge examined (an NFA byte/call edge per byte class of a DFA state, an epsilon
  // edge in a closure, a node or edge of the dead-end and left-recursion passes). Units do not
  // depend on the machine; one core at -O2 does roughly 10-100 M per second. The state limits
  // alone let `(\d+(\.\d*)?|[^\s"\\]{069})*.x` (173k states, 677 M units) take seconds;
  // the largest schema of the JSON Schema corpora in tests/ needs 2.7 M. 0 = unlimited.
  // Configured per engine by the di_options key constraint_max_compile_work.
  uint64_t max_compile_work = kDefaultCompileWork;
  static constexpr uint64_t kDefaultCompileWork = 20'000'000;
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

  // Uses the limits given to set_limits (the defaults unless set).
  Result<std::shared_ptr<const Grammar>> build(uint32_t root) const { return build(root, limits_); }
  Result<std::shared_ptr<const Grammar>> build(uint32_t root, const GrammarLimits& limits) const;
  void set_limits(const GrammarLimits& limits) { limits_ = limits; }

 private:
  std::vector<std::string> names_;
  std::vector<ExprPtr> bodies_;
  GrammarLimits limits_;
};

}  // namespace di::engine::constrain
