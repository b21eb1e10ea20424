// Writes the tokenizer benchmark texts as JSON Lines {"text": ...}, one document per line:
// prose.jsonl (English prose) and mixed.jsonl (the test generator's mix: code, digits, CJK, kana,
// Hangul, Arabic, emoji, whitespace, special-token text), each about MB megabytes.
// usage: node make_tokenizer_corpus.mjs OUT_DIR [MB]
import fs from "node:fs";
import path from "node:path";
import { generate_corpus, mulberry32 } from "../tests/tokenizer/corpus.mjs";

const out = process.argv[2];
const mb = Number(process.argv[3] ?? 10);
fs.mkdirSync(out, { recursive: true });

const WORDS = ("the of and to in is you that it he was for on are as with his they I at be this have from or " +
  "one had by word but not what all were we when your can said there use an each which she do how their if will " +
  "up other about out many then them these so some her would make like him into time has look two more write go " +
  "see number no way could people my than first water been call who oil its now find long down day did get come " +
  "made may part over new sound take only little work know place year live me back give most very after thing our " +
  "just name good sentence man think say great where help through much before line right too mean old any same " +
  "tell boy follow came want show also around form three small set put end does another well large must big even " +
  "such because turn here why ask went men read need land different home us move try kind hand picture again " +
  "change off play spell air away animal house point page letter mother answer found study still learn should " +
  "America world inference tokenizer engine attention model").split(" ");

function prose(r, bytes) {
  let s = "";
  while (s.length < bytes) {
    const n = 6 + Math.floor(r() * 18);
    let sent = "";
    for (let i = 0; i < n; ++i) {
      const w = WORDS[Math.floor(r() * WORDS.length)];
      sent += (i ? " " : "") + (i === 0 ? w[0].toUpperCase() + w.slice(1) : w);
      if (r() < 0.08) sent += ",";
      if (r() < 0.03) sent += "'s";
    }
    s += sent + (r() < 0.9 ? ". " : "? ");
    if (r() < 0.15) s += "\n\n";
  }
  return s;
}

function write(name, docs) {
  fs.writeFileSync(path.join(out, name), docs.map((text) => JSON.stringify({ text })).join("\n") + "\n");
}

const target = mb * 1024 * 1024;
const r = mulberry32(7);
const prose_docs = [];
for (let total = 0; total < target;) {
  const d = prose(r, 2000 + Math.floor(r() * 6000));
  prose_docs.push(d);
  total += Buffer.byteLength(d);
}
write("prose.jsonl", prose_docs);

const mixed_docs = [];
let seed = 1;
for (let total = 0; total < target;) {
  const d = generate_corpus(seed++, 20).join("\n");
  mixed_docs.push(d);
  total += Buffer.byteLength(d);
}
write("mixed.jsonl", mixed_docs);
console.log(`${out}: prose ${prose_docs.length} docs, mixed ${mixed_docs.length} docs`);
