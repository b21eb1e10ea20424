// Number ranges: the integer part by the classic digit-range split (per length, then per leading
// digit), the fraction by a digit-by-digit comparison with the bounds' fraction digits.
#include "engine/constrain/json_number_range.h"

#include <algorithm>
#include <vector>

namespace di::engine::constrain {

Result<Decimal> Decimal::parse(const std::string& text) {
  Decimal d;
  size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) d.negative = text[i++] == '-';
  std::string digits;
  long point = -1;
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
    if (text[i] == '.') {
      if (point >= 0) return Status::invalid_argument("number '" + text + "': two decimal points");
      point = static_cast<long>(digits.size());
    } else if (text[i] >= '0' && text[i] <= '9') {
      digits += text[i];
    } else {
      return Status::invalid_argument("number '" + text + "': unexpected character");
    }
  }
  if (digits.empty()) return Status::invalid_argument("number '" + text + "': no digits");
  if (point < 0) point = static_cast<long>(digits.size());
  if (i < text.size()) {
    long e = 0;
    bool neg = false;
    ++i;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) neg = text[i++] == '-';
    if (i == text.size()) return Status::invalid_argument("number '" + text + "': empty exponent");
    for (; i < text.size(); ++i) {
      if (text[i] < '0' || text[i] > '9') return Status::invalid_argument("number '" + text + "': bad exponent");
      e = std::min(e * 10 + (text[i] - '0'), 100000L);
    }
    point += neg ? -e : e;
  }
  if (point > 400 || point < -400) return Status::unsupported("number bound '" + text + "' is too large or too small");
  std::string ip, fp;
  if (point <= 0) {
    fp = std::string(size_t(-point), '0') + digits;
  } else if (size_t(point) >= digits.size()) {
    ip = digits + std::string(size_t(point) - digits.size(), '0');
  } else {
    ip = digits.substr(0, size_t(point));
    fp = digits.substr(size_t(point));
  }
  ip.erase(0, std::min(ip.find_first_not_of('0'), ip.size()));
  while (!fp.empty() && fp.back() == '0') fp.pop_back();
  d.int_digits = ip.empty() ? "0" : ip;
  d.frac_digits = fp;
  if (d.is_zero()) d.negative = false;
  return d;
}

namespace {

ExprPtr digit() { return byte_range('0', '9'); }
ExprPtr digits_range(int a, int b) { return byte_range(uint8_t('0' + a), uint8_t('0' + b)); }

// Numeric comparison of digit strings without leading zeros.
int cmp(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b) < 0 ? -1 : a.compare(b) > 0 ? 1 : 0;
}

std::string inc(std::string s) {
  int i = static_cast<int>(s.size()) - 1;
  while (i >= 0 && s[i] == '9') s[i--] = '0';
  if (i < 0) return "1" + s;
  ++s[i];
  return s;
}

std::string dec(std::string s) {  // s > 0
  int i = static_cast<int>(s.size()) - 1;
  while (s[i] == '0') s[i--] = '9';
  --s[i];
  s.erase(0, std::min(s.find_first_not_of('0'), s.size() - 1));
  return s;
}

// Equal-length digit strings x <= y (leading zeros allowed here): every string between them.
ExprPtr same_len(const std::string& x, const std::string& y) {
  const size_t n = x.size();
  if (n == 0) return empty();
  if (x.find_first_not_of('0') == std::string::npos && y.find_first_not_of('9') == std::string::npos) {
    return repeat(digit(), uint32_t(n), uint32_t(n));
  }
  int a = x[0] - '0', b = y[0] - '0';
  if (a == b) return seq({digits_range(a, a), same_len(x.substr(1), y.substr(1))});
  std::vector<ExprPtr> alts;
  alts.push_back(seq({digits_range(a, a), same_len(x.substr(1), std::string(n - 1, '9'))}));
  if (a + 1 <= b - 1) alts.push_back(seq({digits_range(a + 1, b - 1), repeat(digit(), uint32_t(n - 1), uint32_t(n - 1))}));
  alts.push_back(seq({digits_range(b, b), same_len(std::string(n - 1, '0'), y.substr(1))}));
  return alt(std::move(alts));
}

// Integers lo <= x (<= hi when given), spelled without leading zeros.
ExprPtr uint_range(const std::string& lo, const std::optional<std::string>& hi) {
  if (hi && cmp(lo, *hi) > 0) return nothing();
  std::vector<ExprPtr> alts;
  const size_t la = lo.size(), lb = hi ? hi->size() : la;
  for (size_t len = la; len <= lb; ++len) {
    std::string a = len == la ? lo : "1" + std::string(len - 1, '0');
    std::string b = hi && len == lb ? *hi : std::string(len, '9');
    alts.push_back(same_len(a, b));
  }
  if (!hi) alts.push_back(seq({digits_range(1, 9), repeat(digit(), uint32_t(la), Expr::kUnbounded)}));
  return alt(std::move(alts));
}

// Fraction digit strings compared (zero-padded) with optional bounds.
class FractionRange {
 public:
  FractionRange(const std::optional<NumberBound>& lo, const std::optional<NumberBound>& hi) {
    if (lo) lo_ = lo->value.frac_digits, lo_incl_ = lo->inclusive, has_lo_ = true;
    if (hi) hi_ = hi->value.frac_digits, hi_incl_ = hi->inclusive, has_hi_ = true;
    m_ = std::max(lo_.size(), hi_.size());
  }

  // The optional ".digits" part.
  ExprPtr optional_fraction(bool integer) const {
    ExprPtr none = end_ok(0, has_lo_, has_hi_) ? empty() : nothing();
    // An integer may still be spelled with a zero fraction ("1.0"); JSON Schema counts it.
    if (integer) return none->kind == Expr::Kind::kEmpty ? opt(seq({literal("."), plus(literal("0"))})) : none;
    return alt({none, seq({literal("."), digits_from(0, has_lo_, has_hi_, true)})});
  }

