// JSON Schema `format` values with a regular form, as regexes over the string body, and the
// draft 2020-12 formats we cannot assert (the compiler refuses those rather than accept any
// string). Other, non-standard formats are annotations: any string.
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
      // RFC 4291 section 2.2 text forms (as RFC 3986's IPv6address): at most one "::", an
      // optional dotted-quad tail; no zone id.
      {"ipv6",
       R"(^(([0-9A-Fa-f]{1,4}:){6}(([0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4})|IP4)|::([0-9A-Fa-f]{1,4}:){5}(([0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4})|IP4)|([0-9A-Fa-f]{1,4})?::([0-9A-Fa-f]{1,4}:){4}(([0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4})|IP4)|(([0-9A-Fa-f]{1,4}:){0,1}[0-9A-Fa-f]{1,4})?::([0-9A-Fa-f]{1,4}:){3}(([0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4})|IP4)|(([0-9A-Fa-f]{1,4}:){0,2}[0-9A-Fa-f]{1,4})?::([0-9A-Fa-f]{1,4}:){2}(([0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4})|IP4)|(([0-9A-Fa-f]{1,4}:){0,3}[0-9A-Fa-f]{1,4})?::[0-9A-Fa-f]{1,4}:(([0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4})|IP4)|(([0-9A-Fa-f]{1,4}:){0,4}[0-9A-Fa-f]{1,4})?::(([0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4})|IP4)|(([0-9A-Fa-f]{1,4}:){0,5}[0-9A-Fa-f]{1,4})?::[0-9A-Fa-f]{1,4}|(([0-9A-Fa-f]{1,4}:){0,6}[0-9A-Fa-f]{1,4})?::)$)"},
      // RFC 6901: "/"-separated tokens, "~" only as "~0" or "~1".
      {"json-pointer", R"(^(/([^~/]|~[01])*)*$)"},
      // draft-bhutton-relative-json-pointer-00: a non-negative integer, an optional index
      // adjustment, then "#" or a JSON pointer.
      {"relative-json-pointer", R"(^(0|[1-9]\d*)([+-](0|[1-9]\d*))?(#|(/([^~/]|~[01])*)*)$)"},
      // RFC 6570 level 4: literals (no spaces, double quotes, angle brackets, backslash, ^ ` | or braces;
      // "%" only as a percent-encoding) and expressions {op var[:n|*],...}.
      {"uri-template",
       R"(^([!#$&-;=?-\[\]_a-z~\u00A0-\u{10FFFF}]|%[0-9A-Fa-f]{2}|\{[+#./;?&=,!@|]?([A-Za-z0-9_]|%[0-9A-Fa-f]{2})(\.?([A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*(:[1-9]\d{0,3}|\*)?(,([A-Za-z0-9_]|%[0-9A-Fa-f]{2})(\.?([A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*(:[1-9]\d{0,3}|\*)?)*\})*$)"},
  };
  auto it = kFormats.find(format);
  if (it == kFormats.end()) return nullptr;
  std::string pattern = it->second;
  const std::string ip4 = R"(((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))";
  for (size_t at; (at = pattern.find("IP4")) != std::string::npos;) pattern.replace(at, 3, ip4);
  RegexOptions o;
  o.json_string = true;
  auto e = regex_to_expr(pattern, o);
  return e.is_ok() ? *e : nullptr;
}

bool json_format_unassertable(const std::string& format) {
  // Draft 2020-12 formats without a regular form we enforce: a regex's own syntax is not regular
  // (nested groups), and the internationalized forms need IDNA / Unicode tables.
  static const char* const kNames[] = {"regex", "iri", "iri-reference", "idn-email", "idn-hostname"};
  for (const char* n : kNames) {
    if (format == n) return true;
  }
  return false;
}

}  // namespace di::engine::constrain
