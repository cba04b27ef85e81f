#!/usr/bin/env node
// tools/ort_run.js - Run an ONNX model in ONNX Runtime and save its outputs.
//
// The reference runner for checking that models subgraph writes behave like
// the originals: the ONNX tests run the original and the exported model on
// the same inputs and compare the saved outputs byte for byte. Inputs come
// from .npy files or are drawn from a seeded generator, so two runs with the
// same seed see the same data. Runs single-threaded for reproducible sums.
//
// Usage:
//   node tools/ort_run.js MODEL.onnx [--input NAME=FILE.npy]... [--seed N]
//       [--shape NAME=D1,D2,...]... [--out DIR] [--json] [--save-inputs]
//       [--opt-level L]
//   node tools/ort_run.js --batch JOBS.json
//
//   --input NAME=FILE  feed input NAME from a .npy file
//   --seed N           seed for inputs not given by --input (default 0)
//   --shape NAME=DIMS  dims for a random input whose shape is dynamic
//                      (dynamic dims default to 1)
//   --out DIR          write each output as DIR/<index>_<name>.npy
//   --json             print outputs with their data as JSON on stdout
//                      (otherwise only names, types and dims)
//   --save-inputs      with --out, also write the inputs used
//   --opt-level L      ONNX Runtime graph optimizations: disabled, basic,
//                      extended or all (default all)
//   --batch JOBS.json  run a JSON array of jobs {model, inputs, shapes,
//                      seed, out, optLevel, json} in one process, printing
//                      one JSON line per job ({"model", "error"} on failure)
//
// Needs onnxruntime-node from bench/ (install: cd bench && npm install
// --ignore-scripts). Exits 1 with one "ort_run: error: ..." line on failure.
'use strict';

const fs = require('fs');
const path = require('path');

function fail(message) {
  process.stderr.write(`ort_run: error: ${String(message).split('\n')[0]}\n`);
  process.exit(1);
}

function loadOrt() {
  const local = path.join(__dirname, '..', 'bench', 'node_modules', 'onnxruntime-node');
  try {
    return require(fs.existsSync(local) ? local : 'onnxruntime-node');
  } catch (e) {
    fail('onnxruntime-node is not installed: run `cd bench && npm install --ignore-scripts`');
  }
}

//===--- .npy files -------------------------------------------------------===//

// numpy descr <-> ONNX Runtime tensor type and typed-array class.
const NPY_TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<f2': ['float16', Uint16Array], '|i1': ['int8', Int8Array], '<i2': ['int16', Int16Array],
  '<i4': ['int32', Int32Array], '<i8': ['int64', BigInt64Array], '|u1': ['uint8', Uint8Array],
  '<u2': ['uint16', Uint16Array], '<u4': ['uint32', Uint32Array], '<u8': ['uint64', BigUint64Array],
  '|b1': ['bool', Uint8Array],
};
const DESCR_OF = Object.fromEntries(Object.entries(NPY_TYPES).map(([d, [t]]) => [t, d]));

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY')
    throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !shape || /'fortran_order':\s*True/.test(header))
    throw new Error(`${file}: unsupported .npy header ${header.trim()}`);
  const entry = NPY_TYPES[descr[1]];
  if (!entry) throw new Error(`${file}: unsupported dtype ${descr[1]}`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const [type, Ctor] = entry;
  const count = dims.reduce((a, b) => a * b, 1);
  const bytes = buf.subarray(start);
  if (bytes.length !== count * Ctor.BYTES_PER_ELEMENT)
    throw new Error(`${file}: data is ${bytes.length} bytes, shape (${dims}) needs ${count * Ctor.BYTES_PER_ELEMENT}`);
  const data = new Ctor(count);
  Buffer.from(data.buffer).set(bytes);
  return { type, dims, data };
}

function writeNpy(file, type, dims, data) {
  const descr = DESCR_OF[type];
  if (!descr) throw new Error(`cannot write output of type ${type} as .npy`);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((header.length + 10) % 64)) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const body = type === 'bool' ? Buffer.from(Uint8Array.from(data, (v) => (v ? 1 : 0)))
                               : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

//===--- Seeded inputs ----------------------------------------------------===//

