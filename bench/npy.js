// bench/npy.js - Reads the .npy files the benchmark drivers write (numpy's
// format, version 1 or 2 headers; float32 and int64 arrays), for the ONNX
// Runtime sides of the benchmarks (onednn_ort_timer.js, serving_ort.js).
'use strict';

const fs = require('fs');

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

module.exports = { readNpy };
