// Chat Completions through the official `openai` npm client: non-streamed and streamed (with
// stream_options.include_usage) must tell the same greedy answer; usage carries cached prompt
// tokens; a conversation with an assistant tool call and its tool result is accepted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startServer, API_KEY, MODEL } from './harness.mjs';

let server, client;
before(async () => {
  server = await startServer();
  client = new OpenAI({ apiKey: API_KEY, baseURL: `${server.base}/v1`, maxRetries: 0, timeout: 60000 });
});
after(async () => { await server?.stop(); });

// Long enough to fill whole KV blocks, which is what the prefix cache reuses.
const system = 'You are a careful assistant. ' + 'Answer briefly and precisely. '.repeat(12);
const messages = [{ role: 'system', content: system }, { role: 'user', content: 'Name three primes.' }];

test('non-streamed and streamed chat give the same greedy text and full usage', async () => {
  const full = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 8, temperature: 0 });
  assert.equal(full.object, 'chat.completion');
  assert.equal(full.model, MODEL);
  assert.equal(full.choices.length, 1);
  const choice = full.choices[0];
  assert.equal(choice.message.role, 'assistant');
  assert.ok(['stop', 'length', 'tool_calls'].includes(choice.finish_reason), choice.finish_reason);
  assert.ok(full.usage.prompt_tokens > 20, JSON.stringify(full.usage));
  assert.ok(full.usage.completion_tokens >= 1 && full.usage.completion_tokens <= 8, JSON.stringify(full.usage));
  assert.equal(full.usage.total_tokens, full.usage.prompt_tokens + full.usage.completion_tokens);
  assert.equal(typeof full.usage.prompt_tokens_details?.cached_tokens, 'number');

  const stream = await client.chat.completions.create({
    model: MODEL, messages, max_tokens: 8, temperature: 0, stream: true,
    stream_options: { include_usage: true },
  });
  let text = '', reasoning = '', finish = null, usage = null, chunks = 0, ids = new Set();
  for await (const chunk of stream) {
    chunks++;
    ids.add(chunk.id);
    assert.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.usage) { usage = chunk.usage; assert.equal(chunk.choices.length, 0); continue; }
    const d = chunk.choices[0];
    text += d.delta.content ?? '';
    reasoning += d.delta.reasoning_content ?? '';
    if (d.finish_reason) finish = d.finish_reason;
  }
  assert.equal(ids.size, 1, 'every chunk of one completion carries one id');
  assert.ok(chunks >= 2);
  assert.equal(finish, choice.finish_reason);
  assert.equal(text, choice.message.content ?? '');
  assert.equal(reasoning, choice.message.reasoning_content ?? '');
  assert.ok(text.length + reasoning.length > 0, 'the model said something');
  assert.ok(usage, 'include_usage: a final chunk with usage');
  assert.equal(usage.prompt_tokens, full.usage.prompt_tokens);
  assert.equal(usage.completion_tokens, full.usage.completion_tokens);
  // The same prompt again: its whole blocks come from the prefix cache and usage says so.
  assert.ok(usage.prompt_tokens_details.cached_tokens > 0, JSON.stringify(usage));
  assert.ok(usage.prompt_tokens_details.cached_tokens < usage.prompt_tokens);
});

