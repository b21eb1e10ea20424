// EBNF compiler: recursive descent over the text; classes and /regex/ terminals go through the
// regex compiler so both syntaxes mean the same thing, %json through the JSON Schema compiler
// (its rules join the same grammar), special tokens through their reserved bytes.
#include "engine/constrain/ebnf_compiler.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/escape.h"
#include "base/hex.h"
#include "engine/constrain/char_class.h"
#include "engine/constrain/json_raw_string.h"
#include "engine/constrain/json_schema_compiler.h"
#include "engine/constrain/json_schema_merge.h"
#include "engine/constrain/regex_compiler.h"
#include "engine/constrain/special_tokens.h"

namespace di::engine::constrain {
namespace {

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9') || c == '-'; }

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += char(cp);
  } else if (cp < 0x800) {
    s += char(0xC0 | (cp >> 6));
    s += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += char(0xE0 | (cp >> 12));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  } else {
    s += char(0xF0 | (cp >> 18));
    s += char(0x80 | ((cp >> 12) & 0x3F));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  }
  return s;
}

class EbnfParser {
 public:
  EbnfParser(std::string_view text, const std::vector<di::request::EmbeddedSchema>& schemas, const GrammarLimits& limits)
      : t_(text), schemas_(schemas), roots_(schemas.size()), rules_(schemas.size()) {
    b_.set_limits(limits);
  }

  Result<std::shared_ptr<const Grammar>> parse() {
    skip();
    if (at_end()) return error("the grammar is empty");
    while (!at_end()) {
      size_t at = pos_;
      std::string name = read_name();
      if (name.empty()) return error("expected a rule name");
      skip();
      if (t_.substr(pos_, 3) != "::=") return error("expected '::=' after '" + name + "'");
      pos_ += 3;
      uint32_t r = rule(name);
      if (b_.defined(r)) {
        pos_ = at;
        return error("rule '" + name + "' is defined twice");
      }
      DI_ASSIGN_OR_RETURN(ExprPtr body, parse_alt());
      b_.define(r, body);
      skip();
    }
    auto root = ids_.find("root");
    if (root == ids_.end()) return Status::invalid_argument("ebnf: no rule named 'root'");
    for (auto& [name, id] : ids_) {
      if (!b_.defined(id)) return Status::invalid_argument("ebnf: rule '" + name + "' is used but never defined");
    }
    DI_ASSIGN_OR_RETURN(std::shared_ptr<const Grammar> g, b_.build(root->second));
    const GrammarNode& start = g->node(g->root_start());
    if (!start.final && start.num_byte_edges == 0 && start.num_call_edges == 0) {
      return Status::invalid_argument("ebnf: rule 'root' matches no string (every path recurses forever)");
    }
    return g;
  }

 private:
  bool at_end() const { return pos_ >= t_.size(); }
  char peek(size_t k = 0) const { return pos_ + k < t_.size() ? t_[pos_ + k] : '\0'; }
  Status error(const std::string& what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < t_.size(); ++i) {
      if (t_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return Status::invalid_argument("ebnf: line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + what);
  }
  void skip() {
    while (!at_end()) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        while (!at_end() && peek() != '\n') ++pos_;
      } else {
        break;
      }
    }
  }
  std::string read_name() {
    size_t start = pos_;
    if (!name_start(peek())) return "";
    while (name_char(peek())) ++pos_;
    return std::string(t_.substr(start, pos_ - start));
  }
  uint32_t rule(const std::string& name) {
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    uint32_t id = b_.declare(name);
    ids_.emplace(name, id);
    return id;
  }
  // True when the next thing is "NAME ::=", the start of the next rule.
  bool at_rule_start() {
    size_t save = pos_;
    std::string name = read_name();
    skip();
    bool yes = !name.empty() && t_.substr(pos_, 3) == "::=";
    pos_ = save;
    return yes;
  }

  Result<ExprPtr> parse_alt() {
    std::vector<ExprPtr> alts;
    for (;;) {
      DI_ASSIGN_OR_RETURN(ExprPtr s, parse_seq());
      alts.push_back(s);
      skip();
      if (peek() != '|') break;
      ++pos_;
    }
    return alt(std::move(alts));
  }

