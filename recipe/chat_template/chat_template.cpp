// The renderer: walks the parsed template over a scope chain (a for loop's body gets its own
// scope, as in Jinja; namespace() objects are shared so `set ns.x` reaches outside the loop).
// raise_exception() ends rendering with the template's message.
#include "recipe/chat_template/chat_template.h"

#include <cmath>
#include <unordered_map>

#include "recipe/chat_template/ast.h"
#include "recipe/chat_template/builtins.h"
#include "recipe/chat_template/lexer.h"
#include "recipe/chat_template/parser.h"

namespace di::recipe::chat_template {
namespace {

constexpr size_t kMaxOutput = size_t{64} << 20;
constexpr int64_t kMaxRange = 1'000'000;
constexpr int kMaxEvalDepth = 400;

enum class Flow { kNormal, kBreak, kContinue };

class Renderer {
 public:
  explicit Renderer(const nlohmann::ordered_json& context) {
    scopes_.emplace_back();
    for (auto it = context.begin(); it != context.end(); ++it) scopes_.back()[it.key()] = from_json(it.value());
  }

  Result<std::string> run(const Body& body) {
    Flow flow = Flow::kNormal;
    DI_RETURN_IF_ERROR(exec(body, &flow));
    return std::move(out_);
  }

 private:
  Status error(int line, const std::string& what) const {
    return Status::invalid_argument("chat template: line " + std::to_string(line) + ": " + what);
  }
  Status at(int line, Status s) const {
    if (s.is_ok() || s.message().rfind("chat template:", 0) == 0) return s;
    return Status(s.code(), "chat template: line " + std::to_string(line) + ": " + s.message());
  }

  const Value* lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return &f->second;
    }
    return nullptr;
  }

  Status emit(const std::string& s) {
    if (out_.size() + s.size() > kMaxOutput) return Status::limit("chat template: the rendered prompt exceeds 64 MiB");
    out_ += s;
    return Status::ok();
  }

  Status exec(const Body& body, Flow* flow) {
    for (const StmtPtr& s : body) {
      DI_RETURN_IF_ERROR(exec_one(*s, flow));
      if (*flow != Flow::kNormal) return Status::ok();
    }
    return Status::ok();
  }

  Status exec_one(const Stmt& s, Flow* flow) {
    switch (s.kind) {
      case Stmt::Kind::kText: return emit(s.text);
      case Stmt::Kind::kOutput: {
        DI_ASSIGN_OR_RETURN(Value v, eval(*s.expr));
        return emit(to_output(v));
      }
      case Stmt::Kind::kIf:
        for (const auto& [cond, body] : s.branches) {
          bool take = true;
          if (cond) {
            DI_ASSIGN_OR_RETURN(Value c, eval(*cond));
            take = truthy(c);
          }
          if (take) return exec(body, flow);
        }
        return Status::ok();
      case Stmt::Kind::kFor: return exec_for(s, flow);
      case Stmt::Kind::kSet: return exec_set(s);
      case Stmt::Kind::kBreak: *flow = Flow::kBreak; return Status::ok();
      case Stmt::Kind::kContinue: *flow = Flow::kContinue; return Status::ok();
    }
    return Status::ok();
  }

  Status exec_set(const Stmt& s) {
    Value v;
    if (s.expr) {
      DI_ASSIGN_OR_RETURN(v, eval(*s.expr));
    } else {
      std::string saved = std::move(out_);
      out_.clear();
      Flow flow = Flow::kNormal;
      Status st = exec(s.body, &flow);
      std::string captured = std::move(out_);
      out_ = std::move(saved);
      DI_RETURN_IF_ERROR(st);
      v = Value::string(std::move(captured));
    }
    if (!s.attr.empty()) {
      const Value* ns = lookup(s.targets[0]);
      if (ns == nullptr || ns->kind != Value::Kind::kNamespace)
        return error(s.line, "set " + s.targets[0] + "." + s.attr + ": " + s.targets[0] + " is not a namespace()");
      const_cast<Value*>(ns)->set(s.attr, std::move(v));  // the namespace's state is shared
      return Status::ok();
    }
    if (s.targets.size() == 1) {
      scopes_.back()[s.targets[0]] = std::move(v);
      return Status::ok();
    }
    if (!v.is_list() || v.list->size() != s.targets.size())
      return error(s.line, "set: cannot unpack into " + std::to_string(s.targets.size()) + " names");
    for (size_t i = 0; i < s.targets.size(); ++i) scopes_.back()[s.targets[i]] = (*v.list)[i];
    return Status::ok();
  }

