// Starts `deepinfer serve` on the bundled tiny model on a free port (--port 0; the port comes
// from the server's "listening" log line) and gives the tests its URL, API key and metrics.
// Environment: DI_BUILD_DIR (default build/), DI_TINY_MODEL (default models/tiny-v4).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const API_KEY = 'sk-test-' + Math.random().toString(36).slice(2);
export const MODEL = 'tiny-v4';

// `opts.keyless`: start without --api-key (the default mode's Host/Origin/Content-Type rules).
export async function startServer(extraArgs = [], opts = {}) {
  const bin = path.join(process.env.DI_BUILD_DIR || path.join(root, 'build'), 'bin', 'deepinfer');
  const model = process.env.DI_TINY_MODEL || path.join(root, 'models', 'tiny-v4');
  const key = opts.keyless ? [] : ['--api-key', API_KEY];
  const args = ['serve', '--model', model, '--port', '0', ...key,
                '--served-model-name', MODEL, '--served-model-name', 'tiny-alias', ...extraArgs];
  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const logs = [];
  let buffered = '';
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server did not start in 60 s:\n' + logs.join('\n'))), 60000);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}):\n${buffered}${logs.join('\n')}`)); });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => {
      buffered += d;
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        logs.push(line);
        try {
          const j = JSON.parse(line);
          if (j.event === 'listening') { clearTimeout(timer); resolve(j.port); }
        } catch { /* a non-JSON line: kept in logs for the failure message */ }
      }
    });
  });
  child.removeAllListeners('exit');
  const base = `http://127.0.0.1:${port}`;
  return {
    base, port, logs, child,
    async metrics() {
      const r = await fetch(`${base}/metrics`);
      const text = await r.text();
      const m = {};
      for (const line of text.split('\n')) {
        if (!line || line.startsWith('#')) continue;
        const sp = line.lastIndexOf(' ');
        m[line.slice(0, sp)] = Number(line.slice(sp + 1));
      }
      return m;
    },
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      const done = new Promise((r) => child.on('exit', (code, sig) => r(code ?? sig)));
      child.kill('SIGTERM');
      return done;
    },
  };
}

// Polls `pred` (async) until true or `ms` pass; returns the last value it saw.
export async function waitFor(pred, ms = 10000, step = 50) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    last = await pred();
    if (last) return last;
    await new Promise((r) => setTimeout(r, step));
  }
  return last;
}