 private:
  int lo_at(size_t i) const { return i < lo_.size() ? lo_[i] - '0' : 0; }
  int hi_at(size_t i) const { return i < hi_.size() ? hi_[i] - '0' : 0; }

  // The digits so far end here: compare the zero padding with the rest of each bound.
  bool end_ok(size_t i, bool tl, bool th) const {
    if (tl) {
      bool rest_zero = i >= lo_.size();  // lo_ has no trailing zeros
      if (!rest_zero || !lo_incl_) return false;
    }
    if (th) {
      bool rest_zero = i >= hi_.size();
      if (rest_zero && !hi_incl_) return false;
    }
    return true;
  }

  // Digit strings from position i on (at least one digit when nonempty).
  ExprPtr digits_from(size_t i, bool tl, bool th, bool nonempty) const {
    if (i >= m_) {
      // Both bounds exhausted: only the padding zeros are left to compare with.
      if (tl && th) return lo_incl_ && hi_incl_ ? repeat(literal("0"), nonempty ? 1 : 0, Expr::kUnbounded) : nothing();
      if (th) return hi_incl_ ? repeat(literal("0"), nonempty ? 1 : 0, Expr::kUnbounded) : nothing();
      if (tl && !lo_incl_) return seq({star(literal("0")), digits_range(1, 9), star(digit())});
      return repeat(digit(), nonempty ? 1 : 0, Expr::kUnbounded);
    }
    std::vector<ExprPtr> alts;
    if (!nonempty && end_ok(i, tl, th)) alts.push_back(empty());
    int first = tl ? lo_at(i) : 0, last = th ? hi_at(i) : 9;
    for (int d = first; d <= last;) {
      bool ntl = tl && d == lo_at(i), nth = th && d == hi_at(i);
      int e = d;
      while (e + 1 <= last && (tl && e + 1 == lo_at(i)) == ntl && (th && e + 1 == hi_at(i)) == nth) ++e;
      alts.push_back(seq({digits_range(d, e), digits_from(i + 1, ntl, nth, false)}));
      d = e + 1;
    }
    return alt(std::move(alts));
  }

  std::string lo_, hi_;
  bool lo_incl_ = true, hi_incl_ = true, has_lo_ = false, has_hi_ = false;
  size_t m_ = 0;
};

// Non-negative numbers within [lo, hi]; lo is always present here.
ExprPtr nonneg_range(const NumberBound& lo, const std::optional<NumberBound>& hi, bool integer) {
  const std::string& ia = lo.value.int_digits;
  ExprPtr any_fraction = opt(seq({literal("."), plus(integer ? literal("0") : digit())}));
  if (hi && cmp(ia, hi->value.int_digits) == 0) {
    return seq({literal(ia), FractionRange(lo, hi).optional_fraction(integer)});
  }
  if (hi && cmp(ia, hi->value.int_digits) > 0) return nothing();
  std::vector<ExprPtr> alts;
  alts.push_back(seq({literal(ia), FractionRange(lo, std::nullopt).optional_fraction(integer)}));
  std::string mid_lo = inc(ia);
  if (!hi) {
    alts.push_back(seq({uint_range(mid_lo, std::nullopt), any_fraction}));
  } else {
    const std::string& ib = hi->value.int_digits;
    if (cmp(mid_lo, ib) < 0) alts.push_back(seq({uint_range(mid_lo, dec(ib)), any_fraction}));
    alts.push_back(seq({literal(ib), FractionRange(std::nullopt, hi).optional_fraction(integer)}));
  }
  return alt(std::move(alts));
}

NumberBound negate(const NumberBound& b) {
  NumberBound n = b;
  n.value.negative = !n.value.negative;
  if (n.value.is_zero()) n.value.negative = false;
  return n;
}

}  // namespace

ExprPtr number_range(const std::optional<NumberBound>& lo, const std::optional<NumberBound>& hi, bool integer) {
  NumberBound zero;  // 0, inclusive
  std::vector<ExprPtr> alts;
  // x >= 0 part.
  if (!hi || !hi->value.negative) {
    if (lo && !lo->value.negative) {
      alts.push_back(nonneg_range(*lo, hi, integer));
    } else {
      alts.push_back(nonneg_range(zero, hi, integer));
    }
  }
  // x < 0 part, spelled "-" followed by |x| (and never "-0").
  if (!lo || lo->value.negative) {
    NumberBound mag_lo;
    if (hi && hi->value.negative) {
      mag_lo = negate(*hi);
    } else {
      mag_lo.inclusive = false;  // |x| > 0
    }
    std::optional<NumberBound> mag_hi;
    if (lo) mag_hi = negate(*lo);
    alts.push_back(seq({literal("-"), nonneg_range(mag_lo, mag_hi, integer)}));
  }
  return alt(std::move(alts));
}

namespace {
ExprPtr integer_part() {
  static const ExprPtr e = seq({opt(literal("-")), alt({literal("0"), seq({digits_range(1, 9), star(digit())})})});
  return e;
}
}  // namespace

ExprPtr json_integer() {
  static const ExprPtr e = seq({integer_part(), opt(seq({literal("."), plus(literal("0"))}))});
  return e;
}

ExprPtr json_number() {
  static const ExprPtr e = seq({integer_part(), opt(seq({literal("."), plus(digit())})),
                                opt(seq({bytes({{'e', 'e'}, {'E', 'E'}}), opt(bytes({{'+', '+'}, {'-', '-'}})), plus(digit())}))});
  return e;
}

}  // namespace di::engine::constrain
