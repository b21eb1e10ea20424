// Many streams share the engine: 50 concurrent streaming clients all complete; a client that
// disconnects mid-stream or leaves a non-streamed request, on each of the three APIs, gets its
// engine request cancelled and its KV blocks back (/metrics).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, waitFor, MODEL } from './harness.mjs';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { sdkClients } from './sdk_clients.mjs';

let server, client, anthropic;
before(async () => {
  server = await startServer();
  ({ openai: client, anthropic } = sdkClients(server, { timeout: 600000 }));
});
after(async () => { await server?.stop(); });

test('50 concurrent streaming clients all complete', async () => {
  const one = async (i) => {
    const s = await client.chat.completions.create({
      model: MODEL, max_tokens: 8, temperature: 0.7, seed: i, stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: `Client ${i}: count to ten.` }],
    });
    let finish = null, usage = null, n = 0;
    for await (const c of s) {
      n++;
      if (c.usage) usage = c.usage;
      if (c.choices[0]?.finish_reason) finish = c.choices[0].finish_reason;
    }
    return { finish, usage, n };
  };
  // Meanwhile /metrics is sampled: the streams must share the engine's batch, not queue one by one.
  let done = false, maxRunning = 0;
  const sampler = (async () => {
    while (!done) {
      maxRunning = Math.max(maxRunning, (await server.metrics()).deepinfer_num_requests_running ?? 0);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => one(i)));
  done = true;
  await sampler;
  assert.ok(maxRunning >= 4, `at most ${maxRunning} sequences ran at once`);
  for (const r of results) {
    assert.ok(['stop', 'length', 'tool_calls'].includes(r.finish), JSON.stringify(r));
    assert.ok(r.usage && r.usage.completion_tokens >= 1 && r.usage.completion_tokens <= 8);
  }
  // The server counts a request when it has written the response's last byte, which may be a
  // moment after the client read it: wait for the count instead of racing it.
  const key = 'deepinfer_http_requests_total{route="/v1/chat/completions",status="200"}';
  const m = await waitFor(async () => { const x = await server.metrics(); return x[key] >= 50 ? x : null; }, 30000);
  assert.ok(m, 'all 50 counted: ' + JSON.stringify(await server.metrics()));
  assert.equal(m[key], 50);
  assert.ok(m.deepinfer_generation_tokens_total >= 50);
});

test('a client that disconnects mid-stream cancels its request and frees its KV blocks', async () => {
  const before = await server.metrics();
  const controller = new AbortController();
  const s = await client.chat.completions.create({
    model: MODEL, max_tokens: 4000, min_tokens: 4000, temperature: 0.7, seed: 7, stream: true,
    messages: [{ role: 'user', content: 'Tell me a very long story. '.repeat(8) }],
  }, { signal: controller.signal });
  let got = 0, finished = false;
  const during = { m: null };
  // The SDK ends the iteration quietly on abort; leaving the loop closes the connection too.
  for await (const c of s) {
    if (c.choices[0]?.finish_reason) finished = true;
    if (++got === 3) {
      during.m = await server.metrics();
      controller.abort();
      break;
    }
  }
  assert.equal(finished, false, 'the stream was cut before its end');
  assert.ok(got >= 3);
  // While it streamed it held blocks and was running.
  assert.equal(during.m.deepinfer_num_requests_running, 1);
  assert.ok(during.m.deepinfer_kv_blocks_free < during.m.deepinfer_kv_blocks_total);
  // After the disconnect: cancelled, nothing running, every block back in the pool.
  const after = await waitFor(async () => {
    const m = await server.metrics();
    return m.deepinfer_num_requests_running === 0 &&
      m.deepinfer_http_client_disconnects_total === (before.deepinfer_http_client_disconnects_total ?? 0) + 1 &&
      m.deepinfer_kv_blocks_free === m.deepinfer_kv_blocks_total ? m : null;
  }, 30000);
  assert.ok(after, 'blocks came back: ' + JSON.stringify(await server.metrics()));
  // The engine stopped early: far fewer tokens than max_tokens were generated.
  assert.ok(after.deepinfer_generation_tokens_total - before.deepinfer_generation_tokens_total < 2000);
});

