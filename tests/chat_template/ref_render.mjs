// Renders every conversation of conversations.json with every template of templates.mjs through
// @huggingface/jinja (npm), the reference the C++ renderer is compared with byte for byte.
// Writes OUT_DIR/<template>.json: {"source", "bos_token", "eos_token", "renders": [{"name",
// "context", "text"} or {"name", "context", "error"}]}.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Template } from "@huggingface/jinja";
import { templates } from "./templates.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const outDir = process.argv[2];
if (!outDir) {
  console.error("usage: node ref_render.mjs OUT_DIR");
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
const { cases } = JSON.parse(readFileSync(join(here, "conversations.json"), "utf8"));

for (const t of templates()) {
  const template = new Template(t.source);
  const renders = [];
  for (const c of cases) {
    // transformers' apply_chat_template variables: tools is None when none are given.
    const context = { messages: c.messages, tools: c.tools, add_generation_prompt: c.add_generation_prompt, ...c.kwargs };
    if (t.bos_token !== undefined) context.bos_token = t.bos_token;
    if (t.eos_token !== undefined) context.eos_token = t.eos_token;
    try {
      renders.push({ name: c.name, context, text: template.render(structuredClone(context)) });
    } catch (e) {
      renders.push({ name: c.name, context, error: String(e.message ?? e) });
    }
  }
  writeFileSync(join(outDir, `${t.name}.json`), JSON.stringify({ source: t.source, bos_token: t.bos_token ?? null, eos_token: t.eos_token ?? null, renders }, null, 1));
  const errors = renders.filter((r) => r.error).length;
  console.log(`${t.name}: ${renders.length} renders, ${errors} errors`);
}
