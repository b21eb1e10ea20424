// Single-thread encode speed of @huggingface/tokenizers (Node) on a JSON Lines text file:
// prints {"mb_per_s": ..., "bytes": ..., "seconds": ...}. Same documents, same loop shape and
// same clock (process CPU time, user + system) as bench_tokenizer. usage: node hf_tokenizer_speed.mjs TOKENIZER_DIR TEXT.jsonl
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

// The package is installed for the tests (tests/node_modules), not next to this script.
const require = createRequire(path.join(path.dirname(new URL(import.meta.url).pathname), "..", "tests", "package.json"));
const mod = await import(require.resolve("@huggingface/tokenizers"));
const Tokenizer = mod.Tokenizer ?? mod.default.Tokenizer;

const [dir, file] = process.argv.slice(2);
const json = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
const config = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8"));
const tok = new Tokenizer(json, config);
const docs = fs.readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l).text);
const bytes = docs.reduce((n, d) => n + Buffer.byteLength(d), 0);
tok.encode(docs[0]);  // warm up
const t0 = process.cpuUsage();
let ids = 0;
for (const d of docs) ids += tok.encode(d, { add_special_tokens: false }).ids.length;
const used = process.cpuUsage(t0);
const seconds = (used.user + used.system) / 1e6;
console.log(JSON.stringify({ mb_per_s: bytes / 1e6 / seconds, bytes, seconds, ids }));
