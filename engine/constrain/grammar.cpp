// GrammarBuilder: lowers rule Exprs to a Thompson NFA, determinizes each rule over bytes and
// calls, prunes nodes that cannot reach a final node, and rejects left recursion. Must not know
// any source syntax; compilers hand it Exprs.
#include "engine/constrain/grammar.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace di::engine::constrain {

// ---- Expr constructors (with light simplification so compilers can compose freely) ---------------

ExprPtr nothing() {
  static const ExprPtr e = std::make_shared<Expr>(Expr{});
  return e;
}

ExprPtr empty() {
  static const ExprPtr e = [] {
    Expr x;
    x.kind = Expr::Kind::kEmpty;
    return std::make_shared<Expr>(std::move(x));
  }();
  return e;
}

ExprPtr bytes(std::vector<ByteRange> ranges) {
  if (ranges.empty()) return nothing();
  Expr x;
  x.kind = Expr::Kind::kBytes;
  x.ranges = std::move(ranges);
  return std::make_shared<Expr>(std::move(x));
}

ExprPtr byte_range(uint8_t lo, uint8_t hi) { return bytes({ByteRange{lo, hi}}); }

ExprPtr literal(std::string_view s) {
  std::vector<ExprPtr> items;
  items.reserve(s.size());
  for (char c : s) items.push_back(byte_range(uint8_t(c), uint8_t(c)));
  return seq(std::move(items));
}

namespace {

// What seq and alt share: nested nodes of the same kind are spliced in and the operation's
// identity (empty for seq, nothing for alt) drops out; no item left is the identity itself, one
// item is that item.
ExprPtr flattened(Expr::Kind kind, Expr::Kind identity, std::vector<ExprPtr> items) {
  std::vector<ExprPtr> flat;
  for (auto& it : items) {
    if (it->kind == identity) continue;
    if (it->kind == kind) {
      flat.insert(flat.end(), it->items.begin(), it->items.end());
    } else {
      flat.push_back(std::move(it));
    }
  }
  if (flat.empty()) return identity == Expr::Kind::kEmpty ? empty() : nothing();
  if (flat.size() == 1) return flat[0];
  Expr x;
  x.kind = kind;
  x.items = std::move(flat);
  return std::make_shared<Expr>(std::move(x));
}

}  // namespace

ExprPtr seq(std::vector<ExprPtr> items) {
  // One part that matches nothing makes the whole sequence match nothing.
  for (const auto& it : items)
    if (it->kind == Expr::Kind::kNothing) return nothing();
  return flattened(Expr::Kind::kSeq, Expr::Kind::kEmpty, std::move(items));
}

ExprPtr alt(std::vector<ExprPtr> items) {
  return flattened(Expr::Kind::kAlt, Expr::Kind::kNothing, std::move(items));
}

ExprPtr repeat(ExprPtr e, uint32_t min, uint32_t max) {
  if (max != Expr::kUnbounded && max < min) return nothing();
  if (max == 0) return empty();
  if (e->kind == Expr::Kind::kEmpty) return empty();
  if (e->kind == Expr::Kind::kNothing) return min == 0 ? empty() : nothing();
  if (min == 1 && max == 1) return e;
  // A repeat of a repeat: lowering builds the body once per required copy plus once for the
  // loop, so stacked quantifiers ("a+++++", legal in GBNF) doubled the automaton per level and
  // compiles ran for minutes. Collapse the nestings whose language is again one repeat.
  if (e->kind == Expr::Kind::kRepeat) {
    const ExprPtr& body = e->items[0];
    const uint32_t a = e->min, b = e->max;
    if (a == 0 && b == Expr::kUnbounded) return e;                                   // (x*){m,n} = x*
    if (b == Expr::kUnbounded && max == Expr::kUnbounded) {
      if (min >= 1) return repeat(body, a <= UINT32_MAX / min ? a * min : UINT32_MAX - 1, Expr::kUnbounded);  // (x{a,}){m,} = x{am,}
      if (a <= 1) return star(body);                                                 // (x+)* = x*
    }
    if (a == 0 && b == 1 && max == Expr::kUnbounded) return star(body);              // (x?){m,} = x*
    if (b == Expr::kUnbounded && a <= 1 && min == 0 && max == 1) return star(body);  // (x+)? = x*
  }
  Expr x;
  x.kind = Expr::Kind::kRepeat;
  x.items = {std::move(e)};
  x.min = min;
  x.max = max;
  return std::make_shared<Expr>(std::move(x));
}

