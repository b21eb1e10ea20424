// Deterministic generator of tokenizer test strings: prose, code, digit runs, CJK, kana,
// Hangul, Arabic, emoji with ZWJ, whitespace runs, tabs/newlines, combining marks, and the
// text of special tokens inside ordinary text. Same seed, same strings, on every machine.

export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ("the of and to in is you that it he was for on are as with his they I at be this have from " +
  "or one had by word but not what all were we when your can said there use an each which she do how their " +
  "if will up other about out many then them these so some her would make like him into time has look two more " +
  "write go see number no way could people my than first water been call who oil its now find long down day did " +
  "get come made may part tokenizer inference engine DeepSeek transformer attention Schrödinger naïve café résumé " +
  "coöperate Zürich façade jalapeño São Paulo Ångström straße ΑΒΓ αλφα Москва привет мир").split(" ");
const CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Ve", "'LL", "'D", "'x", "'"];
const PUNCT = [".", ",", "!", "?", ";", ":", "...", " - ", " — ", "(", ")", "\"", "'", "«", "»", "“", "”", "…", "¿", "¡"];
const CODE = [
  "def f(x):\n    return x**2 + 1\n", "int main(void) {\n\treturn 0;\n}\n", "for (let i = 0; i < n; ++i) { a[i] += b[i]; }",
  "std::vector<int32_t> ids{1, 2, 3};", "if x != None and y >= 0:\n\tpass", "#include <stdio.h>\n", "a->b->c = &d;",
  "SELECT * FROM t WHERE id=42;", "<div class=\"x\">hello</div>", "x = {'k': [1, 2.5, -3e10], \"v\": null}",
  "fn main() -> Result<(), Box<dyn Error>> {}", "    indented\n        more\n\t\ttabs\n", "$HOME/.config/app.json",
  "https://example.com/path?q=1&r=2#frag", "foo_bar.baz(qux)", "// comment\n/* block */", "λx.x ≠ ∀y∃z ≤ ≥ ⇒ ∑∫√∞",
  "@decorator\nclass A(B):", "`code` **bold** _it_ ~~s~~", "a+=1;b-=2;c*=3;d/=4;e%=5;", "0x1F 0b1010 1_000_000",
];
const SPECIAL_TEXT = [
  "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>", "<｜tool▁calls▁begin｜>",
  "<｜tool▁call▁end｜>", "<｜fim▁hole｜>", "<|EOT|>", "<｜place▁holder▁no▁7｜>", "<｜▁pad▁｜>",
  "<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>",
  "<|reserved_special_token_5|>", "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>",
  "<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|vision_pad|>", "<｜User", "<|im_start", "<|im_end|",
  "</think", "<｜｜>", "<|", "|>", "<｜", "｜>",
];
const EMOJI = [
  "👨‍👩‍👧‍👦", "🏳️‍🌈", "👍🏽", "🇯🇵", "🇺🇸", "1️⃣", "❤️", "🦀", "😀", "🤖", "👩🏾‍💻", "🧑‍🤝‍🧑", "✨", "🔥",
  "👁️‍🗨️", "🐻‍❄️", "©", "™", "☃", "⚡", "🫠",
];
const SPACES = [" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", " \n", "\n ", "\u00a0", "\u3000", "\u2009",
  "\u200b", "\ufeff", "\u0085", "\u2028", " \t \n", "    ", "\n\n\n   ", "\r", "\x0b", "\x0c"];

function pick(r, arr) { return arr[Math.floor(r() * arr.length)]; }
function range(r, lo, hi) { return String.fromCodePoint(lo + Math.floor(r() * (hi - lo + 1))); }
function repeat(r, n, f) { let s = ""; for (let i = 0; i < n; ++i) s += f(); return s; }
function count(r, lo, hi) { return lo + Math.floor(r() * (hi - lo + 1)); }