  Result<ExprPtr> parse_seq() {
    std::vector<ExprPtr> items;
    for (;;) {
      skip();
      if (at_end() || peek() == '|' || peek() == ')' || at_rule_start()) break;
      DI_ASSIGN_OR_RETURN(ExprPtr p, parse_primary());
      for (int stacked = 0;; ++stacked) {
        char c = peek();
        if (nesting_ + stacked > kMaxNesting && (c == '*' || c == '+' || c == '?' || c == '{'))
          return Status::limit("grammar: groups and repetitions nested deeper than " +
                               std::to_string(kMaxNesting) + " (at byte " + std::to_string(pos_) + ")");
        if (c == '*') {
          ++pos_;
          p = star(p);
        } else if (c == '+') {
          ++pos_;
          p = plus(p);
        } else if (c == '?') {
          ++pos_;
          p = opt(p);
        } else if (c == '{') {
          ++pos_;
          DI_ASSIGN_OR_RETURN(uint32_t lo, read_int());
          uint32_t hi = lo;
          if (peek() == ',') {
            ++pos_;
            if (peek() == '}') {
              hi = Expr::kUnbounded;
            } else {
              DI_ASSIGN_OR_RETURN(hi, read_int());
            }
          }
          if (peek() != '}') return error("expected '}' closing a repetition");
          ++pos_;
          if (hi < lo) return error("repetition {" + std::to_string(lo) + "," + std::to_string(hi) + "} out of order");
          p = repeat(p, lo, hi);
        } else {
          break;
        }
      }
      items.push_back(p);
    }
    return seq(std::move(items));
  }