ExprPtr rule_ref(uint32_t rule) {
  Expr x;
  x.kind = Expr::Kind::kRule;
  x.rule = rule;
  return std::make_shared<Expr>(std::move(x));
}

ExprPtr with_origin(ExprPtr e, uint32_t origin) {
  if (e->kind == Expr::Kind::kNothing || e->kind == Expr::Kind::kEmpty || e->origin == origin) return e;
  auto x = std::make_shared<Expr>(*e);
  x->origin = origin;
  return x;
}

// ---- Builder ------------------------------------------------------------------------------------

uint32_t GrammarBuilder::declare(std::string name) {
  names_.push_back(std::move(name));
  bodies_.push_back(nullptr);
  return static_cast<uint32_t>(names_.size() - 1);
}

void GrammarBuilder::define(uint32_t rule, ExprPtr body) { bodies_[rule] = std::move(body); }

namespace {

struct NfaNode {
  std::vector<uint32_t> eps;
  std::vector<std::pair<ByteRange, uint32_t>> bytes;
  std::vector<std::pair<uint32_t, uint32_t>> calls;  // (rule, target)
};

class Nfa {
 public:
  explicit Nfa(uint32_t limit) : limit_(limit) {}
  uint32_t add() {
    nodes_.emplace_back();
    origins_.push_back(origin_);
    return static_cast<uint32_t>(nodes_.size() - 1);
  }
  // The source offset of the innermost tagged construct a node was built for (Expr::origin).
  uint32_t origin(uint32_t node) const { return origins_[node]; }
  bool over_limit() const { return nodes_.size() > limit_; }

  // Adds paths from `from` to `to` matching e. Returns false when the node limit is exceeded.
  bool build(const Expr& e, uint32_t from, uint32_t to) {
    if (over_limit()) return false;
    if (e.origin == Expr::kNoOrigin) return build_inner(e, from, to);
    const uint32_t outer = origin_;
    origin_ = e.origin;
    const bool ok = build_inner(e, from, to);
    origin_ = outer;
    return ok;
  }

  // Sorted eps-closure of a set of nodes; adds the edges it follows to *work.
  std::vector<uint32_t> closure(std::vector<uint32_t> set, uint64_t* work) {
    std::vector<uint32_t> stack = set;
    if (mark_.size() < nodes_.size()) mark_.resize(nodes_.size(), 0);
    ++stamp_;
    for (uint32_t s : set) mark_[s] = stamp_;
    uint64_t w = set.size();
    while (!stack.empty()) {
      uint32_t n = stack.back();
      stack.pop_back();
      w += nodes_[n].eps.size();
      for (uint32_t t : nodes_[n].eps) {
        if (mark_[t] != stamp_) {
          mark_[t] = stamp_;
          set.push_back(t);
          stack.push_back(t);
        }
      }
    }
    *work += w;
    std::sort(set.begin(), set.end());
    return set;
  }

  const NfaNode& node(uint32_t i) const { return nodes_[i]; }

 private:
  bool build_inner(const Expr& e, uint32_t from, uint32_t to) {
    switch (e.kind) {
      case Expr::Kind::kNothing: return true;
      case Expr::Kind::kEmpty: nodes_[from].eps.push_back(to); return true;
      case Expr::Kind::kBytes:
        for (const ByteRange& r : e.ranges) nodes_[from].bytes.push_back({r, to});
        return true;
      case Expr::Kind::kRule: nodes_[from].calls.push_back({e.rule, to}); return true;
      case Expr::Kind::kSeq: {
        uint32_t cur = from;
        for (size_t i = 0; i < e.items.size(); ++i) {
          uint32_t next = i + 1 == e.items.size() ? to : add();
          if (!build(*e.items[i], cur, next)) return false;
          cur = next;
        }
        return true;
      }
      case Expr::Kind::kAlt:
        for (const ExprPtr& it : e.items) {
          if (!build(*it, from, to)) return false;
        }
        return true;
      case Expr::Kind::kRepeat: {
        const Expr& item = *e.items[0];
        uint32_t cur = from;
        for (uint32_t i = 0; i < e.min; ++i) {
          uint32_t next = add();
          if (!build(item, cur, next)) return false;
          cur = next;
        }
        if (e.max == Expr::kUnbounded) {
          uint32_t loop = add();
          nodes_[cur].eps.push_back(loop);
          nodes_[loop].eps.push_back(to);
          return build(item, loop, loop);
        }
        for (uint32_t i = e.min; i < e.max; ++i) {
          nodes_[cur].eps.push_back(to);
          uint32_t next = add();
          if (!build(item, cur, next)) return false;
          cur = next;
        }
        nodes_[cur].eps.push_back(to);
        return true;
      }
    }
    return true;
  }

