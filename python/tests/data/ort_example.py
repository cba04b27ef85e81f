"""An ONNX Runtime example script, as its users write them (ONNX Runtime's
Python "Get started" steps): options, a session on the CPU provider,
the input's name from get_inputs(), run(None, feeds). test_inference_session.py
runs it with `import onnxruntime as ort` changed to `import subgraph as ort`
and nothing else.

Usage: ort_example.py MODEL.onnx OUT.npy
"""
import sys

import numpy as np
import onnxruntime as ort

model_path, out_path = sys.argv[1], sys.argv[2]

sess_options = ort.SessionOptions()
sess_options.intra_op_num_threads = 2
sess_options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
session = ort.InferenceSession(model_path, sess_options, providers=["CPUExecutionProvider"])

print("providers:", session.get_providers())
for i in session.get_inputs():
    print("input:", i.name, i.shape, i.type)
for o in session.get_outputs():
    print("output:", o.name, o.shape, o.type)

input_name = session.get_inputs()[0].name
shape = [d if isinstance(d, int) else 1 for d in session.get_inputs()[0].shape]
x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
outputs = session.run(None, {input_name: x})
print("top-5:", np.argsort(outputs[0][0])[::-1][:5].tolist())
np.save(out_path, outputs[0])
