// Recursive descent in Jinja's precedence order: conditional expression, or, and, not,
// comparisons (== != < > <= >= in, not in), + -, ~, * / // %, **, unary - +, then primaries with
// their postfixes (.attr, [index or slice], (call)), filters (|) and tests (is). Nesting is
// bounded so a hostile template is an error, never a stack overflow.
#include "recipe/chat_template/parser.h"

#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <set>

namespace di::recipe::chat_template {
namespace {

constexpr int kMaxDepth = 200;

class Parser {
 public:
  explicit Parser(const std::vector<Token>& t) : t_(t) {}

  Result<Body> program() {
    std::string end;
    DI_ASSIGN_OR_RETURN(Body body, block({}, &end));
    return body;
  }

 private:
  const Token& peek(size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  const Token& next() { return t_[std::min(p_++, t_.size() - 1)]; }
  bool is_op(const char* op, size_t k = 0) const {
    return peek(k).kind == Token::Kind::kOperator && peek(k).text == op;
  }
  bool is_name(const char* n, size_t k = 0) const { return peek(k).kind == Token::Kind::kName && peek(k).text == n; }
  Status error(const std::string& what) const {
    return Status::invalid_argument("chat template: line " + std::to_string(peek().line) + ": " + what);
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Token::Kind::kEnd: return "the end of the template";
      case Token::Kind::kText: return "text";
      case Token::Kind::kCloseStatement: return "'%}'";
      case Token::Kind::kCloseExpression: return "'}}'";
      case Token::Kind::kString: return "a string";
      default: return "'" + t.text + "'";
    }
  }
  Status expect_op(const char* op) {
    if (!is_op(op)) return error(std::string("expected '") + op + "', got " + describe(peek()));
    ++p_;
    return Status::ok();
  }
  // `item` repeated and comma-separated (a trailing comma allowed) up to `close`, then `close`.
  Status comma_separated(const char* close, const std::function<Status()>& item) {
    while (!is_op(close)) {
      DI_RETURN_IF_ERROR(item());
      if (!is_op(",")) break;
      ++p_;
    }
    return expect_op(close);
  }
  // A list or dict literal from its opening bracket on: a `kind` node whose entries `entry`
  // reads into it, comma-separated up to `close`.
  Result<ExprPtr> collection(Expr::Kind kind, const char* close,
                             const std::function<Status(Expr&)>& entry) {
    ++p_;
    ExprPtr e = make(kind);
    DI_RETURN_IF_ERROR(comma_separated(close, [&] { return entry(*e); }));
    return e;
  }
  Status expect_close_statement() {
    if (peek().kind != Token::Kind::kCloseStatement) return error("expected '%}', got " + describe(peek()));
    ++p_;
    return Status::ok();
  }
  Result<std::string> expect_name() {
    if (peek().kind != Token::Kind::kName) return error("expected a name, got " + describe(peek()));
    return next().text;
  }

  // Statements until one of `ends` opens a tag ({% end... %}); *found names it (its tag is
  // consumed up to the keyword). With no ends, runs to the end of input.
  Result<Body> block(const std::set<std::string>& ends, std::string* found) {
    if (++depth_ > kMaxDepth) return error("blocks nest deeper than " + std::to_string(kMaxDepth));
    Body body;
    for (;;) {
      const Token& t = peek();
      if (t.kind == Token::Kind::kEnd) {
        for (const std::string& e : ends)
          if (e.rfind("end", 0) == 0) return error("missing {% " + e + " %}");
        break;
      }
      if (t.kind == Token::Kind::kText) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::kText;
        s->line = t.line;
        s->text = next().text;
        body.push_back(std::move(s));
        continue;
      }
      if (t.kind == Token::Kind::kOpenExpression) {
        ++p_;
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::kOutput;
        s->line = t.line;
        DI_ASSIGN_OR_RETURN(s->expr, expression());
        if (peek().kind != Token::Kind::kCloseExpression) return error("expected '}}', got " + describe(peek()));
        ++p_;
        body.push_back(std::move(s));
        continue;
      }
      if (t.kind != Token::Kind::kOpenStatement) return error("unexpected " + describe(t));
      if (peek(1).kind == Token::Kind::kName && ends.count(peek(1).text)) {
        p_ += 2;
        *found = t_[p_ - 1].text;
        --depth_;
        return body;
      }
      ++p_;
      DI_ASSIGN_OR_RETURN(StmtPtr s, statement());
      body.push_back(std::move(s));
    }
    --depth_;
    return body;
  }