  std::vector<NfaNode> nodes_;
  std::vector<uint32_t> origins_;
  uint32_t origin_ = Expr::kNoOrigin;
  std::vector<uint32_t> mark_;
  uint32_t stamp_ = 0;
  uint32_t limit_;
};

struct DfaNode {
  std::vector<ByteEdge> bytes;  // targets are local DFA ids
  std::vector<CallEdge> calls;  // targets are local DFA ids
  bool final = false;
};

struct VecHash {
  size_t operator()(const std::vector<uint32_t>& v) const {
    size_t h = 1469598103934665603ull;
    for (uint32_t x : v) h = (h ^ x) * 1099511628211ull;
    return h;
  }
};

// The refusal of a rule over the work budget: names the budget and, where the compiler tagged
// its Exprs with source offsets, the construct most NFA nodes of the state being built came from
// (a counted repetition inside a loop is the usual cause).
Status over_budget(const Nfa& nfa, const std::vector<uint32_t>& set, uint64_t budget, size_t states) {
  std::unordered_map<uint32_t, uint32_t> count;
  for (uint32_t n : set) {
    if (nfa.origin(n) != Expr::kNoOrigin) ++count[nfa.origin(n)];
  }
  uint32_t best = Expr::kNoOrigin, best_count = 0;
  for (auto& [o, c] : count) {
    if (c > best_count || (c == best_count && o < best)) best = o, best_count = c;
  }
  std::string msg = "grammar: over the compile work budget of " + std::to_string(budget) +
                    " units (max_compile_work) after " + std::to_string(states) + " automaton states";
  if (best != Expr::kNoOrigin) msg += "; the repetition at offset " + std::to_string(best) + " multiplies the states";
  return Status::limit(msg);
}

// Subset construction over bytes and calls. Calls are letters of the alphabet: calling R from a
// set of nodes continues at the union of their targets, which preserves the rule's language.
// Adds its work units to *work and stops with kLimit once *work passes `budget`.
Status determinize(Nfa& nfa, uint32_t start, uint32_t accept, uint32_t limit, uint64_t budget, uint64_t* work,
                   std::vector<DfaNode>* out) {
  std::unordered_map<std::vector<uint32_t>, uint32_t, VecHash> ids;
  std::vector<std::vector<uint32_t>> sets;
  auto intern = [&](std::vector<uint32_t> s) {
    auto it = ids.find(s);
    if (it != ids.end()) return it->second;
    uint32_t id = static_cast<uint32_t>(sets.size());
    ids.emplace(s, id);
    sets.push_back(std::move(s));
    return id;
  };
  intern(nfa.closure({start}, work));
  for (uint32_t d = 0; d < sets.size(); ++d) {
    if (sets.size() > limit) return Status::limit("grammar: a rule needs more than " + std::to_string(limit) + " automaton states");
    DfaNode node;
    std::vector<uint16_t> cuts = {0, 256};
    std::map<uint32_t, std::vector<uint32_t>> calls;
    uint64_t set_edges = sets[d].size();  // what one pass over the set's byte edges examines
    for (uint32_t n : sets[d]) {
      const NfaNode& nn = nfa.node(n);
      set_edges += nn.bytes.size();
      *work += 1 + nn.bytes.size() + nn.calls.size();
      if (n == accept) node.final = true;
      for (auto& [r, t] : nn.bytes) {
        cuts.push_back(r.lo);
        cuts.push_back(uint16_t(r.hi + 1));
      }
      for (auto& [rule, t] : nn.calls) calls[rule].push_back(t);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      // Checked per byte class: one state over a large set can cost 256 passes over it.
      if (*work > budget) return over_budget(nfa, sets[d], budget, sets.size());
      *work += set_edges;
      uint16_t lo = cuts[i], hi = uint16_t(cuts[i + 1] - 1);
      std::vector<uint32_t> targets;
      for (uint32_t n : sets[d]) {
        for (auto& [r, t] : nfa.node(n).bytes) {
          if (r.lo <= lo && hi <= r.hi) targets.push_back(t);
        }
      }
      if (targets.empty()) continue;
      std::sort(targets.begin(), targets.end());
      targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
      uint32_t t = intern(nfa.closure(std::move(targets), work));
      if (!node.bytes.empty() && node.bytes.back().target == t && node.bytes.back().hi + 1 == lo) {
        node.bytes.back().hi = uint8_t(hi);
      } else {
        node.bytes.push_back(ByteEdge{uint8_t(lo), uint8_t(hi), t});
      }
    }
    for (auto& [rule, targets] : calls) {
      std::sort(targets.begin(), targets.end());
      targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
      node.calls.push_back(CallEdge{rule, intern(nfa.closure(targets, work))});
    }
    out->push_back(std::move(node));
    if (*work > budget) return over_budget(nfa, sets[d], budget, sets.size());
  }
  return Status::ok();
}

}  // namespace

