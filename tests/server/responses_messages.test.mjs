// The Responses API streamed through the `openai` client and Anthropic Messages streamed with
// thinking on through `@anthropic-ai/sdk`: event order, deltas that add up to the final object,
// usage.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, MODEL } from './harness.mjs';
import { sdkClients } from './sdk_clients.mjs';

let server, openai, anthropic;
before(async () => {
  server = await startServer();
  ({ openai, anthropic } = sdkClients(server));
});
after(async () => { await server?.stop(); });

test('Responses streamed: created first, completed last, deltas add up to the output', async () => {
  const stream = await openai.responses.create({
    model: MODEL, input: 'Write a haiku about the sea.', max_output_tokens: 10, temperature: 0, stream: true,
  });
  const types = [];
  let deltas = '', final = null, lastSeq = -1;
  for await (const ev of stream) {
    types.push(ev.type);
    assert.ok(ev.sequence_number > lastSeq, `sequence_number grows (${ev.sequence_number})`);
    lastSeq = ev.sequence_number;
    if (ev.type === 'response.output_text.delta') deltas += ev.delta;
    if (ev.type === 'response.completed' || ev.type === 'response.incomplete') final = ev.response;
  }
  assert.equal(types[0], 'response.created');
  assert.ok(['response.completed', 'response.incomplete'].includes(types.at(-1)), types.at(-1));
  assert.ok(final, 'a terminal event carries the response');
  assert.equal(final.model, MODEL);
  const text = final.output.filter((o) => o.type === 'message')
    .flatMap((o) => o.content).filter((c) => c.type === 'output_text').map((c) => c.text).join('');
  assert.equal(deltas, text);
  assert.ok(final.usage.input_tokens > 0);
  assert.ok(final.usage.output_tokens >= 1 && final.usage.output_tokens <= 10, JSON.stringify(final.usage));
  assert.equal(typeof final.usage.input_tokens_details?.cached_tokens, 'number');

  // Non-streamed, same greedy request: same text.
  const r = await openai.responses.create({ model: MODEL, input: 'Write a haiku about the sea.', max_output_tokens: 10, temperature: 0 });
  assert.equal(r.object, 'response');
  assert.equal(r.output_text, text);
});

test('Messages streamed with thinking: message_start .. message_stop, a thinking block first', async () => {
  const stream = anthropic.messages.stream({
    model: MODEL, max_tokens: 24, temperature: 1, seed: 5,  // seeded: the same sample every run
    thinking: { type: 'enabled', budget_tokens: 16 },
    messages: [{ role: 'user', content: 'Is 91 prime?' }],
  });
  const types = [];
  stream.on('streamEvent', (ev) => types.push(ev.type));
  const msg = await stream.finalMessage();
  assert.equal(types[0], 'message_start');
  assert.equal(types.at(-1), 'message_stop');
  assert.equal(msg.type, 'message');
  assert.equal(msg.role, 'assistant');
  assert.equal(msg.model, MODEL);
  assert.ok(['end_turn', 'max_tokens', 'tool_use', 'stop_sequence'].includes(msg.stop_reason), msg.stop_reason);
  // Thinking on: the prompt opens the reasoning, so the model's first output is a thinking block.
  assert.ok(msg.content.length >= 1);
  assert.equal(msg.content[0].type, 'thinking');
  assert.ok(msg.usage.input_tokens > 0);
  assert.ok(msg.usage.output_tokens >= 1 && msg.usage.output_tokens <= 24, JSON.stringify(msg.usage));
  assert.equal(typeof msg.usage.cache_read_input_tokens, 'number');
});

test('Messages non-streamed with thinking off: text, no thinking block', async () => {
  const msg = await anthropic.messages.create({
    model: MODEL, max_tokens: 8, temperature: 0, system: 'Be terse.', thinking: { type: 'disabled' },
    messages: [{ role: 'user', content: 'Hello' }],
  });
  assert.equal(msg.type, 'message');
  assert.ok(msg.usage.output_tokens >= 1 && msg.usage.output_tokens <= 8);
  assert.ok(msg.content.length >= 1);
  assert.ok(msg.content.every((c) => c.type !== 'thinking'), JSON.stringify(msg.content));
});
