// bench/ort_session.js - The ONNX Runtime side's common part for the
// benchmarks (onednn_ort_timer.js, serving_ort.js): an InferenceSession as
// the benchmarks configure it, and its feeds read from the .npy files the
// Python drivers write (numpy's format, version 1 or 2 headers; float32 and
// int64 arrays).
'use strict';

const fs = require('fs');
const path = require('path');

const NPY = { '<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array] };

/// {type, dims, data} of the array in `file`, as onnxruntime-node's Tensor takes them.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  const headerLen = buf[6] === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (buf[6] === 1 ? 10 : 12) + headerLen;
  const header = buf.toString('latin1', 0, start);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const dims = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim())
    .filter((s) => s).map(Number);
  const [type, Ctor] = NPY[descr];
  const data = new Ctor(dims.reduce((a, b) => a * b, 1));
  Buffer.from(data.buffer).set(buf.subarray(start));
  return { type, dims, data };
}

/// onnxruntime-node (bench/node_modules), a session of `model` (CPU
/// execution provider, all graph optimizations, `threads` intra-op threads,
/// sequential execution) and its feeds from "NAME=FILE.npy" specs.
async function openSession(model, threads, inputs) {
  const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1, executionMode: 'sequential',
    executionProviders: ['cpu'], graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const spec of inputs) {
    const [name, file] = spec.split('=');
    const t = readNpy(file);
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  }
  return { ort, session, feeds };
}

module.exports = { readNpy, openSession };
