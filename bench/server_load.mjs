// Load on `deepinfer serve`: N streamed Chat Completions at a fixed concurrency over loopback
// (plain fetch + SSE parsing, so the client's own cost stays small). Prints latency percentiles
// (time to first token, end to end), request and token throughput, and one JSON line.
// usage: node bench/server_load.mjs --url http://127.0.0.1:8000 [--api-key K] [--model tiny-v4]
//          [--requests 300] [--concurrency 32] [--max-tokens 32]
const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
const url = args.url ?? 'http://127.0.0.1:8000';
const apiKey = args['api-key'] ?? '';
const model = args.model ?? 'tiny-v4';
const total = Number(args.requests ?? 300);
const concurrency = Number(args.concurrency ?? 32);
const maxTokens = Number(args['max-tokens'] ?? 32);

const topics = ['the sea', 'mountains', 'a city at night', 'bread', 'rivers', 'winter', 'trains', 'libraries'];

async function one(i) {
  const body = JSON.stringify({
    model, stream: true, stream_options: { include_usage: true }, max_tokens: maxTokens,
    temperature: 0.8, seed: i, messages: [{ role: 'user', content: `Request ${i}: write about ${topics[i % topics.length]}.` }],
  });
  const t0 = performance.now();
  const r = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST', body, headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
  });
  if (r.status !== 200) throw new Error(`request ${i}: HTTP ${r.status} ${await r.text()}`);
  let ttft = null, usage = null, buf = '', done = false;
  const decoder = new TextDecoder();
  for await (const part of r.body) {
    buf += decoder.decode(part, { stream: true });
    let sep;
    while ((sep = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, sep);
      buf = buf.slice(sep + 2);
      for (const line of frame.split('\n')) {
        if (!line.startsWith('data: ')) continue;
        const data = line.slice(6);
        if (data === '[DONE]') { done = true; continue; }
        const j = JSON.parse(data);
        if (j.usage) usage = j.usage;
        const d = j.choices?.[0]?.delta;
        if (ttft === null && d && ((d.content ?? '') !== '' || (d.reasoning_content ?? '') !== '')) ttft = performance.now() - t0;
      }
    }
  }
  if (!done || !usage) throw new Error(`request ${i}: stream ended without [DONE] / usage`);
  return { ttft: ttft ?? performance.now() - t0, e2e: performance.now() - t0, tokens: usage.completion_tokens };
}

const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p / 100 * s.length))]; };

const results = [];
let next = 0;
const start = performance.now();
await Promise.all(Array.from({ length: concurrency }, async () => {
  while (next < total) results.push(await one(next++));
}));
const wall = (performance.now() - start) / 1000;
const tokens = results.reduce((a, r) => a + r.tokens, 0);
const ttft = results.map((r) => r.ttft), e2e = results.map((r) => r.e2e);
const f = (x) => (x / 1000).toFixed(3);
console.log(`requests ${results.length} at concurrency ${concurrency}, max_tokens ${maxTokens}, wall ${wall.toFixed(2)} s`);
console.log(`ttft  p50 ${f(pct(ttft, 50))} s  p90 ${f(pct(ttft, 90))} s  p99 ${f(pct(ttft, 99))} s`);
console.log(`e2e   p50 ${f(pct(e2e, 50))} s  p90 ${f(pct(e2e, 90))} s  p99 ${f(pct(e2e, 99))} s`);
console.log(`throughput ${(results.length / wall).toFixed(2)} req/s, ${(tokens / wall).toFixed(1)} completion tok/s (${tokens} tokens)`);
console.log(JSON.stringify({ requests: results.length, concurrency, max_tokens: maxTokens, wall_s: wall, tokens,
  req_per_s: results.length / wall, tok_per_s: tokens / wall,
  ttft_p50: pct(ttft, 50) / 1000, ttft_p90: pct(ttft, 90) / 1000, ttft_p99: pct(ttft, 99) / 1000,
  e2e_p50: pct(e2e, 50) / 1000, e2e_p90: pct(e2e, 90) / 1000, e2e_p99: pct(e2e, 99) / 1000 }));
