// MiniJson: a small strict JSON reader for the tests (the JDK has none): objects become
// LinkedHashMap, arrays ArrayList, numbers Double, plus String, Boolean and null.
package ai.deepinfer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

final class MiniJson {
  private final String s;
  private int i;

  private MiniJson(String s) {
    this.s = s;
  }

  static Object parse(String text) {
    MiniJson p = new MiniJson(text);
    Object v = p.value();
    p.ws();
    if (p.i != text.length()) throw p.error("trailing characters");
    return v;
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> object(String text) {
    return (Map<String, Object>) parse(text);
  }

  private Object value() {
    ws();
    if (i >= s.length()) throw error("unexpected end");
    char c = s.charAt(i);
    switch (c) {
      case '{': return obj();
      case '[': return arr();
      case '"': return str();
      case 't': return lit("true", Boolean.TRUE);
      case 'f': return lit("false", Boolean.FALSE);
      case 'n': return lit("null", null);
      default: return num();
    }
  }

  private Map<String, Object> obj() {
    Map<String, Object> m = new LinkedHashMap<>();
    members('}', () -> {
      ws();
      String k = str();
      ws();
      expect(':');
      m.put(k, value());
    });
    return m;
  }

  private List<Object> arr() {
    List<Object> a = new ArrayList<>();
    members(']', () -> a.add(value()));
    return a;
  }

  // The body of an object or array, from its opening character to `close`: nothing, or
  // `member` then more of them, each after a comma.
  private void members(char close, Runnable member) {
    i++;
    ws();
    if (peek() == close) {
      i++;
      return;
    }
    for (;;) {
      member.run();
      ws();
      if (peek() != ',') break;
      i++;
    }
    expect(close);
  }

  private String str() {
    expect('"');
    StringBuilder b = new StringBuilder();
    for (;;) {
      if (i >= s.length()) throw error("unterminated string");
      char c = s.charAt(i++);
      if (c == '"') return b.toString();
      if (c < 0x20) throw error("control character in string");
      if (c != '\\') {
        b.append(c);
        continue;
      }
      char e = s.charAt(i++);
      switch (e) {
        case '"': case '\\': case '/': b.append(e); break;
        case 'b': b.append('\b'); break;
        case 'f': b.append('\f'); break;
        case 'n': b.append('\n'); break;
        case 'r': b.append('\r'); break;
        case 't': b.append('\t'); break;
        case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
        default: throw error("bad escape");
      }
    }
  }

  private Object num() {
    int start = i;
    while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
    if (start == i) throw error("unexpected character");
    return Double.parseDouble(s.substring(start, i));
  }

  private Object lit(String word, Object v) {
    if (!s.startsWith(word, i)) throw error("bad literal");
    i += word.length();
    return v;
  }

  private void ws() {
    while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) i++;
  }

  private char peek() {
    return i < s.length() ? s.charAt(i) : '\0';
  }

  private void expect(char c) {
    if (peek() != c) throw error("expected '" + c + "'");
    i++;
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("JSON: " + what + " at " + i + " in " + s);
  }
}
