// The per-request deadline (--request-timeout): a request that runs past it is cancelled, the
// client gets the API's error (504 non-streamed; an error event streamed) and the KV blocks return.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, waitFor, API_KEY, MODEL } from './harness.mjs';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { sdkClients } from './sdk_clients.mjs';

let server, openai, anthropic;
before(async () => {
  server = await startServer(['--request-timeout', '1']);
  ({ openai, anthropic } = sdkClients(server));
});
after(async () => { await server?.stop(); });

const long = [{ role: 'user', content: 'Write a long essay.' }];
// min_tokens = max_tokens masks end-of-sequence: the output cannot end early, whatever is sampled.
const LONG = { max_tokens: 4000, min_tokens: 4000 };

test('non-streamed past the deadline: 504 in the API error format', async () => {
  await assert.rejects(openai.chat.completions.create({ model: MODEL, messages: long, ...LONG }),
    (e) => e instanceof OpenAI.InternalServerError && e.status === 504 && typeof e.error?.message === 'string');
  await assert.rejects(anthropic.messages.create({ model: MODEL, messages: long, ...LONG }),
    (e) => e instanceof Anthropic.InternalServerError && e.status === 504 && e.error?.type === 'error');
});

test('streamed past the deadline: the stream ends with the API error event; blocks come back', async () => {
  const r = await fetch(`${server.base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
    body: JSON.stringify({ model: MODEL, messages: long, ...LONG, stream: true }),
  });
  assert.equal(r.status, 200);
  const text = await r.text();
  const events = text.split('\n\n').filter((f) => f.startsWith('data: ')).map((f) => f.slice(6));
  assert.ok(events.length >= 1);
  const errors = events.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d)).filter((j) => j.error);
  assert.equal(errors.length, 1, text.slice(-500));
  const m = await waitFor(async () => {
    const x = await server.metrics();
    return x.deepinfer_num_requests_running === 0 && x.deepinfer_kv_blocks_free === x.deepinfer_kv_blocks_total ? x : null;
  }, 30000);
  assert.ok(m, 'blocks came back');
  assert.ok(m.deepinfer_http_deadline_exceeded_total >= 3);
});

test('n = 2 past the deadline: one 504 error body, or one error event and no [DONE] when streamed', async () => {
  await assert.rejects(openai.chat.completions.create({ model: MODEL, messages: long, ...LONG, n: 2 }),
    (e) => e instanceof OpenAI.InternalServerError && e.status === 504 && typeof e.error?.message === 'string');
  const r = await fetch(`${server.base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
    body: JSON.stringify({ model: MODEL, messages: long, ...LONG, n: 2, stream: true }),
  });
  assert.equal(r.status, 200);
  const text = await r.text();
  const events = text.split('\n\n').filter((f) => f.startsWith('data: ')).map((f) => f.slice(6));
  assert.ok(!events.includes('[DONE]'), 'a failed stream does not claim to be done');
  const parsed = events.map((d) => JSON.parse(d));
  assert.equal(parsed.filter((j) => j.error).length, 1, text.slice(-500));
  assert.ok(parsed.at(-1).error, 'the error event is the last');
  const indexes = new Set(parsed.flatMap((j) => (j.choices ?? []).map((c) => c.index)));
  assert.deepEqual([...indexes].sort(), [0, 1], 'both choices streamed before the deadline');
});

test('Responses past the deadline: 504 non-streamed; streamed, the stream ends with the failed response', async () => {
  const req = { model: MODEL, input: 'Write a long essay.', max_output_tokens: 4000 };
  await assert.rejects(openai.responses.create(req),
    (e) => e instanceof OpenAI.InternalServerError && e.status === 504 && /deadline/.test(e.error?.message ?? e.message));
  // As OpenAI's API does: no stream-level error event, the last event is response.failed with
  // the error in the response, so the SDK hands it over instead of throwing.
  const stream = await openai.responses.create({ ...req, stream: true });
  const types = [];
  let failed = null;
  for await (const ev of stream) {
    types.push(ev.type);
    if (ev.type === 'response.failed') failed = ev.response;
  }
  assert.equal(types[0], 'response.created');
  assert.equal(types.at(-1), 'response.failed');
  assert.ok(!types.includes('error'), types.join(' '));
  assert.equal(failed.status, 'failed');
  assert.equal(failed.error.code, 'server_error');
  assert.match(failed.error.message, /deadline/);
  // The SDK's stream helper ends with the same failed response.
  const final = await openai.responses.stream({ ...req }).finalResponse();
  assert.equal(final.status, 'failed');
  assert.equal(final.error.code, 'server_error');
  assert.match(final.error.message, /deadline/);
  assert.match(final.id, /^resp_/);
});

test('SIGTERM mid-stream: the stream ends with the API error event and the server exits 0', async () => {
  const r = await fetch(`${server.base}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: MODEL, messages: long, ...LONG, stream: true }),
  });
  assert.equal(r.status, 200);
  const reader = r.body.getReader();
  const first = await reader.read();  // the stream is running
  assert.ok(!first.done);
  const exited = server.stop();
  let text = new TextDecoder().decode(first.value);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  assert.match(text, /event: error\ndata: \{[^\n]*"type":"error"/);
  assert.match(text, /shutting down/);
  assert.equal(await exited, 0);
});
