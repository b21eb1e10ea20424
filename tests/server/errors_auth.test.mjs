// Bad requests surface as the SDKs' typed errors with the right status; a wrong or missing API
// key is a 401 in each API's format; oversized bodies are refused with 413; no stack traces;
// stalled clients are dropped after the read timeout, streaming clients that stop reading after
// the write timeout; every request leaves one JSON log line.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import net from 'node:net';
import { spawn } from 'node:child_process';
import os from 'node:os';
import { startServer, waitFor, API_KEY, MODEL } from './harness.mjs';

let server, openai, anthropic;
before(async () => {
  server = await startServer(['--max-body-bytes', '65536', '--read-timeout', '1', '--write-timeout', '1']);
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

// Opens a raw connection, writes `head` and nothing more; resolves with how long the server
// took to close it and what it sent back.
function stall(port, head) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    let got = '';
    const sock = net.connect(port, '127.0.0.1', () => sock.write(head));
    sock.setEncoding('utf8');
    sock.on('data', (d) => { got += d; });
    sock.on('error', () => {});
    sock.on('close', () => resolve({ ms: Date.now() - t0, got }));
    setTimeout(() => { sock.destroy(); reject(new Error('the server kept a stalled connection open for 20 s')); }, 20000);
  });
}

test('read timeout: clients that stall in the headers or the body are dropped; others are served meanwhile', async () => {
  const headers = stall(server.port, 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: appl');
  const body = stall(server.port, `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\n` +
    'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model": "');
  // While both hold a connection, a well-behaved client gets its answer.
  const r = await openai.chat.completions.create({ model: MODEL, max_tokens: 1, messages: [{ role: 'user', content: 'x' }] });
  assert.equal(r.object, 'chat.completion');
  for (const s of await Promise.all([headers, body])) {
    // The head within --header-timeout (10 s default), the body within --read-timeout 1;
    // never answered 200.
    assert.ok(s.ms >= 900 && s.ms < 15000, `closed after ${s.ms} ms`);
    assert.doesNotMatch(s.got, /^HTTP\/1\.1 200/);
  }
  assert.equal((await fetch(`${server.base}/health`)).status, 200);
});

// A client that sends its request and then reads nothing: node cannot shrink a socket's receive
// buffer, so a python3 one-liner holds the connection with SO_RCVBUF at the kernel's minimum.
// It prints "sent" once the request is out and keeps the socket unread until its stdin closes.
const NEVER_READS = `
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
s.connect(("127.0.0.1", int(sys.argv[1])))
s.sendall(sys.argv[2].encode())
print("sent", flush=True)
sys.stdin.read()
`;

test('write timeout: a streaming client that stops reading is dropped and its request cancelled', async () => {
  const before = await server.metrics();
  // Far more output than the client's buffer holds, and more than the test waits for: the
  // request can only end early by being cancelled.
  const body = JSON.stringify({ model: MODEL, stream: true, max_tokens: 12000, min_tokens: 12000,
    messages: [{ role: 'user', content: 'Write a very long essay.' }] });
  const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const py = spawn('python3', ['-c', NEVER_READS, String(server.port), head], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    await new Promise((resolve, reject) => {
      py.on('error', reject);
      py.on('exit', (code) => reject(new Error(`python3 exited (${code}) before sending`)));
      py.stdout.on('data', (d) => { if (String(d).includes('sent')) resolve(); });
    });
    const sent = Date.now();
    // It runs, then (the client's buffer full, nothing read for --write-timeout 1) is dropped:
    // cancelled, counted, its blocks back. Measured ~2 s on a Debug build; the bound is 60 s.
    const after = await waitFor(async () => {
      const m = await server.metrics();
      return m.deepinfer_http_write_timeouts_total === (before.deepinfer_http_write_timeouts_total ?? 0) + 1 &&
        m.deepinfer_num_requests_running === 0 && m.deepinfer_kv_blocks_free === m.deepinfer_kv_blocks_total ? m : null;
    }, 60000, 50);
    const ms = Date.now() - sent;
    assert.ok(after, 'dropped and cancelled: ' + JSON.stringify(await server.metrics()));
    assert.ok(ms >= 900, `dropped after ${ms} ms, before the write timeout`);
    assert.equal(after.deepinfer_http_client_disconnects_total, (before.deepinfer_http_client_disconnects_total ?? 0) + 1);
    assert.ok(after.deepinfer_generation_tokens_total - (before.deepinfer_generation_tokens_total ?? 0) < 12000,
      'the engine stopped before the end of the output');
    const line = await waitFor(() => server.logs.map((l) => JSON.parse(l)).find((j) => j.outcome === 'write_timeout'), 10000);
    assert.ok(line, 'a request log line with outcome write_timeout');
    assert.equal(line.stream, true);
  } finally {
    py.stdin.end();
    py.kill();
  }
});

test('structured logs: one JSON line per request carrying its x-request-id, route, status and tokens', async () => {
  const r = await fetch(`${server.base}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
    body: JSON.stringify({ model: MODEL, max_tokens: 2, messages: [{ role: 'user', content: 'log me' }] }),
  });
  assert.equal(r.status, 200);
  const id = r.headers.get('x-request-id');
  assert.match(id, /^req_[0-9a-f]{16}$/);
  const usage = (await r.json()).usage;
  const bad = await fetch(`${server.base}/v1/messages`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
    body: JSON.stringify({ model: MODEL, max_tokens: -3, messages: [{ role: 'user', content: 'x' }] }),
  });
  assert.equal(bad.status, 400);
  const badId = bad.headers.get('x-request-id');
  assert.notEqual(badId, id);
  const find = (rid) => server.logs.map((l) => JSON.parse(l)).find((j) => j.event === 'request' && j.request_id === rid);
  const line = await waitFor(() => find(id), 10000);
  assert.ok(line, 'a request line for ' + id);
  for (const l of server.logs) assert.doesNotThrow(() => JSON.parse(l), l);  // every line is JSON
  assert.equal(line.level, 'info');
  assert.match(line.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(line.route, '/v1/chat/completions');
  assert.equal(line.status, 200);
  assert.equal(line.prompt_tokens, usage.prompt_tokens);
  assert.equal(line.completion_tokens, usage.completion_tokens);
  assert.equal(typeof line.duration_ms, 'number');
  const badLine = await waitFor(() => find(badId), 10000);
  assert.equal(badLine.status, 400);
  assert.match(badLine.error, /max_tokens/);
});

// Bodies that are wrong in every way a client can get them wrong, for each API: each gets a 4xx
// with that API's error envelope, quickly, and the server keeps serving.
const user = [{ role: 'user', content: 'x' }];
const SYNTAX = [
  '', ' ', 'null', '[]', '"x"', '17', '{', '{"model":', '{"a":1}{"b":2}', '\u0000', '{"model":"\ud800"}',
  Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),  // {"<invalid UTF-8>":1}
  '['.repeat(100000) + ']'.repeat(100000),
  JSON.stringify({ model: MODEL }),
];
const CHAT = [
  { model: 17, messages: user, max_tokens: 1 },
  { model: MODEL, max_tokens: 1, messages: user, stream: 'yes' },
  { model: MODEL, max_tokens: 1, messages: user, temperature: -1 },
  { model: MODEL, max_tokens: 1, messages: user, top_p: 7 },
  { model: MODEL, max_tokens: 1e300, messages: user },
  { model: MODEL, max_tokens: 2 ** 53, messages: user },
  { model: MODEL, max_tokens: 1, messages: [{ role: 'user', content: [{ type: 'nope' }] }] },
  { model: MODEL, max_tokens: 1, messages: [{ role: 'user' }] },
  { model: MODEL, max_tokens: 1, messages: [null] },
  { model: MODEL, max_tokens: 1, messages: user, tools: [{ type: 'function' }] },
  { model: MODEL, max_tokens: 1, messages: user, tools: 'all' },
  { model: MODEL, max_tokens: 1, messages: user, stop: [1] },
  { model: MODEL, max_tokens: 1, messages: user, seed: 'abc' },
  { model: MODEL, max_tokens: 1, messages: user, stream: true, temperature: -1 },  // refused before any event
  { model: MODEL, max_tokens: 1, messages: user, response_format: { type: 'json_schema', json_schema: { name: 'a', schema: { type: 'bogus' } } } },
];
const RESPONSES = [
  { model: MODEL, max_output_tokens: -1, input: 'x' },
  { model: MODEL, max_output_tokens: 1, input: [{ role: 'wizard', content: 'x' }] },
  { model: MODEL, max_output_tokens: 1, input: [null] },
  { model: MODEL, max_output_tokens: 1, input: 'x', temperature: 'hot' },
  { model: MODEL, max_output_tokens: 1, input: 'x', tools: 'all' },
  { model: MODEL, max_output_tokens: 1, input: 'x', stream: true, temperature: 'hot' },
  { model: MODEL, max_output_tokens: 1, input: 'x', tools: [{ type: 'function' }] },
  { model: MODEL, max_output_tokens: 1, input: 'x', text: { format: { type: 'json_schema', name: 'a', schema: { type: 'bogus' } } } },
];
const MESSAGES = [
  { model: MODEL, max_tokens: 0, messages: user },
  { model: MODEL, max_tokens: 1, messages: [{ role: 'wizard', content: 'x' }] },
  { model: MODEL, max_tokens: 1, messages: [{ role: 'user', content: [{ type: 'image' }] }] },
  { model: MODEL, max_tokens: 1, messages: user, stop_sequences: [1] },
  { model: MODEL, max_tokens: 1, messages: user, tools: [{ input_schema: {} }] },
  { model: MODEL, max_tokens: 1, messages: user, thinking: { type: 'sometimes' } },
  { model: MODEL, max_tokens: 1, messages: user, temperature: 5 },
  { model: MODEL, max_tokens: 1, messages: user, stream: true, top_p: 7 },
];

test('malformed bodies on every API: a 4xx in that API\'s envelope, never a crash or a hang', async () => {
  const openaiEnvelope = (b) => typeof b.error?.message === 'string' && typeof b.error?.type === 'string';
  const routes = [
    ['/v1/chat/completions', {}, openaiEnvelope, CHAT],
    ['/v1/responses', {}, openaiEnvelope, RESPONSES],
    ['/v1/messages', { 'anthropic-version': '2023-06-01' },
      (b) => b.type === 'error' && typeof b.error?.type === 'string' && typeof b.error?.message === 'string', MESSAGES],
  ];
  for (const [route, extra, envelope, semantic] of routes) {
    for (const body of [...SYNTAX, ...semantic.map((b) => JSON.stringify(b))]) {
      const what = `${route} ${String(body).slice(0, 160)}`;
      let r;
      try {
        r = await fetch(`${server.base}${route}`, {
          method: 'POST', body, signal: AbortSignal.timeout(15000),
          headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}`, ...extra },
        });
      } catch (e) {
        assert.fail(`${what}: ${e.message}`);
      }
      const text = await r.text();
      assert.ok(r.status >= 400 && r.status < 500, `${what}: ${r.status} ${text.slice(0, 200)}`);
      const j = JSON.parse(text);
      assert.ok(envelope(j), `${what}: ${text}`);
      assert.doesNotMatch(text, /\.cpp|std::|terminate|what\(\)/, what);
    }
  }
  assert.equal((await fetch(`${server.base}/health`)).status, 200);
});