  Status exec_for(const Stmt& s, Flow*) {
    DI_ASSIGN_OR_RETURN(Value it, eval(*s.expr));
    std::vector<Value> items;
    if (it.is_list()) items = *it.list;
    else if (it.is_mapping()) {
      for (const auto& e : *it.map) items.push_back(Value::string(e.first));
    } else if (it.is_string()) {
      for (char c : it.s) items.push_back(Value::string(std::string(1, c)));
    } else if (!it.is_undefined() && !it.is_none()) {
      return error(s.line, std::string("for: cannot iterate over a ") + kind_name(it.kind));
    } else if (it.is_none()) {
      return error(s.line, "for: cannot iterate over none");
    }
    // An `if` clause filters before loop.index and loop.length are counted, as in Jinja.
    if (s.filter) {
      std::vector<Value> kept;
      for (const Value& item : items) {
        scopes_.emplace_back();
        bind(s, item);
        auto c = eval(*s.filter);
        scopes_.pop_back();
        if (!c.is_ok()) return c.status();
        if (truthy(*c)) kept.push_back(item);
      }
      items = std::move(kept);
    }
    if (items.empty()) {
      Flow f = Flow::kNormal;
      scopes_.emplace_back();
      Status st = exec(s.else_body, &f);
      scopes_.pop_back();
      return st;
    }
    const int64_t n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
      scopes_.emplace_back();
      Mapping loop = {
          {"index", Value::integer(i + 1)},      {"index0", Value::integer(i)},
          {"revindex", Value::integer(n - i)},   {"revindex0", Value::integer(n - i - 1)},
          {"first", Value::boolean(i == 0)},     {"last", Value::boolean(i == n - 1)},
          {"length", Value::integer(n)},
          {"previtem", i > 0 ? items[i - 1] : Value::undefined()},
          {"nextitem", i + 1 < n ? items[i + 1] : Value::undefined()},
      };
      scopes_.back()["loop"] = Value::make_mapping(std::move(loop));
      Status st = bind(s, items[i]);
      Flow f = Flow::kNormal;
      if (st.is_ok()) st = exec(s.body, &f);
      scopes_.pop_back();
      DI_RETURN_IF_ERROR(st);
      if (f == Flow::kBreak) break;
    }
    return Status::ok();
  }

  Status bind(const Stmt& s, const Value& item) {
    if (s.targets.size() == 1) {
      scopes_.back()[s.targets[0]] = item;
      return Status::ok();
    }
    if (!item.is_list() || item.list->size() != s.targets.size())
      return error(s.line, "for: cannot unpack an item into " + std::to_string(s.targets.size()) + " names");
    for (size_t k = 0; k < s.targets.size(); ++k) scopes_.back()[s.targets[k]] = (*item.list)[k];
    return Status::ok();
  }

  Result<Args> eval_args(const Expr& e) {
    Args a;
    for (const ExprPtr& x : e.items) {
      DI_ASSIGN_OR_RETURN(Value v, eval(*x));
      a.positional.push_back(std::move(v));
    }
    for (const auto& [k, x] : e.kwargs) {
      DI_ASSIGN_OR_RETURN(Value v, eval(*x));
      a.keyword.emplace_back(k, std::move(v));
    }
    return a;
  }

  Result<Value> eval(const Expr& e) {
    if (++depth_ > kMaxEvalDepth) return error(e.line, "evaluation nests too deep");
    auto r = eval_inner(e);
    --depth_;
    if (!r.is_ok()) return at(e.line, r.status());
    return r;
  }

  static Result<int64_t> index_of(const Value& idx, int64_t size, bool* in_range) {
    if (idx.kind != Value::Kind::kInt) return Status::invalid_argument(std::string("an index must be an integer, got ") + kind_name(idx.kind));
    int64_t i = idx.i < 0 ? idx.i + size : idx.i;
    *in_range = i >= 0 && i < size;
    return i;
  }

  Result<Value> member(const Value& obj, const Value& key, const std::string& shown) {
    if (obj.is_mapping()) {
      if (!key.is_string()) return Value::undefined();
      const Value* v = obj.find(key.s);
      return v ? *v : Value::undefined();
    }
    if (obj.is_list() || obj.is_string()) {
      if (key.is_string()) return Value::undefined();
      const int64_t size = static_cast<int64_t>(obj.is_list() ? obj.list->size() : obj.s.size());
      bool ok = false;
      DI_ASSIGN_OR_RETURN(int64_t i, index_of(key, size, &ok));
      if (!ok) return Value::undefined();
      return obj.is_list() ? (*obj.list)[static_cast<size_t>(i)] : Value::string(std::string(1, obj.s[static_cast<size_t>(i)]));
    }
    if (obj.is_undefined() || obj.is_none())
      return Status::invalid_argument("cannot read " + shown + " of " + (obj.is_none() ? "none" : "an undefined value"));
    return Value::undefined();
  }

  Result<Value> slice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
    const bool is_str = obj.is_string();
    if (!obj.is_list() && !is_str) return Status::invalid_argument(std::string("cannot slice a ") + kind_name(obj.kind));
    const int64_t n = static_cast<int64_t>(is_str ? obj.s.size() : obj.list->size());
    auto as_int = [](const Value& v, int64_t dflt) -> Result<int64_t> {
      if (v.is_undefined() || v.is_none()) return dflt;
      if (v.kind != Value::Kind::kInt) return Status::invalid_argument("slice bounds must be integers");
      return v.i;
    };
    DI_ASSIGN_OR_RETURN(int64_t st, as_int(step, 1));
    if (st == 0) return Status::invalid_argument("slice step cannot be zero");
    // Python's slice.indices().
    const int64_t lower = st > 0 ? 0 : -1, upper = st > 0 ? n : n - 1;
    auto bound = [&](const Value& v, int64_t dflt) -> Result<int64_t> {
      if (v.is_undefined() || v.is_none()) return dflt;
      DI_ASSIGN_OR_RETURN(int64_t x, as_int(v, 0));
      if (x < 0) return std::max(x + n, lower);
      return std::min(x, upper);
    };
    DI_ASSIGN_OR_RETURN(int64_t b, bound(start, st > 0 ? lower : upper));
    DI_ASSIGN_OR_RETURN(int64_t e, bound(stop, st > 0 ? upper : lower));
    List out;
    std::string sout;
    for (int64_t i = b; st > 0 ? i < e : i > e; i += st) {
      if (is_str) sout += obj.s[static_cast<size_t>(i)];
      else out.push_back((*obj.list)[static_cast<size_t>(i)]);
    }
    return is_str ? Value::string(std::move(sout)) : Value::make_list(std::move(out));
  }

  static double num(const Value& v) { return v.kind == Value::Kind::kInt ? static_cast<double>(v.i) : v.f; }

  Result<Value> arithmetic(const std::string& op, const Value& a, const Value& b) {
    if (op == "~") return Value::string(to_output(a) + to_output(b));
    if (op == "+") {
      if (a.is_string() && b.is_string()) return Value::string(a.s + b.s);
      if (a.is_list() && b.is_list()) {
        List l = *a.list;
        l.insert(l.end(), b.list->begin(), b.list->end());
        return Value::make_list(std::move(l));
      }
    }
    if (op == "*" && a.is_string() && b.kind == Value::Kind::kInt) {
      std::string s;
      for (int64_t k = 0; k < b.i && s.size() <= kMaxOutput; ++k) s += a.s;
      return Value::string(std::move(s));
    }
    const bool ints = a.kind == Value::Kind::kInt && b.kind == Value::Kind::kInt;
    const bool nums = (a.is_number() || a.kind == Value::Kind::kBool) && (b.is_number() || b.kind == Value::Kind::kBool);
    if (!nums)
      return Status::invalid_argument("unsupported operand types for " + op + ": " + kind_name(a.kind) + " and " +
                                      kind_name(b.kind));
    const Value x = a.kind == Value::Kind::kBool ? Value::integer(a.b) : a;
    const Value y = b.kind == Value::Kind::kBool ? Value::integer(b.b) : b;
    const bool both_int = ints || (x.kind == Value::Kind::kInt && y.kind == Value::Kind::kInt);
    if (op == "+") return both_int ? Value::integer(x.i + y.i) : Value::number(num(x) + num(y));
    if (op == "-") return both_int ? Value::integer(x.i - y.i) : Value::number(num(x) - num(y));
    if (op == "*") return both_int ? Value::integer(x.i * y.i) : Value::number(num(x) * num(y));
    if (op == "/") {
      if (num(y) == 0) return Status::invalid_argument("division by zero");
      return Value::number(num(x) / num(y));
    }
    if (op == "//" || op == "%") {
      if (num(y) == 0) return Status::invalid_argument(op == "%" ? "modulo by zero" : "division by zero");
      if (both_int) {
        int64_t q = x.i / y.i, r = x.i % y.i;
        if (r != 0 && ((r < 0) != (y.i < 0))) {
          --q;
          r += y.i;
        }
        return Value::integer(op == "//" ? q : r);
      }
      const double q = std::floor(num(x) / num(y));
      return Value::number(op == "//" ? q : num(x) - q * num(y));
    }
    if (op == "**") {
      if (both_int && y.i >= 0) {
        int64_t r = 1;
        for (int64_t k = 0; k < y.i && k < 64; ++k) r *= x.i;
        return Value::integer(r);
      }
      return Value::number(std::pow(num(x), num(y)));
    }
    return Status::invalid_argument("unknown operator " + op);
  }

  Result<Value> compare(const std::string& op, const Value& a, const Value& b) {
    if (op == "==") return Value::boolean(equals(a, b));
    if (op == "!=") return Value::boolean(!equals(a, b));
    if (op == "in" || op == "not in") {
      DI_ASSIGN_OR_RETURN(bool in, contains(b, a));
      return Value::boolean(op == "in" ? in : !in);
    }
    int c;
    if (a.is_number() && b.is_number()) c = num(a) < num(b) ? -1 : (num(a) > num(b) ? 1 : 0);
    else if (a.is_string() && b.is_string()) c = a.s.compare(b.s);
    else return Status::invalid_argument("cannot compare a " + std::string(kind_name(a.kind)) + " with a " + kind_name(b.kind) + " using " + op);
    if (op == "<") return Value::boolean(c < 0);
    if (op == ">") return Value::boolean(c > 0);
    if (op == "<=") return Value::boolean(c <= 0);
    return Value::boolean(c >= 0);
  }

  Result<Value> call_global(const Expr& e, const std::string& name) {
    DI_ASSIGN_OR_RETURN(Args args, eval_args(e));
    if (name == "raise_exception") {
      const Value& m = args.get(0, "message");
      return Status::invalid_argument("chat template raised an exception: " + to_output(m));
    }
    if (name == "namespace") {
      Mapping m;
      for (auto& [k, v] : args.keyword) m.emplace_back(k, v);
      return Value::make_mapping(std::move(m), Value::Kind::kNamespace);
    }
    if (name == "range") {
      int64_t start = 0, stop = 0, step = 1;
      for (const Value& v : args.positional)
        if (v.kind != Value::Kind::kInt) return Status::invalid_argument("range: expected integers");
      if (args.positional.size() == 1) stop = args.positional[0].i;
      else if (args.positional.size() >= 2) {
        start = args.positional[0].i;
        stop = args.positional[1].i;
        if (args.positional.size() == 3) step = args.positional[2].i;
      } else {
        return Status::invalid_argument("range: expected 1 to 3 integers");
      }
      if (step == 0) return Status::invalid_argument("range: step must not be zero");
      List l;
      for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
        if (static_cast<int64_t>(l.size()) >= kMaxRange)
          return Status::limit("range: more than " + std::to_string(kMaxRange) + " items");
        l.push_back(Value::integer(i));
      }
      return Value::make_list(std::move(l));
    }
    return Status::unsupported("unsupported function '" + name + "'");
  }

  Result<Value> eval_inner(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::kLiteral: return e.literal;
      case Expr::Kind::kName: {
        const Value* v = lookup(e.name);
        return v ? *v : Value::undefined();
      }
      case Expr::Kind::kList:
      case Expr::Kind::kTuple: {
        List l;
        for (const ExprPtr& x : e.items) {
          DI_ASSIGN_OR_RETURN(Value v, eval(*x));
          l.push_back(std::move(v));
        }
        return Value::make_list(std::move(l));
      }
      case Expr::Kind::kDict: {
        Value m = Value::make_mapping();
        for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
          DI_ASSIGN_OR_RETURN(Value k, eval(*e.items[i]));
          DI_ASSIGN_OR_RETURN(Value v, eval(*e.items[i + 1]));
          if (!k.is_string()) return Status::invalid_argument("mapping keys must be strings");
          m.set(k.s, std::move(v));
        }
        return m;
      }
      case Expr::Kind::kAttr: {
        DI_ASSIGN_OR_RETURN(Value o, eval(*e.a));
        return member(o, Value::string(e.name), "attribute '" + e.name + "'");
      }
      case Expr::Kind::kIndex: {
        DI_ASSIGN_OR_RETURN(Value o, eval(*e.a));
        DI_ASSIGN_OR_RETURN(Value k, eval(*e.b));
        return member(o, k, k.is_string() ? "key '" + k.s + "'" : "an item");
      }
      case Expr::Kind::kSlice: {
        DI_ASSIGN_OR_RETURN(Value o, eval(*e.a));
        Value b, c, d;
        if (e.b) {
          DI_ASSIGN_OR_RETURN(b, eval(*e.b));
        }
        if (e.c) {
          DI_ASSIGN_OR_RETURN(c, eval(*e.c));
        }
        if (e.d) {
          DI_ASSIGN_OR_RETURN(d, eval(*e.d));
        }
        return slice(o, b, c, d);
      }
      case Expr::Kind::kCall: {
        if (e.a->kind == Expr::Kind::kName) {
          if (lookup(e.a->name) != nullptr) return Status::unsupported("calling '" + e.a->name + "': it is data, not a function");
          return call_global(e, e.a->name);
        }
        if (e.a->kind == Expr::Kind::kAttr) {
          DI_ASSIGN_OR_RETURN(Value o, eval(*e.a->a));
          if (o.is_undefined() || o.is_none())
            return Status::invalid_argument("cannot call " + e.a->name + "() on " + (o.is_none() ? "none" : "an undefined value"));
          DI_ASSIGN_OR_RETURN(Args args, eval_args(e));
          return call_method(o, e.a->name, args);
        }
        return Status::unsupported("calling the result of an expression");
      }
      case Expr::Kind::kFilter: {
        DI_ASSIGN_OR_RETURN(Value in, eval(*e.a));
        DI_ASSIGN_OR_RETURN(Args args, eval_args(e));
        return apply_filter(e.name, in, args);
      }
      case Expr::Kind::kTest: {
        DI_ASSIGN_OR_RETURN(Value in, eval(*e.a));
        DI_ASSIGN_OR_RETURN(Args args, eval_args(e));
        DI_ASSIGN_OR_RETURN(bool r, apply_test(e.name, in, args));
        return Value::boolean(e.negated ? !r : r);
      }
      case Expr::Kind::kUnary: {
        DI_ASSIGN_OR_RETURN(Value v, eval(*e.a));
        if (e.name == "not") return Value::boolean(!truthy(v));
        if (v.kind == Value::Kind::kInt) return e.name == "-" ? Value::integer(-v.i) : v;
        if (v.kind == Value::Kind::kFloat) return e.name == "-" ? Value::number(-v.f) : v;
        return Status::invalid_argument("unary " + e.name + " needs a number, got " + kind_name(v.kind));
      }
      case Expr::Kind::kBinary: {
        DI_ASSIGN_OR_RETURN(Value a, eval(*e.a));
        if (e.name == "and") {
          if (!truthy(a)) return a;
          return eval(*e.b);
        }
        if (e.name == "or") {
          if (truthy(a)) return a;
          return eval(*e.b);
        }
        DI_ASSIGN_OR_RETURN(Value b, eval(*e.b));
        const std::string& op = e.name;
        if (op == "==" || op == "!=" || op == "<" || op == ">" || op == "<=" || op == ">=" || op == "in" || op == "not in")
          return compare(op, a, b);
        return arithmetic(op, a, b);
      }
      case Expr::Kind::kCondition: {
        DI_ASSIGN_OR_RETURN(Value c, eval(*e.a));
        if (truthy(c)) return eval(*e.b);
        if (e.c) return eval(*e.c);
        return Value::undefined();
      }
    }
    return Status::internal("chat template: unknown expression");
  }

  std::vector<std::unordered_map<std::string, Value>> scopes_;
  std::string out_;
  int depth_ = 0;
};

}  // namespace

Result<ChatTemplate> ChatTemplate::parse(std::string_view source) {
  DI_ASSIGN_OR_RETURN(std::vector<Token> tokens, tokenize(source));
  DI_ASSIGN_OR_RETURN(Body body, chat_template::parse(tokens));
  ChatTemplate t;
  t.body_ = std::make_shared<const Body>(std::move(body));
  return t;
}

Result<std::string> ChatTemplate::render(const nlohmann::ordered_json& context) const {
  if (!context.is_object()) return Status::invalid_argument("chat template: the context must be a JSON object");
  Renderer r(context);
  return r.run(*body_);
}

}  // namespace di::recipe::chat_template
