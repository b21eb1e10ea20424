// JSON Schema `format` values with a regular form, as regexes over the string body. Formats not
// listed are annotations (draft 2020-12): the compiler then accepts any string.
#include <map>
#include <string>

#include "engine/constrain/grammar.h"
#include "engine/constrain/regex_compiler.h"

namespace di::engine::constrain {

ExprPtr json_format_expr(const std::string& format) {
  // RFC 3339 date/time, RFC 4122 uuid, dotted-quad IPv4, RFC 1123 host names; e-mail as the
  // common dot-atom form (quoted local parts and address literals are left out); URIs in outline.
  static const std::map<std::string, std::string> kFormats = {
      // Days per month exact; 29 February only in leap years (divisible by 4, centuries by 400).
      {"date", R"(^(\d{4}-(0[13578]|1[02])-(0[1-9]|[12]\d|3[01])|\d{4}-(0[469]|11)-(0[1-9]|[12]\d|30)|\d{4}-02-(0[1-9]|1\d|2[0-8])|(\d\d(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)-02-29)$)"},
      {"time", R"(^([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$)"},
      {"date-time",
       R"(^(\d{4}-(0[13578]|1[02])-(0[1-9]|[12]\d|3[01])|\d{4}-(0[469]|11)-(0[1-9]|[12]\d|30)|\d{4}-02-(0[1-9]|1\d|2[0-8])|(\d\d(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)-02-29)[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$)"},
      // RFC 3339 appendix A: each unit may only be followed by the next smaller one.
      {"duration",
       R"(^P((\d+Y(\d+M(\d+D)?)?|\d+M(\d+D)?|\d+D)(T(\d+H(\d+M(\d+S)?)?|\d+M(\d+S)?|\d+S))?|T(\d+H(\d+M(\d+S)?)?|\d+M(\d+S)?|\d+S)|\d+W)$)"},
      {"uuid", R"(^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$)"},
      {"ipv4", R"(^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$)"},
      {"email", R"(^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$)"},
      {"hostname", R"(^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$)"},
      // RFC 3986 in outline: a scheme, then characters that need no escaping (no spaces, quotes
      // or angle brackets); a reference may omit the scheme.
      {"uri", R"(^[A-Za-z][A-Za-z0-9+.-]*:[^\s"<>\\^`{|}]*$)"},
      {"uri-reference", R"(^[^\s"<>\\^`{|}]*$)"},
  };
  auto it = kFormats.find(format);
  if (it == kFormats.end()) return nullptr;
  RegexOptions o;
  o.json_string = true;
  auto e = regex_to_expr(it->second, o);
  return e.is_ok() ? *e : nullptr;
}

}  // namespace di::engine::constrain