// /metrics is Prometheus text exposition (version 0.0.4): checked line by line against the
// format's rules rather than against a list of names.
test('/metrics is well-formed Prometheus text: typed families, valid samples, consistent histograms', async () => {
  const r = await fetch(`${server.base}/metrics`);
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const text = await r.text();
  assert.ok(text.endsWith('\n'));
  const types = new Map(), samples = new Map();
  const name = '[a-zA-Z_:][a-zA-Z0-9_:]*';
  const sampleRe = new RegExp(`^(${name})(\\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\.)*",?)*\\})? (-?[0-9.e+-]+|NaN|\\+Inf|-Inf)$`);
  for (const line of text.split('\n').filter(Boolean)) {
    let m;
    if ((m = line.match(new RegExp(`^# TYPE (${name}) (counter|gauge|histogram|summary|untyped)$`)))) {
      assert.ok(!types.has(m[1]), `one TYPE per family: ${m[1]}`);
      types.set(m[1], m[2]);
      continue;
    }
    if (line.startsWith('# HELP ') || line.startsWith('#')) continue;
    m = line.match(sampleRe);
    assert.ok(m, `sample line: ${line}`);
    const family = m[1].replace(/_(bucket|sum|count)$/, (x) => (types.has(m[1]) ? x : ''));
    assert.ok(types.has(family) || types.has(m[1]), `sample of a typed family: ${line}`);
    const v = Number(m[3].replace('+Inf', 'Infinity'));
    if (types.get(family) === 'counter') assert.ok(v >= 0, line);
    samples.set(m[1] + (m[2] ?? ''), v);
  }
  for (const [fam, type] of types) {
    if (type !== 'histogram') continue;
    const buckets = [...samples].filter(([k]) => k.startsWith(`${fam}_bucket{`));
    assert.ok(buckets.length >= 2, fam);
    for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i][1] >= buckets[i - 1][1], `${fam} buckets are cumulative`);
    assert.ok(buckets.at(-1)[0].includes('le="+Inf"'), `${fam} ends with +Inf`);
    assert.equal(buckets.at(-1)[1], samples.get(`${fam}_count`), `${fam}: +Inf bucket = count`);
  }
  assert.ok(types.get('deepinfer_http_requests_total') === 'counter');
  assert.ok(samples.get('deepinfer_kv_blocks_total') > 0);
});

test('without --host the server listens on loopback only', async (t) => {
  const listening = server.logs.map((l) => JSON.parse(l)).find((j) => j.event === 'listening');
  assert.equal(listening.host, '127.0.0.1');
  const external = Object.values(os.networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal);
  if (!external) return t.skip('this machine has no non-loopback IPv4 address');
  const refused = await new Promise((resolve) => {
    const sock = net.connect(server.port, external.address);
    sock.on('connect', () => { sock.destroy(); resolve(false); });
    sock.on('error', (e) => resolve(e.code));
  });
  assert.equal(refused, 'ECONNREFUSED', `${external.address}:${server.port} must not answer`);
});
