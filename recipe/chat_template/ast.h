// The chat-template syntax tree: expressions and statements as the parser builds them and the
// renderer walks them. Plain data; no behaviour.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "recipe/chat_template/value.h"

namespace di::recipe::chat_template {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    kLiteral,   // literal
    kName,      // name
    kList,      // [items]
    kTuple,     // (items)
    kDict,      // {items[0]: items[1], ...}
    kAttr,      // a.name
    kIndex,     // a[b]
    kSlice,     // a[b:c:d] (absent parts null)
    kCall,      // a(items, kwargs)
    kFilter,    // a | name(items, kwargs)
    kTest,      // a is [not] name(items)
    kUnary,     // name ("-", "+", "not") a
    kBinary,    // a name b
    kCondition, // b if a else c
  };
  Kind kind;
  int line = 0;
  Value literal;
  std::string name;
  bool negated = false;  // `is not`
  ExprPtr a, b, c, d;
  std::vector<ExprPtr> items;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Stmt {
  enum class Kind { kText, kOutput, kIf, kFor, kSet, kBreak, kContinue };
  Kind kind;
  int line = 0;
  std::string text;                                  // kText
  ExprPtr expr;                                      // kOutput, kSet value, kFor iterable
  std::vector<std::pair<ExprPtr, Body>> branches;    // kIf: (condition, body); else: null condition
  std::vector<std::string> targets;                  // kFor loop variables; kSet name (or object)
  std::string attr;                                  // kSet `ns.attr`
  ExprPtr filter;                                    // kFor `if` clause
  Body body, else_body;                              // kFor, kSet block
};

}  // namespace di::recipe::chat_template
