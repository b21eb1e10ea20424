// Legacy text completions (POST /v1/completions) through the official `openai` client's
// `completions` resource: the prompt goes to the engine as it is, so the greedy text must equal
// what `deepinfer generate` writes for the same prompt and sampling; streamed = non-streamed;
// logprobs in the legacy shape; max_tokens defaults to 16; bad fields are OpenAI 400s.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { startServer, API_KEY, MODEL } from './harness.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(process.env.DI_BUILD_DIR || path.join(root, 'build'), 'bin', 'deepinfer');
const modelDir = process.env.DI_TINY_MODEL || path.join(root, 'models', 'tiny-v4');

let server, client;
before(async () => {
  server = await startServer();
  client = new OpenAI({ apiKey: API_KEY, baseURL: `${server.base}/v1`, maxRetries: 0, timeout: 60000 });
});
after(async () => { await server?.stop(); });

const prompt = 'The capital of France is';

test('the greedy completion is what `deepinfer generate` writes for the same prompt', async () => {
  const r = await client.completions.create({ model: MODEL, prompt, max_tokens: 12, temperature: 0 });
  assert.equal(r.object, 'text_completion');
  assert.match(r.id, /^cmpl-/);
  assert.equal(r.model, MODEL);
  assert.equal(r.choices.length, 1);
  assert.equal(r.choices[0].index, 0);
  const ref = JSON.parse(execFileSync(bin, ['generate', '--model', modelDir, '--prompt', prompt,
                                            '--max-tokens', '12', '--temperature', '0', '--json'],
                                      { encoding: 'utf8' }).trim().split('\n').at(-1));
  const refText = ref.text ?? ref.outputs?.[0]?.text ?? ref.completions?.[0]?.text;
  assert.equal(typeof refText, 'string', JSON.stringify(ref));
  assert.equal(r.choices[0].text, refText);
  assert.ok(['stop', 'length'].includes(r.choices[0].finish_reason));
  assert.ok(r.usage.prompt_tokens > 0);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
});

test('streamed chunks add up to the non-streamed text; include_usage ends with usage', async () => {
  const full = await client.completions.create({ model: MODEL, prompt, max_tokens: 10, temperature: 0 });
  const stream = await client.completions.create({
    model: MODEL, prompt, max_tokens: 10, temperature: 0, stream: true, stream_options: { include_usage: true },
  });
  let text = '', finish = null, usage = null;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'text_completion');
    if (chunk.usage) { usage = chunk.usage; assert.equal(chunk.choices.length, 0); continue; }
    text += chunk.choices[0].text;
    if (chunk.choices[0].finish_reason) finish = chunk.choices[0].finish_reason;
  }
  assert.equal(text, full.choices[0].text);
  assert.equal(finish, full.choices[0].finish_reason);
  assert.deepEqual(usage, full.usage);
});

test('token-id prompts, echo, n and stop', async () => {
  const ids = await client.completions.create({ model: MODEL, prompt: [0, 100, 200], max_tokens: 4, temperature: 0 });
  assert.equal(ids.usage.prompt_tokens, 3);
  const echoed = await client.completions.create({ model: MODEL, prompt, max_tokens: 6, temperature: 0, echo: true });
  const plain = await client.completions.create({ model: MODEL, prompt, max_tokens: 6, temperature: 0 });
  assert.equal(echoed.choices[0].text, prompt + plain.choices[0].text);
  const many = await client.completions.create({ model: MODEL, prompt, max_tokens: 6, temperature: 1, seed: 3, n: 3 });
  assert.deepEqual(many.choices.map((c) => c.index), [0, 1, 2]);
  assert.ok(many.usage.completion_tokens >= 3 && many.usage.completion_tokens <= 18, JSON.stringify(many.usage));
  // A stop string cut out of the greedy text: the text ends before it.
  const t = plain.choices[0].text;
  const cut = [...t].slice(2, 3).join('');
  if (cut.trim()) {
    const stopped = await client.completions.create({ model: MODEL, prompt, max_tokens: 6, temperature: 0, stop: [cut] });
    assert.equal(stopped.choices[0].text, t.slice(0, t.indexOf(cut)));
    assert.equal(stopped.choices[0].finish_reason, 'stop');
  }
});

test('max_tokens defaults to 16, as in OpenAI\'s API', async () => {
  const r = await client.completions.create({ model: MODEL, prompt, temperature: 0, stop: null });
  assert.ok(r.usage.completion_tokens <= 16, JSON.stringify(r.usage));
  if (r.choices[0].finish_reason === 'length') assert.equal(r.usage.completion_tokens, 16);
});

test('logprobs: the sampled token and the alternatives, spelled, in the legacy shape', async () => {
  const r = await client.completions.create({ model: MODEL, prompt, max_tokens: 5, temperature: 0, logprobs: 3 });
  const lp = r.choices[0].logprobs;
  assert.equal(lp.tokens.length, r.usage.completion_tokens);
  assert.equal(lp.token_logprobs.length, lp.tokens.length);
  assert.equal(lp.top_logprobs.length, lp.tokens.length);
  for (let i = 0; i < lp.tokens.length; i++) {
    assert.ok(lp.token_logprobs[i] <= 0);
    const alts = Object.entries(lp.top_logprobs[i]);
    assert.ok(alts.length >= 1 && alts.length <= 3);
    // Greedy: the sampled token is the most likely one.
    const best = Math.max(...alts.map(([, v]) => v));
    assert.ok(Math.abs(best - lp.token_logprobs[i]) < 1e-4, JSON.stringify({ alts, lp: lp.token_logprobs[i] }));
    assert.ok(lp.tokens[i] in lp.top_logprobs[i]);
  }
  assert.equal(lp.tokens.join(''), r.choices[0].text);
  // Offsets count characters (code points), as OpenAI's API and vLLM do.
  assert.deepEqual(lp.text_offset, lp.tokens.map((_, i) => [...lp.tokens.slice(0, i).join('')].length));
});

test('bad requests are OpenAI 400s naming the field; an unknown model is a 404', async () => {
  const cases = [
    [{ model: MODEL }, 'prompt'],
    [{ model: MODEL, prompt: ['a', 'b'] }, 'prompt'],
    [{ model: MODEL, prompt: [1, -2] }, 'prompt[1]'],
    [{ model: MODEL, prompt, logprobs: 99 }, 'logprobs'],
    [{ model: MODEL, prompt, suffix: 'x' }, 'suffix'],
    [{ model: MODEL, prompt, n: 0 }, 'n'],
  ];
  for (const [body, param] of cases) {
    await assert.rejects(client.completions.create(body), (e) => {
      assert.equal(e.status, 400, JSON.stringify(body));
      assert.equal(e.error?.param ?? e.param, param);
      return true;
    });
  }
  await assert.rejects(client.completions.create({ model: MODEL, prompt, temperature: 'hot' }), (e) => {
    assert.equal(e.status, 400);
    assert.match(e.message, /temperature/);
    return true;
  });
  await assert.rejects(client.completions.create({ model: 'nope', prompt }), (e) => {
    assert.equal(e.status, 404);
    assert.equal(e.code, 'model_not_found');
    return true;
  });
});
