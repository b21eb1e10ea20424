// /metrics carries the engine's per-step breakdown (schedule, prepare, forward, sample, output),
// the step-time histogram and the busy basis, consistent within one scrape.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, waitFor, API_KEY, MODEL } from './harness.mjs';

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

const PHASES = ['schedule', 'prepare', 'forward', 'sample', 'output'];

test('/metrics has the step phases, the step-time histogram and the busy basis', async () => {
  const first = await server.metrics();
  for (const p of PHASES) {
    assert.ok(`deepinfer_step_phase_seconds_total{phase="${p}"}` in first, `${p} seconds before any request`);
    assert.ok(`deepinfer_step_phase_steps_total{phase="${p}"}` in first, `${p} steps before any request`);
  }
  const r = await fetch(`${server.base}/v1/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, prompt: [5, 6, 7, 8, 9], max_tokens: 6, ignore_eos: true, temperature: 0 }),
  });
  assert.equal(r.status, 200);
  assert.equal((await r.json()).usage.completion_tokens, 6);
  // One prefill step and five decode steps; the last records its timing after its tokens are out.
  const want = (first.deepinfer_steps_total ?? 0) + 6;
  const m = await waitFor(async () => { const x = await server.metrics(); return x.deepinfer_steps_total >= want ? x : null; }, 30000);
  assert.ok(m, 'steps counted: ' + JSON.stringify(await server.metrics()));
  const steps = m.deepinfer_steps_total;
  assert.equal(steps, want);
  let sum = 0;
  for (const p of PHASES) {
    assert.equal(m[`deepinfer_step_phase_steps_total{phase="${p}"}`], steps, p);
    const s = m[`deepinfer_step_phase_seconds_total{phase="${p}"}`];
    assert.ok(s >= 0, p);
    sum += s;
  }
  assert.equal(m.deepinfer_step_time_seconds_count, steps);
  assert.ok(Math.abs(sum - m.deepinfer_step_time_seconds_sum) <= 1e-6 * steps, 'the phases tile the steps');
  assert.equal(m['deepinfer_step_time_seconds_bucket{le="+Inf"}'], steps);
  const forward = m['deepinfer_step_phase_seconds_total{phase="forward"}'];
  assert.equal(m.deepinfer_busy_forward_seconds_total, forward);
  assert.ok(forward > 0 && forward <= m.deepinfer_busy_wall_seconds_total, 'forward within the busy wall time');
  assert.ok(m.deepinfer_busy_ratio > 0 && m.deepinfer_busy_ratio <= 1);
  assert.ok(m.deepinfer_output_thread_batches_total >= 1);
  assert.ok(m.deepinfer_output_thread_seconds_total >= 0);
});
