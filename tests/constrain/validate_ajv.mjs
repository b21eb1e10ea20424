// Validates generated outputs with ajv (draft 2020-12, formats from ajv-formats), a JSON Schema
// validator nobody here wrote. Input: JSON Lines files of {"name", "schema", "output"} where
// output is the generated text (the whole answer, or a tool call's arguments). Each record passes
// when the text parses as JSON and validates. Prints failures, then "N passed, M failed".
//   node tests/constrain/validate_ajv.mjs FILE.jsonl [...]
import fs from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const Ajv2020 = require("ajv/dist/2020").default;
const addFormats = require("ajv-formats").default;

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
addFormats(ajv);

let passed = 0;
let failed = 0;
const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node validate_ajv.mjs FILE.jsonl [...]");
  process.exit(2);
}
for (const file of files) {
  const lines = fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "");
  if (lines.length === 0) {
    console.log(`${file}: no outputs`);
    failed++;
  }
  for (const line of lines) {
    const rec = JSON.parse(line);
    let value;
    try {
      value = JSON.parse(rec.output);
    } catch (e) {
      console.log(`${rec.name}: not JSON (${e.message}): ${JSON.stringify(rec.output).slice(0, 200)}`);
      failed++;
      continue;
    }
    const validate = ajv.compile(rec.schema);
    if (validate(value)) {
      passed++;
    } else {
      console.log(`${rec.name}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(rec.output).slice(0, 200)}`);
      failed++;
    }
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