  Result<StmtPtr> statement() {
    const int line = peek().line;
    DI_ASSIGN_OR_RETURN(std::string kw, expect_name());
    auto s = std::make_unique<Stmt>();
    s->line = line;
    if (kw == "if") {
      s->kind = Stmt::Kind::kIf;
      DI_ASSIGN_OR_RETURN(ExprPtr cond, expression());
      DI_RETURN_IF_ERROR(expect_close_statement());
      for (;;) {
        std::string end;
        DI_ASSIGN_OR_RETURN(Body body, block({"elif", "else", "endif"}, &end));
        s->branches.emplace_back(std::move(cond), std::move(body));
        if (end == "endif") break;
        if (end == "else") {
          DI_RETURN_IF_ERROR(expect_close_statement());
          DI_ASSIGN_OR_RETURN(Body tail, block({"endif"}, &end));
          s->branches.emplace_back(nullptr, std::move(tail));
          break;
        }
        DI_ASSIGN_OR_RETURN(cond, expression());
        DI_RETURN_IF_ERROR(expect_close_statement());
      }
      DI_RETURN_IF_ERROR(expect_close_statement());
      return s;
    }
    if (kw == "for") {
      s->kind = Stmt::Kind::kFor;
      for (;;) {
        DI_ASSIGN_OR_RETURN(std::string name, expect_name());
        s->targets.push_back(std::move(name));
        if (!is_op(",")) break;
        ++p_;
      }
      if (!is_name("in")) return error("expected 'in' in the for statement, got " + describe(peek()));
      ++p_;
      // The iterable stops before an `if` filter (no conditional expression here).
      DI_ASSIGN_OR_RETURN(s->expr, or_expr());
      if (is_name("if")) {
        ++p_;
        DI_ASSIGN_OR_RETURN(s->filter, or_expr());
      }
      if (is_name("recursive")) return error("unsupported construct: recursive for loops");
      DI_RETURN_IF_ERROR(expect_close_statement());
      std::string end;
      DI_ASSIGN_OR_RETURN(s->body, block({"else", "endfor"}, &end));
      if (end == "else") {
        DI_RETURN_IF_ERROR(expect_close_statement());
        DI_ASSIGN_OR_RETURN(s->else_body, block({"endfor"}, &end));
      }
      DI_RETURN_IF_ERROR(expect_close_statement());
      return s;
    }
    if (kw == "set") {
      s->kind = Stmt::Kind::kSet;
      DI_ASSIGN_OR_RETURN(std::string name, expect_name());
      s->targets.push_back(std::move(name));
      if (is_op(".")) {
        ++p_;
        DI_ASSIGN_OR_RETURN(s->attr, expect_name());
      } else {
        while (is_op(",")) {
          ++p_;
          DI_ASSIGN_OR_RETURN(std::string more, expect_name());
          s->targets.push_back(std::move(more));
        }
      }
      if (is_op("=")) {
        ++p_;
        DI_ASSIGN_OR_RETURN(s->expr, expression());
        DI_RETURN_IF_ERROR(expect_close_statement());
        return s;
      }
      if (s->targets.size() != 1 || !s->attr.empty()) return error("expected '=' in the set statement");
      DI_RETURN_IF_ERROR(expect_close_statement());
      std::string end;
      DI_ASSIGN_OR_RETURN(s->body, block({"endset"}, &end));
      DI_RETURN_IF_ERROR(expect_close_statement());
      return s;
    }
    if (kw == "break" || kw == "continue") {
      s->kind = kw == "break" ? Stmt::Kind::kBreak : Stmt::Kind::kContinue;
      DI_RETURN_IF_ERROR(expect_close_statement());
      return s;
    }
    --p_;
    return error("unsupported statement '" + kw + "'");
  }

