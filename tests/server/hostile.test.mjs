// Issue 25's adversarial probe, one test per row of its table, against `deepinfer serve` on the
// tiny model: requests built to crash the server, exhaust it without a key, or smuggle requests
// past a proxy. Every attack must end in a clear 4xx (or a bounded close) with the server still
// answering. Bounds are loose (a loaded 2-core machine): "within seconds" where normal is ms.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startServer, API_KEY, MODEL } from './harness.mjs';

let server;
before(async () => {
  server = await startServer(['--max-body-bytes', '1048576', '--header-timeout', '3', '--read-timeout', '5',
                              '--max-connections-per-client', '512',
                              '--shutdown-timeout', '2']);
});
after(async () => { await server.stop(); });

const auth = { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json' };

// Sends raw bytes, returns { status, text, ms } once the server closes or `ms` pass.
function raw(port, bytes, { ms = 15000, host = '127.0.0.1', until } = {}) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    let got = Buffer.alloc(0);
    const sock = net.connect(port, host, () => sock.write(bytes));
    const done = () => {
      const text = got.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve({ status: m ? Number(m[1]) : 0, text, ms: Date.now() - t0 });
      sock.destroy();
    };
    sock.on('data', (d) => { got = Buffer.concat([got, d]); if (until && got.toString('latin1').includes(until)) done(); });
    sock.on('error', () => {});
    sock.on('close', done);
    setTimeout(done, ms);
  });
}

async function post(pathname, body, headers = auth) {
  const r = await fetch(`${server.base}${pathname}`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: r.status, body: await r.json().catch(() => null) };
}

async function alive() {
  assert.equal((await fetch(`${server.base}/health`)).status, 200, 'the server is still up');
}

const nested = (n) => '['.repeat(n) + ']'.repeat(n);

test('row 1: tool-call arguments nested 50,000 deep are a 400 json_too_deep (Chat and Responses), no crash', async () => {
  const args = `{"a":${nested(50000)}}`;
  const chat = await post('/v1/chat/completions', {
    model: MODEL, max_tokens: 1,
    messages: [{ role: 'user', content: 'x' },
               { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: args } }] },
               { role: 'tool', tool_call_id: 'c1', content: 'r' }],
  });
  assert.equal(chat.status, 400);
  assert.equal(chat.body.error.type, 'invalid_request_error');
  assert.equal(chat.body.error.code, 'json_too_deep');
  const resp = await post('/v1/responses', {
    model: MODEL, max_output_tokens: 16,
    input: [{ role: 'user', content: 'x' }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: args },
            { type: 'function_call_output', call_id: 'c1', output: 'r' }],
  });
  assert.equal(resp.status, 400);
  assert.equal(resp.body.error.code, 'json_too_deep');
  await alive();
});

test('row 2: a json_schema pattern of 10,000 nested groups is a 400 naming the nesting, no crash', async () => {
  const pattern = '('.repeat(10000) + 'a' + ')'.repeat(10000);
  const r = await post('/v1/chat/completions', {
    model: MODEL, max_tokens: 1, messages: [{ role: 'user', content: 'x' }],
    response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object', properties: { a: { type: 'string', pattern } } } } },
  });
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.notEqual(r.body.error.code, 'context_length_exceeded');
  assert.match(r.body.error.message, /nested deeper/);
  await alive();
});