const FRAGMENTS = {
  prose(r) {
    let s = "";
    const n = count(r, 3, 25);
    for (let i = 0; i < n; ++i) {
      let w = pick(r, WORDS);
      if (r() < 0.15) w = w[0].toUpperCase() + w.slice(1);
      if (r() < 0.05) w = w.toUpperCase();
      s += (i ? " " : "") + w;
      if (r() < 0.1) s += pick(r, CONTRACTIONS);
      if (r() < 0.12) s += pick(r, PUNCT);
    }
    return s;
  },
  code(r) { return pick(r, CODE); },
  digits(r) {
    const k = r();
    if (k < 0.5) return repeat(r, count(r, 1, 40), () => range(r, 0x30, 0x39));
    if (k < 0.6) return repeat(r, count(r, 1, 8), () => range(r, 0x30, 0x39)) + "." + repeat(r, count(r, 1, 6), () => range(r, 0x30, 0x39));
    if (k < 0.7) return repeat(r, count(r, 1, 7), () => range(r, 0xff10, 0xff19));  // fullwidth
    if (k < 0.8) return repeat(r, count(r, 1, 7), () => range(r, 0x0660, 0x0669));  // Arabic-Indic
    if (k < 0.9) return pick(r, ["²", "³", "½", "¼", "Ⅻ", "ⅷ", "①", "⑳", "𝟘𝟙", "〇", "٣٤٥", "१२३"]);
    return " " + repeat(r, count(r, 1, 12), () => range(r, 0x30, 0x39)) + " ";
  },
  cjk(r) {
    const k = r();
    if (k < 0.7) return repeat(r, count(r, 1, 30), () => range(r, 0x4e00, 0x9fa5));
    if (k < 0.8) return repeat(r, count(r, 1, 5), () => range(r, 0x9fa6, 0x9fff)) + range(r, 0x3400, 0x4dbf);
    return repeat(r, count(r, 1, 10), () => range(r, 0x4e00, 0x9fa5)) + pick(r, ["。", "，", "「", "」", "、", "！", "？", "：", "（", "）", "々"]);
  },
  kana(r) {
    const k = r();
    if (k < 0.4) return repeat(r, count(r, 1, 20), () => range(r, 0x3041, 0x3096));
    if (k < 0.8) return repeat(r, count(r, 1, 20), () => range(r, 0x30a0, 0x30ff));
    return repeat(r, count(r, 1, 10), () => range(r, 0xff66, 0xff9d));  // halfwidth katakana
  },
  hangul(r) {
    if (r() < 0.85) return repeat(r, count(r, 1, 15), () => range(r, 0xac00, 0xd7a3));
    return repeat(r, count(r, 1, 6), () => range(r, 0x1100, 0x1112) + range(r, 0x1161, 0x1175));
  },
  arabic(r) {
    let s = "";
    const n = count(r, 1, 8);
    for (let i = 0; i < n; ++i) {
      s += (i ? " " : "") + repeat(r, count(r, 1, 7), () => range(r, 0x0621, 0x064a) + (r() < 0.3 ? range(r, 0x064b, 0x0652) : ""));
      if (r() < 0.2) s += pick(r, ["،", "؟", "؛", "."]);
    }
    return s;
  },
  emoji(r) { return repeat(r, count(r, 1, 4), () => pick(r, EMOJI) + (r() < 0.3 ? " " : "")); },
  spaces(r) { return pick(r, SPACES); },
  special(r) { return pick(r, SPECIAL_TEXT); },
  marks(r) {
    return pick(r, ["e\u0301", "a\u0308\u0304", "n\u0303o", "\u0915\u094d\u0937", "हिन्दी", "ไทย", "עִבְרִית",
      "\u0301\u0302x", "x\u20dd", "Å", "A\u030a", "\u1e9b\u0323", "ﬁ", "Ｆｕｌｌ", "ſ", "'ſ", "İ", "ǅ"]);
  },
  misc(r) {
    return pick(r, ["\x00", "\x01\x02", "\x7f", "\u00ad", "\u200d", "\u2060", "\ue000", "\u{10ffff}", "\u{1d400}\u{1d401}",
      "§¶†‡", "€£¥₩", "°C", "\\", "\\n", "&amp;", "™®", "«»", "‘’", "´`^¨"]);
  },
};
const KINDS = Object.keys(FRAGMENTS);

// Returns `n` strings; the first ones cover each kind alone, the rest mix kinds.
export function generate_corpus(seed, n) {
  const r = mulberry32(seed);
  const out = [];
  for (let i = 0; i < n; ++i) {
    let s = "";
    if (i < KINDS.length * 40) {
      const kind = KINDS[i % KINDS.length];
      const parts = count(r, 1, 4);
      for (let j = 0; j < parts; ++j) s += FRAGMENTS[kind](r) + (r() < 0.5 ? pick(r, SPACES) : "");
    } else {
      const parts = count(r, 1, 7);
      for (let j = 0; j < parts; ++j) {
        s += FRAGMENTS[pick(r, KINDS)](r);
        const k = r();
        if (k < 0.4) s += " ";
        else if (k < 0.55) s += pick(r, SPACES);
      }
    }
    out.push(s);
  }
  return out;
}