  // ---- expressions ----

  Result<ExprPtr> expression() {
    if (++depth_ > kMaxDepth) return error("expressions nest deeper than " + std::to_string(kMaxDepth));
    DI_ASSIGN_OR_RETURN(ExprPtr e, or_expr());
    if (is_name("if")) {
      ++p_;
      auto c = make(Expr::Kind::kCondition);
      c->b = std::move(e);
      DI_ASSIGN_OR_RETURN(c->a, or_expr());
      if (is_name("else")) {
        ++p_;
        DI_ASSIGN_OR_RETURN(c->c, expression());
      }
      e = std::move(c);
    }
    --depth_;
    return e;
  }

  ExprPtr make(Expr::Kind k) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = peek().line;
    return e;
  }
  ExprPtr binary(std::string op, ExprPtr a, ExprPtr b) {
    auto e = make(Expr::Kind::kBinary);
    e->name = std::move(op);
    e->a = std::move(a);
    e->b = std::move(b);
    return e;
  }

  // One left-associative level: `operand`s joined by any of `ops` (keywords when `keywords`).
  Result<ExprPtr> left_assoc(Result<ExprPtr> (Parser::*operand)(), std::initializer_list<const char*> ops,
                             bool keywords = false) {
    DI_ASSIGN_OR_RETURN(ExprPtr e, (this->*operand)());
    for (;;) {
      const char* op = nullptr;
      for (const char* o : ops)
        if (keywords ? is_name(o) : is_op(o)) op = o;
      if (op == nullptr) return e;
      ++p_;
      DI_ASSIGN_OR_RETURN(ExprPtr r, (this->*operand)());
      e = binary(op, std::move(e), std::move(r));
    }
  }
  Result<ExprPtr> or_expr() { return left_assoc(&Parser::and_expr, {"or"}, /*keywords=*/true); }
  Result<ExprPtr> and_expr() { return left_assoc(&Parser::not_expr, {"and"}, /*keywords=*/true); }
  Result<ExprPtr> not_expr() {
    if (is_name("not")) {
      if (++depth_ > kMaxDepth) return error("expressions nest deeper than " + std::to_string(kMaxDepth));
      ++p_;
      auto e = make(Expr::Kind::kUnary);
      e->name = "not";
      DI_ASSIGN_OR_RETURN(e->a, not_expr());
      --depth_;
      return e;
    }
    return compare();
  }
  Result<ExprPtr> compare() {
    DI_ASSIGN_OR_RETURN(ExprPtr e, math1());
    for (;;) {
      std::string op;
      if (peek().kind == Token::Kind::kOperator &&
          (peek().text == "==" || peek().text == "!=" || peek().text == "<" || peek().text == ">" ||
           peek().text == "<=" || peek().text == ">=")) {
        op = next().text;
      } else if (is_name("in")) {
        ++p_;
        op = "in";
      } else if (is_name("not") && is_name("in", 1)) {
        p_ += 2;
        op = "not in";
      } else {
        return e;
      }
      DI_ASSIGN_OR_RETURN(ExprPtr r, math1());
      e = binary(op, std::move(e), std::move(r));
    }
  }
  Result<ExprPtr> math1() { return left_assoc(&Parser::concat, {"+", "-"}); }
  Result<ExprPtr> concat() { return left_assoc(&Parser::math2, {"~"}); }
  Result<ExprPtr> math2() { return left_assoc(&Parser::power, {"*", "/", "//", "%"}); }
  Result<ExprPtr> power() { return left_assoc(&Parser::unary, {"**"}); }
  Result<ExprPtr> unary() {
    if (is_op("-") || is_op("+")) {
      if (++depth_ > kMaxDepth) return error("expressions nest deeper than " + std::to_string(kMaxDepth));
      auto e = make(Expr::Kind::kUnary);
      e->name = next().text;
      DI_ASSIGN_OR_RETURN(e->a, unary());
      --depth_;
      return e;
    }
    DI_ASSIGN_OR_RETURN(ExprPtr e, primary());
    DI_ASSIGN_OR_RETURN(e, postfix(std::move(e)));
    return filters_and_tests(std::move(e));
  }

