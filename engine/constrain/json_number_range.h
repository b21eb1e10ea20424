// JSON numbers within bounds as an Expr over their decimal spelling (JSON Schema minimum /
// maximum / exclusive*), exact for any decimal bound. Bounded numbers are spelled without an
// exponent. Knows nothing of schemas beyond the four bounds.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "engine/constrain/grammar.h"

namespace di::engine::constrain {

// A decimal number split into sign, integer digits (no leading zeros, "0" for zero) and fraction
// digits (no trailing zeros).
struct Decimal {
  bool negative = false;
  std::string int_digits = "0";
  std::string frac_digits;

  // From a JSON number's text ("12", "-0.5", "1e-7", "2.50E+3").
  static Result<Decimal> parse(const std::string& text);
  bool is_zero() const { return int_digits == "0" && frac_digits.empty(); }
};

struct NumberBound {
  Decimal value;
  bool inclusive = true;
};

// Numbers x with lo <= x <= hi (strict where a bound is exclusive); an absent bound is open.
// `integer`: no fraction part at all.
ExprPtr number_range(const std::optional<NumberBound>& lo, const std::optional<NumberBound>& hi, bool integer);

// Any JSON number (exponent allowed), or any JSON integer spelled without fraction or exponent.
ExprPtr json_number();
ExprPtr json_integer();

}  // namespace di::engine::constrain
