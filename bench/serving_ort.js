#!/usr/bin/env node
// bench/serving_ort.js - ONNX Runtime serving N concurrent clients.
//
// The ONNX Runtime side of bench/serving.py. Loads MODEL once (CPU
// execution provider, all graph optimizations, THREADS intra-op threads per
// request, sequential execution), feeds the inputs from .npy files, then
// runs CLIENTS loops at once, each awaiting one `run` after another on the
// same InferenceSession for SECONDS. onnxruntime-node runs each `run` on a
// libuv worker thread, so the driver sets UV_THREADPOOL_SIZE to at least
// CLIENTS. Prints one JSON line: {"requests": n, "seconds": s, "ms": [...]}.
//
// Usage: node bench/serving_ort.js MODEL THREADS CLIENTS SECONDS NAME=FILE.npy...
'use strict';


const { openSession } = require('./ort_session');

async function main() {
  const [model, threads, clients, seconds, ...inputs] = process.argv.slice(2);
  const { session, feeds } = await openSession(model, threads, inputs);
  // Warm up every client's path: allocations, kernel selection.
  await Promise.all(Array.from({ length: Number(clients) }, () => session.run(feeds)));
  const ms = [];
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(Number(seconds) * 1e9));
  async function client() {
    while (process.hrtime.bigint() < end) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  }
  await Promise.all(Array.from({ length: Number(clients) }, client));
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  process.stdout.write(JSON.stringify({ requests: ms.length, seconds: wall, ms }) + '\n');
}

main().catch((e) => {
  process.stderr.write(`serving_ort: error: ${String(e.message || e).split('\n')[0]}\n`);
  process.exit(1);
});