  Status call_args(Expr& e) {
    DI_RETURN_IF_ERROR(expect_op("("));
    return comma_separated(")", [&]() -> Status {
      if (peek().kind == Token::Kind::kName && is_op("=", 1)) {
        std::string key = next().text;
        ++p_;
        DI_ASSIGN_OR_RETURN(ExprPtr v, expression());
        e.kwargs.emplace_back(std::move(key), std::move(v));
      } else {
        if (!e.kwargs.empty()) return error("a positional argument follows a keyword argument");
        DI_ASSIGN_OR_RETURN(ExprPtr v, expression());
        e.items.push_back(std::move(v));
      }
      return Status::ok();
    });
  }

  Result<ExprPtr> postfix(ExprPtr e) {
    for (;;) {
      if (is_op(".")) {
        ++p_;
        auto a = make(Expr::Kind::kAttr);
        if (peek().kind == Token::Kind::kInteger) {
          // x.0 is x[0] in Jinja.
          a->kind = Expr::Kind::kIndex;
          a->a = std::move(e);
          a->b = make(Expr::Kind::kLiteral);
          a->b->literal = Value::integer(std::strtoll(next().text.c_str(), nullptr, 10));
          e = std::move(a);
          continue;
        }
        DI_ASSIGN_OR_RETURN(a->name, expect_name());
        a->a = std::move(e);
        e = std::move(a);
      } else if (is_op("[")) {
        ++p_;
        ExprPtr parts[3];
        int n = 0;
        bool slice = false;
        for (;;) {
          if (!is_op(":") && !is_op("]")) {
            DI_ASSIGN_OR_RETURN(parts[n], expression());
          }
          if (is_op(":")) {
            slice = true;
            if (++n > 2) return error("a slice takes at most three parts");
            ++p_;
            continue;
          }
          break;
        }
        DI_RETURN_IF_ERROR(expect_op("]"));
        auto x = make(slice ? Expr::Kind::kSlice : Expr::Kind::kIndex);
        if (!slice && !parts[0]) return error("an empty subscript []");
        x->a = std::move(e);
        x->b = std::move(parts[0]);
        x->c = std::move(parts[1]);
        x->d = std::move(parts[2]);
        e = std::move(x);
      } else if (is_op("(")) {
        auto c = make(Expr::Kind::kCall);
        c->a = std::move(e);
        DI_RETURN_IF_ERROR(call_args(*c));
        e = std::move(c);
      } else {
        return e;
      }
    }
  }

  Result<ExprPtr> filters_and_tests(ExprPtr e) {
    for (;;) {
      if (is_op("|")) {
        ++p_;
        auto f = make(Expr::Kind::kFilter);
        DI_ASSIGN_OR_RETURN(f->name, expect_name());
        f->a = std::move(e);
        if (is_op("(")) DI_RETURN_IF_ERROR(call_args(*f));
        e = std::move(f);
        DI_ASSIGN_OR_RETURN(e, postfix(std::move(e)));
      } else if (is_name("is")) {
        ++p_;
        auto t = make(Expr::Kind::kTest);
        if (is_name("not")) {
          ++p_;
          t->negated = true;
        }
        // none/true/false are names of tests here, not literals.
        DI_ASSIGN_OR_RETURN(t->name, expect_name());
        t->a = std::move(e);
        if (is_op("(")) {
          DI_RETURN_IF_ERROR(call_args(*t));
        } else if (peek().kind == Token::Kind::kString || peek().kind == Token::Kind::kInteger ||
                   peek().kind == Token::Kind::kFloat) {
          DI_ASSIGN_OR_RETURN(ExprPtr arg, primary());  // `is equalto 5`
          t->items.push_back(std::move(arg));
        }
        e = std::move(t);
      } else {
        return e;
      }
    }
  }