test('a conversation carrying an assistant tool call and its tool result is answered', async () => {
  const tools = [{
    type: 'function',
    function: {
      name: 'get_weather', description: 'Current weather of a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  }];
  const convo = [
    { role: 'user', content: 'What is the weather in Paris?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c": 21, "sky": "clear"}' },
  ];
  const r = await client.chat.completions.create({ model: MODEL, messages: convo, tools, max_tokens: 8, temperature: 0 });
  assert.equal(r.object, 'chat.completion');
  assert.ok(r.usage.prompt_tokens > 0);
  // The rendered prompt holds the tool definitions, call and result, so it is longer than the
  // same conversation without them.
  const plain = await client.chat.completions.create({ model: MODEL, messages: [convo[0]], max_tokens: 1, temperature: 0 });
  assert.ok(r.usage.prompt_tokens > plain.usage.prompt_tokens + 20, `${r.usage.prompt_tokens} vs ${plain.usage.prompt_tokens}`);

  const s = await client.chat.completions.create({ model: MODEL, messages: convo, tools, max_tokens: 8, temperature: 0, stream: true });
  let finish = null;
  for await (const c of s) if (c.choices[0]?.finish_reason) finish = c.choices[0].finish_reason;
  assert.ok(finish, 'the streamed answer finishes');
});

test('a served alias is accepted; GET /v1/models lists every served name', async () => {
  const r = await client.chat.completions.create({ model: 'tiny-alias', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
  assert.ok([MODEL, 'tiny-alias'].includes(r.model), r.model);
  const models = [];
  for await (const m of client.models.list()) models.push(m.id);
  assert.deepEqual(models.sort(), [MODEL, 'tiny-alias'].sort());
  const one = await client.models.retrieve(MODEL);
  assert.equal(one.id, MODEL);
});

test('n = 2 non-streamed: two indexed choices, each the greedy answer; usage counts the prompt once', async () => {
  const q = [{ role: 'user', content: 'Name three colours.' }];
  const one = await client.chat.completions.create({ model: MODEL, messages: q, max_tokens: 6, temperature: 0 });
  const two = await client.chat.completions.create({ model: MODEL, messages: q, max_tokens: 6, temperature: 0, n: 2 });
  assert.equal(two.object, 'chat.completion');
  assert.deepEqual(two.choices.map((c) => c.index), [0, 1]);
  for (const c of two.choices) {
    assert.equal(c.message.content, one.choices[0].message.content);
    assert.equal(c.message.reasoning_content, one.choices[0].message.reasoning_content);
    assert.equal(c.finish_reason, one.choices[0].finish_reason);
  }
  assert.equal(two.usage.prompt_tokens, one.usage.prompt_tokens);
  assert.equal(two.usage.completion_tokens, 2 * one.usage.completion_tokens);
  assert.equal(two.usage.total_tokens, two.usage.prompt_tokens + two.usage.completion_tokens);
});

test('n = 3 streamed: chunks carry their choice index; one usage chunk and one [DONE] end the stream', async () => {
  const q = [{ role: 'user', content: 'Say something about rivers.' }];
  const one = await client.chat.completions.create({ model: MODEL, messages: q, max_tokens: 6, temperature: 0 });
  const s = await client.chat.completions.create({
    model: MODEL, messages: q, max_tokens: 6, temperature: 0, n: 3, stream: true,
    stream_options: { include_usage: true },
  });
  const text = ['', '', ''], reasoning = ['', '', ''], finish = [null, null, null], ids = new Set();
  let usage = null, afterUsage = 0;
  for await (const c of s) {
    ids.add(c.id);
    if (usage) afterUsage++;
    if (c.usage) { usage = c.usage; assert.equal(c.choices.length, 0); continue; }
    for (const ch of c.choices) {
      assert.ok(ch.index >= 0 && ch.index < 3, `index ${ch.index}`);
      assert.equal(finish[ch.index], null, 'nothing after a choice finished');
      text[ch.index] += ch.delta.content ?? '';
      reasoning[ch.index] += ch.delta.reasoning_content ?? '';
      if (ch.finish_reason) finish[ch.index] = ch.finish_reason;
    }
  }
  assert.equal(ids.size, 1, 'every chunk carries the one completion id');
  for (let i = 0; i < 3; i++) {
    assert.equal(finish[i], one.choices[0].finish_reason, `choice ${i} finished`);
    assert.equal(text[i], one.choices[0].message.content ?? '', `choice ${i} is the greedy answer`);
    assert.equal(reasoning[i], one.choices[0].message.reasoning_content ?? '', `choice ${i}'s reasoning`);
  }
  assert.ok(usage, 'include_usage: a usage chunk');
  assert.equal(afterUsage, 0, 'the usage chunk is the last');
  assert.equal(usage.prompt_tokens, one.usage.prompt_tokens);
  assert.equal(usage.completion_tokens, 3 * one.usage.completion_tokens);

  // The SDK's stream helper assembles the choices by index.
  const helper = client.chat.completions.stream({ model: MODEL, messages: q, max_tokens: 6, temperature: 0, n: 2 });
  const final = await helper.finalChatCompletion();
  assert.deepEqual(final.choices.map((c) => c.index), [0, 1]);
  for (const c of final.choices) assert.equal(c.message.content ?? '', one.choices[0].message.content ?? '');
});

test('n > 1 on the Responses and Messages APIs is a 400 naming n', async () => {
  const r = await fetch(`${server.base}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: MODEL, max_tokens: 4, n: 2, messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(r.status, 400);
  const body = await r.json();
  assert.equal(body.error.type, 'invalid_request_error');
  assert.match(body.error.message, /^n: /);
  await assert.rejects(client.responses.create({ model: MODEL, input: 'hi', max_output_tokens: 4, n: 2 }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && /^n: /.test(e.error?.message ?? e.message));
});

test('logprobs and top_logprobs: one entry per generated token, streamed = non-streamed', async () => {
  const ask = (extra) => client.chat.completions.create({
    model: MODEL, messages, max_tokens: 6, temperature: 0, logprobs: true, top_logprobs: 3, ...extra,
  });
  const full = await ask({});
  const lp = full.choices[0].logprobs;
  assert.ok(lp && Array.isArray(lp.content), JSON.stringify(full.choices[0]));
  assert.equal(lp.content.length, full.usage.completion_tokens);
  for (const e of lp.content) {
    assert.equal(typeof e.token, 'string');
    assert.ok(e.logprob <= 0);
    assert.ok(Array.isArray(e.bytes));
    assert.equal(e.top_logprobs.length, 3);
    // Greedy: the sampled token is the most likely one.
    assert.deepEqual(e.top_logprobs[0].bytes, e.bytes);
    assert.ok(Math.abs(e.top_logprobs[0].logprob - e.logprob) < 1e-5);
    for (let i = 1; i < 3; i++) assert.ok(e.top_logprobs[i].logprob <= e.top_logprobs[i - 1].logprob);
  }
  const stream = await ask({ stream: true });
  const streamed = [];
  for await (const chunk of stream) {
    for (const c of chunk.choices) streamed.push(...(c.logprobs?.content ?? []));
  }
  assert.deepEqual(streamed, lp.content);
  const none = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 2, temperature: 0 });
  assert.equal(none.choices[0].logprobs, null);
});