Result<std::shared_ptr<const Grammar>> GrammarBuilder::build(uint32_t root, const GrammarLimits& limits) const {
  const uint32_t num_rules = static_cast<uint32_t>(names_.size());
  if (root >= num_rules) return Status::invalid_argument("grammar: root rule out of range");
  std::vector<std::vector<DfaNode>> dfas(num_rules);
  size_t total = 0;
  uint64_t work = 0;
  const uint64_t budget = limits.max_compile_work == 0 ? UINT64_MAX : limits.max_compile_work;
  for (uint32_t r = 0; r < num_rules; ++r) {
    if (!bodies_[r]) return Status::invalid_argument("grammar: rule '" + names_[r] + "' is used but never defined");
    Nfa nfa(limits.max_nfa_nodes_per_rule);
    uint32_t s = nfa.add(), a = nfa.add();
    if (!nfa.build(*bodies_[r], s, a) || nfa.over_limit()) {
      return Status::limit("grammar: rule '" + names_[r] + "' is too large (over " +
                           std::to_string(limits.max_nfa_nodes_per_rule) + " states; a repetition bound too high?)");
    }
    DI_RETURN_IF_ERROR(std::move(determinize(nfa, s, a, limits.max_nfa_nodes_per_rule, budget, &work, &dfas[r])).with_context("rule '" + names_[r] + "'"));
    total += dfas[r].size();
    if (total > limits.max_nodes) return Status::limit("grammar: more than " + std::to_string(limits.max_nodes) + " automaton states");
  }

  // Live nodes can reach a final node through bytes and calls of productive rules; everything
  // else is a dead end the matcher must never enter.
  // One backward search over all rules (Horn clauses, linear in the edges): a node is live when
  // final, or when a byte edge leads to a live node, or when a call edge's continuation is live
  // AND its callee is productive (its start is live). Re-running a per-rule fixpoint until no rule
  // changed was quadratic in grammars of many nested rules.
  std::vector<uint32_t> base(num_rules + 1, 0);
  for (uint32_t r = 0; r < num_rules; ++r) base[r + 1] = base[r] + static_cast<uint32_t>(dfas[r].size());
  const uint32_t num_nodes = base[num_rules];
  struct Call {
    uint32_t from, rule;
  };
  std::vector<uint32_t> byte_first(num_nodes + 1, 0), call_first(num_nodes + 1, 0);
  for (uint32_t r = 0; r < num_rules; ++r) {
    for (const DfaNode& d : dfas[r]) {
      for (auto& e : d.bytes) ++byte_first[base[r] + e.target + 1];
      for (auto& c : d.calls) ++call_first[base[r] + c.target + 1];
    }
  }
  for (uint32_t n = 0; n < num_nodes; ++n) byte_first[n + 1] += byte_first[n], call_first[n + 1] += call_first[n];
  std::vector<uint32_t> byte_from(byte_first.back());
  std::vector<Call> calls_into(call_first.back());
  std::vector<std::vector<uint32_t>> calls_of(num_rules);  // indices into calls_into, by callee
  {
    std::vector<uint32_t> bf(byte_first.begin(), byte_first.end() - 1), cf(call_first.begin(), call_first.end() - 1);
    for (uint32_t r = 0; r < num_rules; ++r) {
      for (uint32_t n = 0; n < dfas[r].size(); ++n) {
        for (auto& e : dfas[r][n].bytes) byte_from[bf[base[r] + e.target]++] = base[r] + n;
        for (auto& c : dfas[r][n].calls) {
          const uint32_t i = cf[base[r] + c.target]++;
          calls_into[i] = Call{base[r] + n, c.rule};
          calls_of[c.rule].push_back(i);
        }
      }
    }
  }
  work += num_nodes + byte_from.size() + 2 * calls_into.size();
  std::vector<char> alive(num_nodes, 0);
  std::vector<uint8_t> met(calls_into.size(), 0);  // conditions met: continuation live, callee productive
  std::vector<char> productive(num_rules, 0);
  std::vector<uint32_t> stack;
  auto mark = [&](uint32_t n) {
    if (!alive[n]) alive[n] = 1, stack.push_back(n);
  };
  auto meet = [&](uint32_t call) {
    if (++met[call] == 2) mark(calls_into[call].from);
  };
  for (uint32_t r = 0; r < num_rules; ++r) {
    for (uint32_t n = 0; n < dfas[r].size(); ++n) {
      if (dfas[r][n].final) mark(base[r] + n);
    }
  }
  std::vector<uint32_t> rule_of_start(num_nodes, UINT32_MAX);
  for (uint32_t r = 0; r < num_rules; ++r) {
    if (base[r] < base[r + 1]) rule_of_start[base[r]] = r;
  }
  while (!stack.empty()) {
    const uint32_t n = stack.back();
    stack.pop_back();
    for (uint32_t i = byte_first[n]; i < byte_first[n + 1]; ++i) mark(byte_from[i]);
    for (uint32_t i = call_first[n]; i < call_first[n + 1]; ++i) meet(i);
    if (const uint32_t r = rule_of_start[n]; r != UINT32_MAX && !productive[r]) {
      productive[r] = 1;
      for (uint32_t i : calls_of[r]) meet(i);
    }
  }
  std::vector<std::vector<char>> live(num_rules);
  for (uint32_t r = 0; r < num_rules; ++r) live[r].assign(alive.begin() + base[r], alive.begin() + base[r + 1]);

  // Emit live nodes with global ids.
  auto g = std::make_shared<Grammar>();
  std::vector<std::vector<uint32_t>> gid(num_rules);
  uint32_t next = 0;
  for (uint32_t r = 0; r < num_rules; ++r) {
    gid[r].assign(dfas[r].size(), UINT32_MAX);
    for (size_t n = 0; n < dfas[r].size(); ++n) {
      if (live[r][n] || n == 0) gid[r][n] = next++;
    }
  }
  g->nodes_.resize(next);
  for (uint32_t r = 0; r < num_rules; ++r) {
    g->rules_.push_back(GrammarRule{names_[r], gid[r][0]});
    for (size_t n = 0; n < dfas[r].size(); ++n) {
      if (gid[r][n] == UINT32_MAX) continue;
      GrammarNode& out = g->nodes_[gid[r][n]];
      const DfaNode& d = dfas[r][n];
      out.final = d.final;
      out.first_byte_edge = static_cast<uint32_t>(g->byte_edges_.size());
      for (auto& e : d.bytes) {
        if (live[r][e.target]) g->byte_edges_.push_back(ByteEdge{e.lo, e.hi, gid[r][e.target]});
      }
      out.num_byte_edges = static_cast<uint32_t>(g->byte_edges_.size()) - out.first_byte_edge;
      out.first_call_edge = static_cast<uint32_t>(g->call_edges_.size());
      for (auto& c : d.calls) {
        if (productive[c.rule] && live[r][c.target]) g->call_edges_.push_back(CallEdge{c.rule, gid[r][c.target]});
      }
      out.num_call_edges = static_cast<uint32_t>(g->call_edges_.size()) - out.first_call_edge;
    }
  }
  g->root_ = root;
  g->matches_nothing_ = !productive[root];

  // Left recursion: a rule that can call itself before consuming a byte would grow the stack
  // forever. Nullable rules are the ones whose start reaches a final node without bytes.
  std::vector<char> nullable(num_rules, 0);
  // `seen` is stamped per search, not cleared: a fresh vector over all nodes per rule and round
  // made this quadratic in grammars of many rules.
  std::vector<uint32_t> seen(g->nodes_.size(), 0);
  uint32_t seen_stamp = 0;
  auto no_byte_reach = [&](uint32_t r, auto&& on_node) {
    std::vector<uint32_t> stack = {g->rules_[r].start};
    ++seen_stamp;
    seen[stack[0]] = seen_stamp;
    while (!stack.empty()) {
      uint32_t n = stack.back();
      stack.pop_back();
      const GrammarNode& gn = g->nodes_[n];
      work += 1 + gn.num_call_edges;
      on_node(gn);
      const CallEdge* ce = g->call_edges(gn);
      for (uint32_t i = 0; i < gn.num_call_edges; ++i) {
        if (nullable[ce[i].rule] && seen[ce[i].target] != seen_stamp) {
          seen[ce[i].target] = seen_stamp;
          stack.push_back(ce[i].target);
        }
      }
    }
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t r = 0; r < num_rules; ++r) {
      if (nullable[r]) continue;
      bool fin = false;
      no_byte_reach(r, [&](const GrammarNode& gn) { fin = fin || gn.final; });
      if (fin) nullable[r] = changed = 1;
    }
    if (work > budget) {
      return Status::limit("grammar: over the compile work budget of " + std::to_string(budget) +
                           " units (max_compile_work) while checking for left recursion");
    }
  }
  std::vector<std::vector<uint32_t>> left_calls(num_rules);
  for (uint32_t r = 0; r < num_rules; ++r) {
    no_byte_reach(r, [&](const GrammarNode& gn) {
      const CallEdge* ce = g->call_edges(gn);
      for (uint32_t i = 0; i < gn.num_call_edges; ++i) left_calls[r].push_back(ce[i].rule);
    });
  }
  std::vector<int> color(num_rules, 0);  // 0 new, 1 on path, 2 done
  for (uint32_t r0 = 0; r0 < num_rules; ++r0) {
    if (color[r0]) continue;
    std::vector<std::pair<uint32_t, size_t>> path = {{r0, 0}};
    color[r0] = 1;
    while (!path.empty()) {
      auto& [r, i] = path.back();
      if (i < left_calls[r].size()) {
        uint32_t c = left_calls[r][i++];
        if (color[c] == 1) return Status::invalid_argument("grammar: left recursion through rule '" + names_[c] + "'");
        if (color[c] == 0) {
          color[c] = 1;
          path.push_back({c, 0});
        }
      } else {
        color[r] = 2;
        path.pop_back();
      }
    }
  }
  if (work > budget) {
    return Status::limit("grammar: over the compile work budget of " + std::to_string(budget) +
                         " units (max_compile_work) while checking for left recursion");
  }
  g->compile_work_ = work;
  return std::shared_ptr<const Grammar>(std::move(g));
}

std::string Grammar::to_string() const {
  std::string s;
  for (size_t r = 0; r < rules_.size(); ++r) {
    s += "rule " + rules_[r].name + " start=" + std::to_string(rules_[r].start) + "\n";
  }
  for (size_t n = 0; n < nodes_.size(); ++n) {
    const GrammarNode& gn = nodes_[n];
    s += "  " + std::to_string(n) + (gn.final ? " final" : "") + ":";
    for (uint32_t i = 0; i < gn.num_byte_edges; ++i) {
      const ByteEdge& e = byte_edges(gn)[i];
      s += " [" + std::to_string(e.lo) + "-" + std::to_string(e.hi) + "]->" + std::to_string(e.target);
    }
    for (uint32_t i = 0; i < gn.num_call_edges; ++i) {
      const CallEdge& c = call_edges(gn)[i];
      s += " " + rules_[c.rule].name + "->" + std::to_string(c.target);
    }
    s += "\n";
  }
  return s;
}

}  // namespace di::engine::constrain