test('a client that leaves a non-streamed request cancels it and frees its KV blocks', async () => {
  const before = await server.metrics();
  const controller = new AbortController();
  const pending = client.chat.completions.create({
    model: MODEL, max_tokens: 4000, min_tokens: 4000, temperature: 0.7, seed: 11,
    messages: [{ role: 'user', content: 'Tell me a very long story. '.repeat(8) }],
  }, { signal: controller.signal });
  const rejected = assert.rejects(pending, (e) => e instanceof OpenAI.APIUserAbortError);
  await assertGenerating(before);
  controller.abort();
  await rejected;
  const after = await waitFor(async () => {
    const m = await server.metrics();
    return m.deepinfer_num_requests_running === 0 &&
      m.deepinfer_http_client_disconnects_total === (before.deepinfer_http_client_disconnects_total ?? 0) + 1 &&
      m['deepinfer_http_requests_total{route="/v1/chat/completions",status="499"}'] === 1 &&
      m.deepinfer_kv_blocks_free === m.deepinfer_kv_blocks_total ? m : null;
  }, 30000);
  assert.ok(after, 'cancelled and blocks came back: ' + JSON.stringify(await server.metrics()));
  // What it generated before the cancel is still accounted for.
  assert.ok(after.deepinfer_http_completion_tokens_total > (before.deepinfer_http_completion_tokens_total ?? 0));
  // It ended early: far fewer tokens than max_tokens were generated.
  assert.ok(after.deepinfer_generation_tokens_total - before.deepinfer_generation_tokens_total < 2000);
});

// min_tokens = max_tokens: the output cannot end before the client leaves, whatever is sampled.
const LONG_PROMPT = 'Tell me a very long story. '.repeat(8);
const apis = {
  responses: {
    route: '/v1/responses',
    create: (extra, signal) => client.responses.create(
      { model: MODEL, input: LONG_PROMPT, max_output_tokens: 4000, min_tokens: 4000, temperature: 0.7, seed: 3, ...extra }, { signal }),
    isDelta: (ev) => ev.type.endsWith('.delta'),
    isEnd: (ev) => ['response.completed', 'response.incomplete', 'response.failed'].includes(ev.type),
    aborted: (e) => e instanceof OpenAI.APIUserAbortError,
  },
  messages: {
    route: '/v1/messages',
    create: (extra, signal) => anthropic.messages.create(
      { model: MODEL, max_tokens: 4000, min_tokens: 4000, temperature: 0.7, seed: 3, messages: [{ role: 'user', content: LONG_PROMPT }], ...extra },
      { signal }),
    isDelta: (ev) => ev.type === 'content_block_delta',
    isEnd: (ev) => ev.type === 'message_stop',
    aborted: (e) => e instanceof Anthropic.APIUserAbortError,
  },
};

// After a client left: its request cancelled, nothing running, every block back in the pool,
// one more disconnect counted, and far fewer tokens generated than the output asked for.
// Waits until the engine is generating the one request (holds blocks, tokens flow since
// `before`), however slow the machine.
async function assertGenerating(before) {
  const during = await waitFor(async () => {
    const m = await server.metrics();
    return m.deepinfer_num_requests_running === 1 &&
      m.deepinfer_generation_tokens_total > (before.deepinfer_generation_tokens_total ?? 0) ? m : null;
  }, 60000, 20);
  assert.ok(during, 'the request ran: ' + JSON.stringify(await server.metrics()));
  assert.ok(during.deepinfer_kv_blocks_free < during.deepinfer_kv_blocks_total);
}

async function assertCancelledAndFreed(before, extra = () => true) {
  const after = await waitFor(async () => {
    const m = await server.metrics();
    return m.deepinfer_num_requests_running === 0 &&
      m.deepinfer_http_client_disconnects_total === (before.deepinfer_http_client_disconnects_total ?? 0) + 1 &&
      m.deepinfer_kv_blocks_free === m.deepinfer_kv_blocks_total && extra(m) ? m : null;
  }, 30000);
  assert.ok(after, 'cancelled and blocks came back: ' + JSON.stringify(await server.metrics()));
  assert.ok(after.deepinfer_generation_tokens_total - before.deepinfer_generation_tokens_total < 2000);
  return after;
}

for (const [name, api] of Object.entries(apis)) {
  test(`${name}: a client that disconnects mid-stream cancels its request and frees its KV blocks`, async () => {
    const before = await server.metrics();
    const controller = new AbortController();
    const stream = await api.create({ stream: true }, controller.signal);
    let deltas = 0, ended = false, during = null;
    for await (const ev of stream) {
      if (api.isEnd(ev)) ended = true;
      if (api.isDelta(ev) && ++deltas === 3) {
        during = await server.metrics();
        controller.abort();
        break;
      }
    }
    assert.equal(ended, false, 'the stream was cut before its end');
    assert.equal(deltas, 3);
    // While it streamed it held blocks and was running.
    assert.equal(during.deepinfer_num_requests_running, 1);
    assert.ok(during.deepinfer_kv_blocks_free < during.deepinfer_kv_blocks_total);
    await assertCancelledAndFreed(before);
  });

  test(`${name}: a client that leaves a non-streamed request cancels it and frees its KV blocks`, async () => {
    const before = await server.metrics();
    const controller = new AbortController();
    const rejected = assert.rejects(api.create({}, controller.signal), api.aborted);
    await assertGenerating(before);
    controller.abort();
    await rejected;
    const key = `deepinfer_http_requests_total{route="${api.route}",status="499"}`;
    await assertCancelledAndFreed(before, (m) => m[key] === (before[key] ?? 0) + 1);
  });
}
