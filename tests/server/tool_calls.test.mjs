// Tool calls through the official clients on the tiny model, whose weights are random: what makes
// its output a call is the engine's grammar (a forced tool_choice, a strict tool, one call when
// parallel_tool_calls is false). Checked: a call cut by the token limit is not reported as a call
// (Chat: finish_reason "length" and no tool_calls; Responses: the item and the response
// "incomplete"), parallel_tool_calls false gives one call and is echoed as sent, and a tool forced
// on a non-strict Messages tool reaches the client instead of vanishing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, MODEL } from './harness.mjs';
import { sdkClients } from './sdk_clients.mjs';

let server, openai, anthropic;
before(async () => {
  server = await startServer();
  ({ openai, anthropic } = sdkClients(server, { timeout: 120000 }));
});
after(async () => { await server?.stop(); });

// An enum parameter: under the strict grammar every call closes within a few dozen tokens.
const unitSchema = {
  type: 'object', properties: { unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
  required: ['unit'], additionalProperties: false,
};
const chatTool = (strict) => ({
  type: 'function', function: { name: 'set_unit', description: 'Set the unit', strict, parameters: unitSchema },
});
const messages = [{ role: 'user', content: 'Use celsius.' }];

test('Chat: a call cut by max_tokens is no call, finish_reason length; a whole call is one', async () => {
  // One call (parallel_tool_calls false), so every shorter limit cuts that call.
  const ask = (max_tokens) => openai.chat.completions.create({
    model: MODEL, messages, tools: [chatTool(true)], tool_choice: 'required', parallel_tool_calls: false,
    max_tokens, temperature: 0,
  });
  const whole = await ask(200);
  assert.equal(whole.choices[0].finish_reason, 'tool_calls', JSON.stringify(whole.choices[0]));
  const [call] = whole.choices[0].message.tool_calls;
  assert.equal(call.function.name, 'set_unit');
  assert.ok(['celsius', 'fahrenheit'].includes(JSON.parse(call.function.arguments).unit), call.function.arguments);
  const used = whole.usage.completion_tokens;
  // Limits that cut the markup, the name and the arguments (the call's last dozen tokens are its
  // closing tags, the block's and the end of turn).
  assert.ok(used > 16, `the call took ${used} tokens`);
  for (const max_tokens of [4, 8, Math.floor(used / 2)]) {
    const choice = (await ask(max_tokens)).choices[0];
    assert.equal(choice.finish_reason, 'length', `max_tokens ${max_tokens}`);
    assert.equal(choice.message.tool_calls, undefined, `max_tokens ${max_tokens}: ${JSON.stringify(choice.message)}`);
  }
});

test('Responses: a call cut by max_output_tokens is an incomplete item in an incomplete response', async () => {
  const tools = [{ type: 'function', name: 'set_unit', strict: true, parameters: unitSchema }];
  const whole = await openai.responses.create({
    model: MODEL, input: 'Use celsius.', tools, tool_choice: 'required', parallel_tool_calls: false,
    max_output_tokens: 200, temperature: 0,
  });
  assert.equal(whole.status, 'completed');
  const r = await openai.responses.create({
    model: MODEL, input: 'Use celsius.', tools, tool_choice: 'required', parallel_tool_calls: false,
    max_output_tokens: Math.floor(whole.usage.output_tokens / 2), temperature: 0,
  });
  assert.equal(r.status, 'incomplete');
  assert.equal(r.incomplete_details.reason, 'max_output_tokens');
  const last = r.output.at(-1);
  assert.equal(last.type, 'function_call', JSON.stringify(r.output));
  assert.equal(last.status, 'incomplete');
  for (const item of r.output.slice(0, -1)) assert.equal(item.status, 'completed');
});

test('parallel_tool_calls false: one call, and Responses reports it as sent', async () => {
  for (const strict of [true, false]) {
    const r = await openai.chat.completions.create({
      model: MODEL, messages, tools: [chatTool(strict)], tool_choice: 'required', parallel_tool_calls: false,
      max_tokens: 200, temperature: 0,
    });
    const choice = r.choices[0];
    if (choice.finish_reason === 'tool_calls') assert.equal(choice.message.tool_calls.length, 1, JSON.stringify(choice.message));
    else assert.equal(choice.finish_reason, 'length');  // a free-text value may run to the limit
    assert.ok((choice.message.tool_calls ?? []).length <= 1);
  }
  const tools = [{ type: 'function', name: 'set_unit', strict: true, parameters: unitSchema }];
  const r = await openai.responses.create({
    model: MODEL, input: 'Use celsius.', tools, tool_choice: 'required', parallel_tool_calls: false,
    max_output_tokens: 200, temperature: 0,
  });
  assert.equal(r.parallel_tool_calls, false);
  assert.equal(r.output.filter((o) => o.type === 'function_call').length, 1, JSON.stringify(r.output));
  const dflt = await openai.responses.create({ model: MODEL, input: 'Hi', max_output_tokens: 1 });
  assert.equal(dflt.parallel_tool_calls, true);
});

test('Messages: a tool forced on a non-strict tool is the output, not an empty content', async () => {
  const stream = anthropic.messages.stream({
    model: MODEL, max_tokens: 60, temperature: 0, messages: [{ role: 'user', content: 'Use celsius.' }],
    tools: [{ name: 'set_unit', description: 'Set the unit', input_schema: unitSchema }],
    tool_choice: { type: 'tool', name: 'set_unit' },
  });
  const started = [];
  for await (const ev of stream) {
    if (ev.type === 'content_block_start') started.push(ev.content_block);
  }
  const final = await stream.finalMessage();
  assert.ok(final.usage.output_tokens > 0);
  // The model's output under a forced tool is that tool's call: it starts as one on the stream.
  assert.ok(started.some((b) => b.type === 'tool_use' && b.name === 'set_unit'), JSON.stringify(started));
  if (final.stop_reason === 'tool_use') {
    const uses = final.content.filter((b) => b.type === 'tool_use');
    assert.ok(uses.length >= 1 && uses.every((b) => b.name === 'set_unit'), JSON.stringify(final.content));
  } else {
    assert.equal(final.stop_reason, 'max_tokens', JSON.stringify(final));
  }
});