  Result<uint32_t> read_int() {
    size_t start = pos_;
    uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      v = std::min<uint64_t>(v * 10 + uint64_t(peek() - '0'), 1000000);
      ++pos_;
    }
    if (pos_ == start) return error("expected a number");
    return static_cast<uint32_t>(v);
  }

  Result<uint32_t> read_hex(int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) {
      char c = peek();
      const int d = hex_digit_value(static_cast<unsigned char>(c));
      if (d < 0) return error("bad hex digit in an escape");
      v = v * 16 + uint32_t(d);
      ++pos_;
    }
    return v;
  }

  Result<ExprPtr> parse_literal(char quote) {
    DI_ASSIGN_OR_RETURN(std::string s, read_string(quote));
    return literal(s);
  }

  Result<std::string> read_string(char quote) {
    ++pos_;
    std::string s;
    for (;;) {
      if (at_end() || peek() == '\n') return error("unterminated string literal");
      char c = t_[pos_++];
      if (c == quote) break;
      if (c != '\\') {
        s += c;
        continue;
      }
      char e = t_[pos_++];
      if (std::optional<char> c = single_char_escape(e, "nrt\\\"'[]")) {
        s += *c;
        continue;
      }
      switch (e) {
        case 'x': {
          DI_ASSIGN_OR_RETURN(uint32_t v, read_hex(2));
          s += utf8(v);
          break;
        }
        case 'u': {
          DI_ASSIGN_OR_RETURN(uint32_t v, read_hex(4));
          s += utf8(v);
          break;
        }
        case 'U': {
          DI_ASSIGN_OR_RETURN(uint32_t v, read_hex(8));
          if (v > 0x10FFFF) return error("escape beyond U+10FFFF");
          s += utf8(v);
          break;
        }
        default: return error(std::string("unknown escape '\\") + e + "'");
      }
    }
    return s;
  }

  // <[ID]>: the special token's reserved bytes.
  Result<ExprPtr> parse_special_token() {
    pos_ += 2;
    DI_ASSIGN_OR_RETURN(uint32_t id, read_id());
    if (t_.substr(pos_, 2) != "]>") return error("expected ']>' closing a special token");
    pos_ += 2;
    return literal(special_token_bytes(id));
  }

  Result<uint32_t> read_id() {
    size_t start = pos_;
    uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      v = v * 10 + uint64_t(peek() - '0');
      if (v > UINT32_MAX) return error("token id beyond 2^32 - 1");
      ++pos_;
    }
    if (pos_ == start) return error("expected a token id");
    return static_cast<uint32_t>(v);
  }

  // %json(I[, "/pointer"]) and %raw_string(I, "/pointer").
  Result<ExprPtr> parse_schema_ref() {
    const size_t at = pos_;
    ++pos_;
    const std::string fn = read_name();
    if (fn != "json" && fn != "raw_string") return error("expected %json or %raw_string");
    skip();
    if (peek() != '(') return error("expected '(' after %" + fn);
    ++pos_;
    skip();
    DI_ASSIGN_OR_RETURN(uint32_t index, read_id());
    std::string pointer;
    skip();
    if (peek() == ',') {
      ++pos_;
      skip();
      if (peek() != '"' && peek() != '\'') return error("expected a JSON Pointer string");
      DI_ASSIGN_OR_RETURN(pointer, read_string(peek()));
      skip();
    }
    if (peek() != ')') return error("expected ')' closing %" + fn);
    ++pos_;
    if (index >= schemas_.size()) {
      pos_ = at;
      return error("%" + fn + "(" + std::to_string(index) + "): the grammar embeds " + std::to_string(schemas_.size()) +
                   " schema(s)");
    }
    if (!pointer.empty() && pointer[0] != '/') {
      pos_ = at;
      return error("%" + fn + ": '" + pointer + "' is not a JSON Pointer (it starts with '/', or is empty)");
    }
    DI_ASSIGN_OR_RETURN(JsonSchemaRules * rules, schema_rules(index));
    const std::string ref = "#" + pointer;
    DI_ASSIGN_OR_RETURN(const ojson* part, resolve_ref(*roots_[index], ref, ref));
    if (fn == "raw_string") return raw_string_expr(*rules, *part, ref);
    DI_ASSIGN_OR_RETURN(uint32_t r, rules->rule(*part, ref));
    return rule_ref(r);
  }

  // One JsonSchemaRules per embedded schema, on first use; its rules go into this grammar.
  Result<JsonSchemaRules*> schema_rules(uint32_t index) {
    if (rules_[index]) return rules_[index].get();
    const std::string& text = schemas_[index].source;
    auto root = std::make_unique<ojson>(ojson::parse(text.begin(), text.end(), nullptr, false));
    if (root->is_discarded())
      return Status::parse("ebnf: embedded schema " + std::to_string(index) + " is not valid JSON");
    roots_[index] = std::move(root);
    rules_[index] = std::make_unique<JsonSchemaRules>(b_, *roots_[index], schemas_[index].json);
    return rules_[index].get();
  }

  // [..] and /../ are handed to the regex compiler (whole match).
  Result<ExprPtr> parse_regex_terminal(char open, char close) {
    size_t start = pos_;
    ++pos_;
    while (!at_end() && peek() != close) {
      if (peek() == '\\') ++pos_;
      if (peek() == '\n') return error("unterminated terminal");
      ++pos_;
    }
    if (at_end()) return error(std::string("missing '") + close + "'");
    ++pos_;
    std::string_view pattern = open == '[' ? t_.substr(start, pos_ - start) : t_.substr(start + 1, pos_ - start - 2);
    auto e = regex_to_expr(pattern, {});
    if (!e.is_ok()) {
      size_t save = pos_;
      pos_ = start;
      Status st = error(e.status().message());
      pos_ = save;
      return Status(e.status().code(), st.message());
    }
    return *e;
  }

  Result<ExprPtr> parse_primary() {
    char c = peek();
    if (c == '"' || c == '\'') return parse_literal(c);
    if (c == '[') return parse_regex_terminal('[', ']');
    if (c == '/') return parse_regex_terminal('/', '/');
    if (c == '<' && peek(1) == '[') return parse_special_token();
    if (c == '%') return parse_schema_ref();
    if (c == '.') {
      ++pos_;
      return CharClass::any().to_utf8();
    }
    if (c == '(') {
      // Each group is a level of parser recursion and of every later pass over the tree.
      if (++nesting_ > kMaxNesting)
        return Status::limit("grammar: groups nested deeper than " + std::to_string(kMaxNesting) +
                             " (at byte " + std::to_string(pos_) + ")");
      ++pos_;
      DI_ASSIGN_OR_RETURN(ExprPtr inner, parse_alt());
      --nesting_;
      skip();
      if (peek() != ')') return error("expected ')'");
      ++pos_;
      return inner;
    }
    std::string name = read_name();
    if (name.empty()) return error(std::string("unexpected '") + c + "'");
    return rule_ref(rule(name));
  }

  static constexpr int kMaxNesting = 64;
  std::string_view t_;
  size_t pos_ = 0;
  int nesting_ = 0;  // open groups around pos_
  GrammarBuilder b_;
  std::map<std::string, uint32_t> ids_;
  const std::vector<di::request::EmbeddedSchema>& schemas_;
  std::vector<std::unique_ptr<ojson>> roots_;  // parsed schemas_, anchoring their rules' $refs
  std::vector<std::unique_ptr<JsonSchemaRules>> rules_;
};

}  // namespace

Result<std::shared_ptr<const Grammar>> compile_ebnf(std::string_view text, const GrammarLimits& limits) {
  return compile_ebnf(text, {}, limits);
}

Result<std::shared_ptr<const Grammar>> compile_ebnf(std::string_view text,
                                                    const std::vector<di::request::EmbeddedSchema>& schemas,
                                                    const GrammarLimits& limits) {
  EbnfParser p(text, schemas, limits);
  auto g = p.parse();
  if (!g.is_ok() && g.status().message().rfind("ebnf:", 0) != 0) {
    return Status(g.status().code(), "ebnf: " + g.status().message());
  }
  return g;
}

}  // namespace di::engine::constrain