  Result<ExprPtr> primary() {
    if (++depth_ > kMaxDepth) return error("expressions nest deeper than " + std::to_string(kMaxDepth));
    const Token& t = peek();
    ExprPtr e;
    switch (t.kind) {
      case Token::Kind::kString: {
        e = make(Expr::Kind::kLiteral);
        std::string s;
        while (peek().kind == Token::Kind::kString) s += next().text;  // adjacent literals join
        e->literal = Value::string(std::move(s));
        break;
      }
      case Token::Kind::kInteger:
        e = make(Expr::Kind::kLiteral);
        e->literal = Value::integer(std::strtoll(next().text.c_str(), nullptr, 10));
        break;
      case Token::Kind::kFloat:
        e = make(Expr::Kind::kLiteral);
        e->literal = Value::number(std::strtod(next().text.c_str(), nullptr));
        break;
      case Token::Kind::kName: {
        const std::string& n = t.text;
        e = make(Expr::Kind::kLiteral);
        if (n == "true" || n == "True") e->literal = Value::boolean(true);
        else if (n == "false" || n == "False") e->literal = Value::boolean(false);
        else if (n == "none" || n == "None") e->literal = Value::none();
        else {
          e->kind = Expr::Kind::kName;
          e->name = n;
        }
        ++p_;
        break;
      }
      case Token::Kind::kOperator:
        if (t.text == "(") {
          ++p_;
          if (is_op(")")) {
            ++p_;
            e = make(Expr::Kind::kTuple);
            break;
          }
          DI_ASSIGN_OR_RETURN(ExprPtr first, expression());
          if (is_op(",")) {
            e = make(Expr::Kind::kTuple);
            e->items.push_back(std::move(first));
            while (is_op(",")) {
              ++p_;
              if (is_op(")")) break;
              DI_ASSIGN_OR_RETURN(ExprPtr more, expression());
              e->items.push_back(std::move(more));
            }
          } else {
            e = std::move(first);
          }
          DI_RETURN_IF_ERROR(expect_op(")"));
          break;
        }
        if (t.text == "[") {
          DI_ASSIGN_OR_RETURN(e, collection(Expr::Kind::kList, "]", [&](Expr& list) -> Status {
            DI_ASSIGN_OR_RETURN(ExprPtr item, expression());
            list.items.push_back(std::move(item));
            return Status::ok();
          }));
          break;
        }
        if (t.text == "{") {
          // Keys and values alternate in items.
          DI_ASSIGN_OR_RETURN(e, collection(Expr::Kind::kDict, "}", [&](Expr& dict) -> Status {
            DI_ASSIGN_OR_RETURN(ExprPtr k, expression());
            DI_RETURN_IF_ERROR(expect_op(":"));
            DI_ASSIGN_OR_RETURN(ExprPtr v, expression());
            dict.items.push_back(std::move(k));
            dict.items.push_back(std::move(v));
            return Status::ok();
          }));
          break;
        }
        [[fallthrough]];
      default:
        return error("expected an expression, got " + describe(t));
    }
    --depth_;
    return e;
  }

  const std::vector<Token>& t_;
  size_t p_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<Body> parse(const std::vector<Token>& tokens) { return Parser(tokens).program(); }

}  // namespace di::recipe::chat_template