// mulberry32: tiny, fast and identical on every platform.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TYPED = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array, int8: Int8Array,
  int16: Int16Array, int32: Int32Array, int64: BigInt64Array, uint8: Uint8Array,
  uint16: Uint16Array, uint32: Uint32Array, uint64: BigUint64Array, bool: Uint8Array,
};

// Floats in [-1, 1); integers in [0, 4) so they are valid as small indices
// or axes; bools half true.
function randomTensor(type, dims, next) {
  const Ctor = TYPED[type];
  if (!Ctor) throw new Error(`cannot generate random data of type ${type}`);
  const count = dims.reduce((a, b) => a * b, 1);
  const data = new Ctor(count);
  for (let i = 0; i < count; ++i) {
    const r = next();
    if (type === 'float32' || type === 'float64') data[i] = r * 2 - 1;
    else if (type === 'float16') data[i] = 0x3800;  // 0.5: JS has no half arithmetic
    else if (type === 'bool') data[i] = r < 0.5 ? 1 : 0;
    else if (type === 'int64' || type === 'uint64') data[i] = BigInt(Math.floor(r * 4));
    else data[i] = Math.floor(r * 4);
  }
  return { type, dims, data };
}

//===--- Initializer names ------------------------------------------------===//

// Old exporters list initializers as graph inputs too. ONNX Runtime reports
// them as inputs, but feeding them random data would replace the weights, so
// the names of initializers are read straight from the protobuf wire format
// (ModelProto.graph = 7, GraphProto.initializer = 5, TensorProto.name = 8).
function readVarint(buf, pos) {
  let value = 0, shift = 0, byte;
  do {
    if (pos >= buf.length) throw new Error('truncated varint');
    byte = buf[pos++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return [value, pos];
}

function fields(buf, start, end, visit) {
  let pos = start;
  while (pos < end) {
    let key;
    [key, pos] = readVarint(buf, pos);
    const wire = key % 8, field = Math.floor(key / 8);
    if (wire === 0) [, pos] = readVarint(buf, pos);
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) {
      let len;
      [len, pos] = readVarint(buf, pos);
      visit(field, pos, pos + len);
      pos += len;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
}

function initializerNames(modelPath) {
  const buf = fs.readFileSync(modelPath);
  const names = new Set();
  try {
    fields(buf, 0, buf.length, (f, s, e) => {
      if (f !== 7) return;
      fields(buf, s, e, (gf, gs, ge) => {
        if (gf !== 5) return;
        fields(buf, gs, ge, (tf, ts, te) => {
          if (tf === 8) names.add(buf.toString('utf8', ts, te));
        });
      });
    });
  } catch (e) {
    throw new Error(`${modelPath}: cannot read initializer names: ${e.message}`);
  }
  return names;
}

//===--- Main -------------------------------------------------------------===//

function parseArgs(argv) {
  const args = { model: null, inputs: {}, shapes: {}, seed: 0, out: null, json: false,
                 saveInputs: false, optLevel: 'all', batch: null };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`${a} needs a value`);
      return argv[++i];
    };
    const pair = (v) => {
      const eq = v.lastIndexOf('=');
      if (eq <= 0) fail(`'${v}' is not NAME=VALUE`);
      return [v.slice(0, eq), v.slice(eq + 1)];
    };
    if (a === '--input') { const [n, f] = pair(value()); args.inputs[n] = f; }
    else if (a === '--shape') {
      const [n, d] = pair(value());
      const dims = d === '' ? [] : d.split(',').map(Number);
      if (dims.some((x) => !Number.isInteger(x) || x < 0)) fail(`bad dims in --shape ${n}=${d}`);
      args.shapes[n] = dims;
    } else if (a === '--seed') {
      args.seed = Number(value());
      if (!Number.isInteger(args.seed)) fail('--seed needs an integer');
    } else if (a === '--out') args.out = value();
    else if (a === '--json') args.json = true;
    else if (a === '--opt-level') {
      args.optLevel = value();
      if (!['disabled', 'basic', 'extended', 'all'].includes(args.optLevel))
        fail('--opt-level must be disabled, basic, extended or all');
    } else if (a === '--batch') args.batch = value();
    else if (a === '--save-inputs') args.saveInputs = true;
    else if (a === '-h' || a === '--help') {
      const lines = fs.readFileSync(__filename, 'utf8').split('\n');
      const from = lines.findIndex((l) => l.startsWith('// Usage:'));
      const to = lines.findIndex((l) => l.startsWith('// Needs onnxruntime-node'));
      process.stdout.write(lines.slice(from, to).map((l) => l.replace(/^\/\/ ?/, ''))
        .join('\n') + '\n');
      process.exit(0);
    } else if (a.startsWith('-')) fail(`unknown option ${a}`);
    else if (args.model === null) args.model = a;
    else fail(`unexpected argument ${a}`);
  }
  if (!args.model && !args.batch)
    fail('no model given; usage: node tools/ort_run.js MODEL.onnx [options]');
  return args;
}

