#!/usr/bin/env node
// bench/onednn_ort_timer.js - Times ONNX Runtime on one model, on request.
//
// The ONNX Runtime side of bench/onednn_vs_ort.py. Loads MODEL once (CPU
// execution provider, all graph optimizations, THREADS intra-op threads,
// sequential execution), feeds the inputs from .npy files, then serves
// timing requests so that the driver can alternate ONNX Runtime and
// subgraph runs while both stay loaded: each stdin line "N" runs N timed
// requests and answers one JSON line {"ms": [...]} on stdout.
//
// Usage: node bench/onednn_ort_timer.js MODEL THREADS NAME=FILE.npy...
'use strict';

const readline = require('readline');

const { openSession } = require('./ort_session');

async function main() {
  const [model, threads, ...inputs] = process.argv.slice(2);
  const { session, feeds } = await openSession(model, threads, inputs);
  await session.run(feeds);  // first run: allocations, kernel selection
  process.stdout.write(JSON.stringify({ ready: true }) + '\n');
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    const n = Number(line.trim());
    if (!n) break;
    const ms = [];
    for (let i = 0; i < n; ++i) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    process.stdout.write(JSON.stringify({ ms }) + '\n');
  }
}

main().catch((e) => {
  process.stderr.write(`onednn_ort_timer: error: ${String(e.message || e).split('\n')[0]}\n`);
  process.exit(1);
});
