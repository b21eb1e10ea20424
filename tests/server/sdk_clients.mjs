// The official OpenAI and Anthropic clients pointed at a test server: one place for the base URLs
// (the OpenAI client wants /v1, the Anthropic one the root) and for no retries, so a failure is
// seen on the first try instead of hidden behind a retried one.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { API_KEY } from './harness.mjs';

// `timeout` (ms): the clients' own per-request limit; long-running suites raise it.
export function sdkClients(server, { timeout = 60000, apiKey = API_KEY } = {}) {
  return {
    openai: new OpenAI({ apiKey, baseURL: `${server.base}/v1`, maxRetries: 0, timeout }),
    anthropic: new Anthropic({ apiKey, baseURL: server.base, maxRetries: 0, timeout }),
  };
}