function safeName(name) {
  return name.replace(/[^A-Za-z0-9_.-]/g, '_');
}

// Runs one model; throws an Error with a one-line message on failure.
async function runJob(ort, job) {
  let session;
  try {
    session = await ort.InferenceSession.create(job.model, {
      intraOpNumThreads: 1, interOpNumThreads: 1, executionProviders: ['cpu'],
      graphOptimizationLevel: job.optLevel || 'all',
    });
  } catch (e) {
    throw new Error(`${job.model}: ONNX Runtime cannot load the model: ${e.message}`);
  }
  const inputs = job.inputs || {};
  const shapes = job.shapes || {};
  for (const name of Object.keys(inputs))
    if (!session.inputNames.includes(name))
      throw new Error(`${job.model}: input ${name} given, but the model has no such input ` +
                      `(inputs: ${session.inputNames.join(', ')})`);
  const next = rng(job.seed || 0);
  const withDefaults = initializerNames(job.model);
  const feeds = {};
  const used = [];
  for (const meta of session.inputMetadata) {
    if (withDefaults.has(meta.name) && !inputs[meta.name]) continue;
    let t;
    if (inputs[meta.name]) {
      t = readNpy(inputs[meta.name]);
    } else {
      const dims = shapes[meta.name] ||
          (meta.shape || []).map((d) => (typeof d === 'number' && d >= 0 ? d : 1));
      t = randomTensor(meta.type, dims, next);
    }
    feeds[meta.name] = new ort.Tensor(t.type, t.data, t.dims);
    used.push([meta.name, t]);
  }
  let results;
  try {
    results = await session.run(feeds);
  } catch (e) {
    throw new Error(`${job.model}: ONNX Runtime failed to run the model: ${e.message}`);
  }
  if (job.out) {
    fs.mkdirSync(job.out, { recursive: true });
    if (job.saveInputs)
      used.forEach(([name, t], i) =>
        writeNpy(path.join(job.out, `input_${i}_${safeName(name)}.npy`), t.type, t.dims, t.data));
  }
  const summary = { model: job.model, seed: job.seed || 0, outputs: [] };
  session.outputNames.forEach((name, i) => {
    const t = results[name];
    const entry = { name, type: t.type, dims: Array.from(t.dims) };
    if (job.out) {
      entry.file = path.join(job.out, `${i}_${safeName(name)}.npy`);
      writeNpy(entry.file, t.type, entry.dims, t.data);
    }
    if (job.json)
      entry.data = Array.from(t.data, (v) => (typeof v === 'bigint' ? v.toString() : v));
    summary.outputs.push(entry);
  });
  await session.release();
  return summary;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const ort = loadOrt();
  ort.env.logLevel = 'error';
  if (!args.batch) {
    try {
      process.stdout.write(JSON.stringify(await runJob(ort, args)) + '\n');
    } catch (e) {
      fail(e.message);
    }
    return;
  }
  // Batch mode: one JSON array of jobs ({model, inputs, shapes, seed, out,
  // optLevel, json}); one JSON line per job, {"error": ...} for a failed one.
  let jobs;
  try {
    jobs = JSON.parse(fs.readFileSync(args.batch, 'utf8'));
  } catch (e) {
    fail(`${args.batch}: cannot read the job list: ${e.message}`);
  }
  for (const job of jobs) {
    try {
      process.stdout.write(JSON.stringify(await runJob(ort, job)) + '\n');
    } catch (e) {
      process.stdout.write(JSON.stringify({ model: job.model,
                                            error: String(e.message).split('\n')[0] }) + '\n');
    }
  }
}

main().catch((e) => fail(e.message));