test('row 3: chunked, encoded and keyless bodies are refused before they are read', async () => {
  const big = Buffer.alloc(10 << 20, 'a');
  // 10 MB chunked with a key and a 1 MiB limit: 413.
  const chunked = await raw(server.port, Buffer.concat([
    Buffer.from(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${(10 << 20).toString(16)}\r\n`),
    big, Buffer.from('\r\n0\r\n\r\n')]));
  assert.equal(chunked.status, 413, chunked.text.slice(0, 300));
  // 400 MB announced without a key: 401 at once, nothing read.
  const nokey = await raw(server.port, 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 419430400\r\n\r\n', { until: '}' });
  assert.equal(nokey.status, 401);
  const nokeyChunked = await raw(server.port, 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n', { until: '}' });
  assert.equal(nokeyChunked.status, 401);
  // gzip is not inflated.
  const gz = await raw(server.port, `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\nabcd`);
  assert.equal(gz.status, 415);
  await alive();
});

test('row 4: an endless header section is a 431 after the head limit', async () => {
  const r = await raw(server.port, 'GET /health HTTP/1.1\r\nHost: x\r\n' + `X-Pad: ${'p'.repeat(7000)}\r\n`.repeat(300));
  assert.equal(r.status, 431);
  const many = await raw(server.port, 'GET /health HTTP/1.1\r\nHost: x\r\n' + 'X-A: b\r\n'.repeat(500) + '\r\n');
  assert.equal(many.status, 431);
  await alive();
});

test('row 5: 300 slowloris connections do not stop normal requests, and get 408 at the head deadline', async () => {
  const slow = [];
  const closed = [];
  for (let i = 0; i < 300; i++) {
    const s = net.connect(server.port, '127.0.0.1', () => s.write('P'));
    s.on('error', () => {});
    let got = '';
    s.on('data', (d) => { got += d; });
    closed.push(new Promise((r) => s.on('close', () => r(got))));
    slow.push(s);
  }
  await new Promise((r) => setTimeout(r, 300));
  const times = [];
  for (let i = 0; i < 50; i++) {
    const t0 = Date.now();
    const r = await fetch(`${server.base}/v1/models`, { headers: auth });
    assert.equal(r.status, 200);
    times.push(Date.now() - t0);
  }
  times.sort((a, b) => a - b);
  assert.ok(times[Math.floor(times.length * 0.99)] < 2000, `p99 ${times.at(-1)} ms`);
  const answers = await Promise.all(closed);  // --header-timeout 3
  assert.ok(answers.every((t) => t.startsWith('HTTP/1.1 408')), 'every slow head gets 408');
  await alive();
});

test('row 6: objects with 200k keys and a 100k-entry logit_bias are handled in seconds', async () => {
  const s = await startServer(['--max-body-bytes', String(64 << 20)]);
  try {
    const keys = {};
    for (let i = 0; i < 200000; i++) keys['k' + i] = i;
    let t0 = Date.now();
    let r = await fetch(`${s.base}/v1/chat/completions`, { method: 'POST', headers: auth,
      body: JSON.stringify({ model: MODEL, max_tokens: 1, messages: [{ role: 'user', content: 'x' }], unknown_field: keys }) });
    await r.text();
    assert.ok(Date.now() - t0 < 10000, `200k keys took ${Date.now() - t0} ms`);
    const lb = {};
    for (let i = 0; i < 100000; i++) lb[String(i)] = 1;
    t0 = Date.now();
    r = await fetch(`${s.base}/v1/chat/completions`, { method: 'POST', headers: auth,
      body: JSON.stringify({ model: MODEL, max_tokens: 1, messages: [{ role: 'user', content: 'x' }], logit_bias: lb }) });
    await r.text();
    assert.ok(Date.now() - t0 < 10000, `logit_bias took ${Date.now() - t0} ms`);
  } finally {
    await s.stop();
  }
});

test('row 7: SIGTERM ends the server within the shutdown timeout while a client trickles headers', async () => {
  const s = await startServer(['--shutdown-timeout', '2']);
  const sock = net.connect(s.port, '127.0.0.1', () => sock.write('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n'));
  sock.on('error', () => {});
  const timer = setInterval(() => sock.write('X'), 200);
  await new Promise((r) => setTimeout(r, 500));
  const t0 = Date.now();
  const code = await s.stop();
  clearInterval(timer);
  sock.destroy();
  assert.equal(code, 0);
  assert.ok(Date.now() - t0 < 15000, `stopped after ${Date.now() - t0} ms`);
});

test('row 8: keyless mode refuses foreign Hosts, browser Origins and non-JSON bodies', async () => {
  const s = await startServer(['--allowed-host', 'llm.internal', '--cors-origin', 'https://app.example'], { keyless: true });
  try {
    const body = JSON.stringify({ model: MODEL, max_tokens: 1, messages: [{ role: 'user', content: 'x' }] });
    const req = (headers) => raw(s.port, `POST /v1/chat/completions HTTP/1.1\r\n${headers}Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    assert.equal((await req('Host: attacker.example\r\nContent-Type: application/json\r\n')).status, 403);
    assert.equal((await req('Host: 127.0.0.1\r\nOrigin: https://attacker.example\r\nContent-Type: application/json\r\n')).status, 403);
    assert.equal((await req('Host: 127.0.0.1\r\nContent-Type: text/plain\r\n')).status, 415);
    assert.equal((await req('Host: localhost:1\r\nContent-Type: application/json\r\n')).status, 200);
    assert.equal((await req('Host: [::1]\r\nContent-Type: application/json; charset=utf-8\r\n')).status, 200);
    assert.equal((await req('Host: llm.internal\r\nContent-Type: application/json\r\n')).status, 200);
    const cors = await req('Host: 127.0.0.1\r\nOrigin: https://app.example\r\nContent-Type: application/json\r\n');
    assert.equal(cors.status, 200);
    assert.match(cors.text, /Access-Control-Allow-Origin: https:\/\/app\.example/);
    // GETs too: a rebound name cannot read /metrics.
    assert.equal((await raw(s.port, 'GET /metrics HTTP/1.1\r\nHost: attacker.example\r\n\r\n')).status, 403);
  } finally {
    await s.stop();
  }
});

test('row 9: POST without Content-Length is a 411 at once', async () => {
  const r = await raw(server.port, `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: application/json\r\n\r\n{}`);
  assert.equal(r.status, 411);
  assert.ok(r.ms < 10000);
});

test('row 10: lax framing and control bytes are 400 (never a hang, never accepted)', async () => {
  const body = JSON.stringify({ model: MODEL, max_tokens: 1, messages: [{ role: 'user', content: 'x' }] });
  const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: application/json\r\n`;
  const nulKey = await raw(server.port, `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\0zz\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  assert.equal(nulKey.status, 400);
  const junk = body + '\0junk';
  assert.equal((await raw(server.port, `${head}Content-Length: ${junk.length}\r\n\r\n${junk}`)).status, 400);
  for (const framing of [`Content-Length: ${body.length}\r\nContent-Length: ${body.length + 1}\r\n`,
                         `Content-Length: +${body.length}\r\n`, 'Content-Length: -1\r\n',
                         'Content-Length: 18446744073709551621\r\n', 'Transfer-Encoding: identity, chunked\r\n',
                         `Content-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n`]) {
    const r = await raw(server.port, `${head}${framing}\r\n${body}`);
    assert.ok(r.status === 400 || r.status === 501, `${JSON.stringify(framing)} → ${r.status}`);
    assert.ok(r.ms < 10000);
  }
  await alive();
});

test('row 11: pipelined requests are answered in order', async () => {
  const r = await raw(server.port, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n' +
    `GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\n\r\n` +
    'GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  const statuses = [...r.text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
  assert.deepEqual(statuses, [200, 200, 404]);
  assert.ok(r.text.indexOf('"status":"ok"') < r.text.indexOf('"object":"list"'));
});

test('row 12: refusals name their reason: grammar budget, schema nesting, a form body', async () => {
  const s = await startServer(['--constraint-max-compile-work', '1000']);
  try {
    const r = await fetch(`${s.base}/v1/chat/completions`, { method: 'POST', headers: auth, body: JSON.stringify({
      model: MODEL, max_tokens: 1, messages: [{ role: 'user', content: 'x' }],
      response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object', properties: { a: { type: 'string', pattern: '[a-z]{1,50}x[0-9]{3,40}' } }, required: ['a'] } } } }) });
    const j = await r.json();
    assert.equal(r.status, 400, JSON.stringify(j));
    assert.equal(j.error.code, 'grammar_too_complex');
    let deep = { type: 'string' };
    for (let i = 0; i < 60; i++) deep = { type: 'array', items: deep };
    const d = await fetch(`${s.base}/v1/chat/completions`, { method: 'POST', headers: auth, body: JSON.stringify({
      model: MODEL, max_tokens: 1, messages: [{ role: 'user', content: 'x' }],
      response_format: { type: 'json_schema', json_schema: { name: 's', schema: deep } } }) });
    const dj = await d.json();
    assert.equal(d.status, 400, JSON.stringify(dj));
    assert.equal(dj.error.code, 'grammar_too_deep');
  } finally {
    await s.stop();
  }
  const form = await post('/v1/chat/completions', 'a=' + 'b'.repeat(9000), { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/x-www-form-urlencoded' });
  assert.equal(form.status, 400);
  assert.match(form.body.error.message, /could not parse the JSON body/);
});
