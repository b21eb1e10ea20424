// Bad requests surface as the SDKs' typed errors with the right status; a wrong or missing API
// key is a 401 in each API's format; oversized bodies are refused with 413; no stack traces.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startServer, API_KEY, MODEL } from './harness.mjs';

let server, openai, anthropic;
before(async () => {
  server = await startServer(['--max-body-bytes', '65536']);
  openai = new OpenAI({ apiKey: API_KEY, baseURL: `${server.base}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: API_KEY, baseURL: server.base, maxRetries: 0 });
});
after(async () => { await server?.stop(); });

async function rejects(promise, Type, status) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof Type, `expected ${Type.name}, got ${e?.constructor?.name}: ${e?.message}`);
    assert.equal(e.status, status);
    return e;
  }
  assert.fail(`expected ${Type.name}`);
}

test('OpenAI: invalid chat requests are BadRequestError / NotFoundError', async () => {
  const e1 = await rejects(openai.chat.completions.create({ model: MODEL, messages: [] }), OpenAI.BadRequestError, 400);
  assert.equal(e1.error?.type ?? e1.type, 'invalid_request_error');
  await rejects(openai.chat.completions.create({ model: MODEL, messages: [{ role: 'wizard', content: 'x' }] }), OpenAI.BadRequestError, 400);
  await rejects(openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], temperature: 'hot' }), OpenAI.BadRequestError, 400);
  const e2 = await rejects(openai.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }), OpenAI.NotFoundError, 404);
  assert.equal(e2.code, 'model_not_found');
  await rejects(openai.responses.create({ model: MODEL, input: 17 }), OpenAI.BadRequestError, 400);
});

test('Anthropic: invalid messages requests are BadRequestError / NotFoundError', async () => {
  const e = await rejects(anthropic.messages.create({ model: MODEL, max_tokens: 'ten', messages: [{ role: 'user', content: 'x' }] }), Anthropic.BadRequestError, 400);
  assert.equal(e.error?.type, 'error');
  assert.equal(e.error?.error?.type, 'invalid_request_error');
  await rejects(anthropic.messages.create({ model: MODEL, max_tokens: 4, messages: [] }), Anthropic.BadRequestError, 400);
  await rejects(anthropic.messages.create({ model: MODEL, max_tokens: 4, messages: [{ role: 'wizard', content: 'x' }] }), Anthropic.BadRequestError, 400);
  await rejects(anthropic.messages.create({ model: 'nope', max_tokens: 4, messages: [{ role: 'user', content: 'x' }] }), Anthropic.NotFoundError, 404);
});

test('wrong or missing API key: 401 AuthenticationError in both SDKs and over plain HTTP', async () => {
  const badOpenai = new OpenAI({ apiKey: 'sk-wrong', baseURL: `${server.base}/v1`, maxRetries: 0 });
  const e = await rejects(badOpenai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }), OpenAI.AuthenticationError, 401);
  assert.equal(e.code, 'invalid_api_key');
  await rejects(badOpenai.models.list(), OpenAI.AuthenticationError, 401);
  const badAnthropic = new Anthropic({ apiKey: 'sk-wrong', baseURL: server.base, maxRetries: 0 });
  const ea = await rejects(badAnthropic.messages.create({ model: MODEL, max_tokens: 4, messages: [{ role: 'user', content: 'x' }] }), Anthropic.AuthenticationError, 401);
  assert.equal(ea.error?.error?.type, 'authentication_error');
  // A key one character short of the real one.
  const shortKey = new OpenAI({ apiKey: API_KEY.slice(0, -1), baseURL: `${server.base}/v1`, maxRetries: 0 });
  await rejects(shortKey.models.list(), OpenAI.AuthenticationError, 401);

  const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'x' }] });
  const missing = await fetch(`${server.base}/v1/chat/completions`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  assert.equal(missing.status, 401);
  assert.equal((await missing.json()).error.type, 'authentication_error');
  // The right key as x-api-key works for OpenAI routes too.
  const ok = await fetch(`${server.base}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: MODEL, max_tokens: 1, messages: [{ role: 'user', content: 'x' }] }), headers: { 'content-type': 'application/json', 'x-api-key': API_KEY } });
  assert.equal(ok.status, 200);
  // Health and metrics stay open for probes and scrapers.
  assert.equal((await fetch(`${server.base}/health`)).status, 200);
  assert.equal((await fetch(`${server.base}/metrics`)).status, 200);
});

test('malformed JSON, oversized bodies and unknown routes get API-shaped errors', async () => {
  const h = { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` };
  const bad = await fetch(`${server.base}/v1/chat/completions`, { method: 'POST', body: '{"model": ', headers: h });
  assert.equal(bad.status, 400);
  const badBody = await bad.json();
  assert.equal(badBody.error.type, 'invalid_request_error');
  assert.doesNotMatch(JSON.stringify(badBody), /\.cpp|std::|terminate|0x[0-9a-f]{8}/);

  const big = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'x'.repeat(70000) }] });
  await rejects(openai.chat.completions.create(JSON.parse(big)), OpenAI.APIError, 413);
  const bigA = await fetch(`${server.base}/v1/messages`, { method: 'POST', body: big, headers: { ...h, 'anthropic-version': '2023-06-01' } });
  assert.equal(bigA.status, 413);
  assert.equal((await bigA.json()).error.type, 'request_too_large');

  const nf = await fetch(`${server.base}/v1/nothing`, { headers: h });
  assert.equal(nf.status, 404);
  assert.equal((await nf.json()).error.type, 'invalid_request_error');
});
