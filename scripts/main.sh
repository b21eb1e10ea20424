#!/usr/bin/env bash
# The main job: build (bootstrapping a fresh machine if needed) and show what DeepInfer does.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh >/dev/null
build=${DI_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target deepinfer_cli example_core >/dev/null
"$build/bin/deepinfer" info
"$build/bin/example_core"
# The bundled demo model: a small DeepSeek-V4 really trained on the King James Bible and WordNet
# (models/deepseek-v4-demo/README.md says how). A streamed continuation, then a chat turn through
# the recipe's V4 prompt format (its reasoning on stderr, its answer on stdout).
model=models/deepseek-v4-demo
"$build/bin/deepinfer" generate --model "$model" --prompt "And God said," \
  --max-tokens 40 --temperature 0.6 --seed 0 --repetition-penalty 1.2 --stream
echo
"$build/bin/deepinfer" chat --model "$model" --thinking --message 'What does "light" mean?'

# The server on the same model: a free loopback port, one Chat Completions request and one streamed
# Anthropic Messages request with curl, then a clean shutdown (SIGTERM).
log=$(mktemp)
"$build/bin/deepinfer" serve --model "$model" --port 0 --api-key sk-local 2>"$log" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$log"' EXIT
port=""
for _ in $(seq 1 600); do
  port=$(grep -o '"port":[0-9]*' "$log" | head -1 | cut -d: -f2 || true)
  [ -n "$port" ] && curl -sf "localhost:$port/health" >/dev/null && break
  kill -0 "$server" 2>/dev/null || { cat "$log"; exit 1; }
  sleep 0.2
done
[ -n "$port" ] || { echo "main.sh: the server did not start" >&2; cat "$log"; exit 1; }
echo "== deepinfer serve on 127.0.0.1:$port"
curl -sS "localhost:$port/v1/chat/completions" -H 'Authorization: Bearer sk-local' -H 'content-type: application/json' \
  -d '{"model": "deepseek-v4-demo", "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 64, "seed": 0}'
echo
curl -sSN "localhost:$port/v1/messages" -H 'x-api-key: sk-local' -H 'content-type: application/json' \
  -d '{"model": "deepseek-v4-demo", "max_tokens": 64, "stream": true, "messages": [{"role": "user", "content": "Hi"}]}'
kill -TERM "$server"
wait "$server"
