// Image URLs in requests go through the recipe's destination filter (`--image-policy vision`):
// loopback, private and metadata addresses are refused with a 400 before any connection is
// made; `--image-allow-destination` lets one through (the fetch happens; the tiny model has no
// vision, so the engine then refuses it, as a 400 in the API's format).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startServer, API_KEY, MODEL } from './harness.mjs';

const png = fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/recipe_image/rgba.png'));
let images, hits = 0, denied, allowed;
before(async () => {
  // A local image host: every request it sees is a fetch the server made.
  images = http.createServer((req, res) => { hits++; res.writeHead(200, { 'content-type': 'image/png' }); res.end(png); });
  await new Promise((r) => images.listen(0, '127.0.0.1', r));
  const port = images.address().port;
  [denied, allowed] = await Promise.all([
    startServer(['--encoding', 'dsv41', '--image-policy', 'vision']),
    startServer(['--encoding', 'dsv41', '--image-policy', 'vision', '--image-allow-destination', `127.0.0.1:${port}`]),
  ]);
});
after(async () => { await denied?.stop(); await allowed?.stop(); images?.close(); });

const imageUrl = () => `http://127.0.0.1:${images.address().port}/cat.png`;
const chat = (url) => ({
  model: MODEL, max_tokens: 2,
  messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url } }] }],
});

test('internal image destinations are refused with a 400 naming the image; nothing is fetched', async () => {
  const openai = new OpenAI({ apiKey: API_KEY, baseURL: `${denied.base}/v1`, maxRetries: 0 });
  const before = hits;
  for (const url of [imageUrl(), 'http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/a.png', 'http://[::1]:9/a.png']) {
    await assert.rejects(openai.chat.completions.create(chat(url)), (e) =>
      e instanceof OpenAI.BadRequestError && e.status === 400 && /^images\[0\]: destination .* address/.test(e.error?.message ?? e.message));
  }
  const anthropic = new Anthropic({ apiKey: API_KEY, baseURL: denied.base, maxRetries: 0 });
  await assert.rejects(anthropic.messages.create({
    model: MODEL, max_tokens: 2,
    messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: imageUrl() } }] }],
  }), (e) => e instanceof Anthropic.BadRequestError && e.error?.error?.type === 'invalid_request_error' &&
    /loopback/.test(e.error?.error?.message));
  assert.equal(hits, before, 'the filter refused before connecting');
});

test('an allowed destination is fetched; a model without vision then refuses the image with a 400', async () => {
  const openai = new OpenAI({ apiKey: API_KEY, baseURL: `${allowed.base}/v1`, maxRetries: 0 });
  const before = hits;
  await assert.rejects(openai.chat.completions.create(chat(imageUrl())), (e) =>
    e instanceof OpenAI.BadRequestError && /vision/.test(e.error?.message ?? e.message));
  assert.equal(hits, before + 1, 'the image was fetched once');
  // Other internal addresses stay refused: the allowance is for that one destination.
  await assert.rejects(openai.chat.completions.create(chat('http://127.0.0.1:9/a.png')), (e) =>
    e instanceof OpenAI.BadRequestError && /loopback/.test(e.error?.message ?? e.message));
  assert.equal((await fetch(`${allowed.base}/health`)).status, 200);
});
