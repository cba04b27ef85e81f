#!/usr/bin/python3
"""tests/data/onnx/make_models.py - Builds the small ONNX models the tests use.

Each model imitates what real exporters write, in a few kilobytes:

  opset9_dynamic.onnx    PyTorch-1.x style, IR 4, opset 9: a dynamic batch
                         dim, initializers also listed as graph inputs, and
                         the Shape -> Gather -> Unsqueeze -> Concat ->
                         Reshape chain that flattens conv features.
  opset11_dynamic.onnx   opset 11: symbolic batch and sequence dims, a
                         MatMul over the last axis and a Reshape back to
                         [batch, seq, -1] built from Shape/Gather/Unsqueeze,
                         with Constant nodes for every index.
  many_constants.onnx    opset 13: 300 Constant nodes feeding an Add chain.
  control_flow.onnx      opset 13: If with branches reading outer values and
                         a Loop whose body reads an outer weight.

Run with Debian's python3-onnx and python3-numpy (`/usr/bin/python3
tests/data/onnx/make_models.py`); the output is deterministic, and every
model passes onnx.checker with full shape inference.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20240517)


def const(name, value, dtype=np.int64):
    """A Constant node producing `name`, as exporters emit for every index."""
    return helper.make_node(
        "Constant", [], [name], name=name + "_const",
        value=numpy_helper.from_array(np.array(value, dtype=dtype), name=""))


def weights(name, shape):
    return numpy_helper.from_array(RNG.standard_normal(shape).astype(np.float32) * 0.5, name)


def save(model, filename):
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(HERE, filename))
    print("wrote", filename, len(model.graph.node), "nodes")


def opset9_dynamic():
    #   x[N,3,4,4] -> Conv(w,b) -> Relu -> h[N,4,4,4]
    #   h -> Shape -> Gather(0) -> Unsqueeze -> Concat(n, [-1]) -> Reshape(h) -> Gemm -> y[N,5]
    w, b = weights("conv.weight", (4, 3, 3, 3)), weights("conv.bias", (4,))
    fw, fb = weights("fc.weight", (5, 64)), weights("fc.bias", (5,))
    nodes = [
        helper.make_node("Conv", ["x", "conv.weight", "conv.bias"], ["c"], name="Conv_0",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("Relu", ["c"], ["h"], name="Relu_1"),
        helper.make_node("Shape", ["h"], ["s"], name="Shape_2"),
        const("idx0", 0),
        helper.make_node("Gather", ["s", "idx0"], ["n"], name="Gather_4", axis=0),
        helper.make_node("Unsqueeze", ["n"], ["n1"], name="Unsqueeze_5", axes=[0]),
        const("minus1", [-1]),
        helper.make_node("Concat", ["n1", "minus1"], ["shape"], name="Concat_7", axis=0),
        helper.make_node("Reshape", ["h", "shape"], ["flat"], name="Reshape_8"),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["y"], name="Gemm_9",
                         alpha=1.0, beta=1.0, transB=1),
    ]
    inits = [w, b, fw, fb]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4, 4])]
    # Old exporters listed every initializer as a graph input as well.
    inputs += [helper.make_tensor_value_info(t.name, TensorProto.FLOAT, list(t.dims))
               for t in inits]
    graph = helper.make_graph(
        nodes, "torch-jit-export", inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])], inits)
    model = helper.make_model(graph, producer_name="pytorch", producer_version="1.4",
                              opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 4
    save(model, "opset9_dynamic.onnx")


def opset11_dynamic():
    #   x[batch,seq,8] -> MatMul(w) -> Add(b) -> Relu -> r[batch,seq,6]
    #   x -> Shape -> Gather(0), Gather(1) -> Unsqueeze -> Concat(batch, seq, [3], [2])
    #   r -> Reshape(that) -> [batch,seq,3,2] -> Transpose -> [batch,seq,2,3]
    #     -> Flatten(axis=2) -> y[batch*seq, 6]
    w, b = weights("proj.weight", (8, 6)), weights("proj.bias", (6,))
    nodes = [
        helper.make_node("MatMul", ["x", "proj.weight"], ["m"], name="MatMul_0"),
        helper.make_node("Add", ["m", "proj.bias"], ["a"], name="Add_1"),
        helper.make_node("Relu", ["a"], ["r"], name="Relu_2"),
        helper.make_node("Shape", ["x"], ["xs"], name="Shape_3"),
        const("c0", 0),
        const("c1", 1),
        helper.make_node("Gather", ["xs", "c0"], ["batch"], name="Gather_6", axis=0),
        helper.make_node("Gather", ["xs", "c1"], ["seq"], name="Gather_7", axis=0),
        helper.make_node("Unsqueeze", ["batch"], ["batch1"], name="Unsqueeze_8", axes=[0]),
        helper.make_node("Unsqueeze", ["seq"], ["seq1"], name="Unsqueeze_9", axes=[0]),
        const("heads", [3]),
        const("width", [2]),
        helper.make_node("Concat", ["batch1", "seq1", "heads", "width"], ["newshape"],
                         name="Concat_12", axis=0),
        helper.make_node("Reshape", ["r", "newshape"], ["split"], name="Reshape_13"),
        helper.make_node("Transpose", ["split"], ["t"], name="Transpose_14", perm=[0, 1, 3, 2]),
        helper.make_node("Flatten", ["t"], ["y"], name="Flatten_15", axis=2),
    ]
    graph = helper.make_graph(
        nodes, "exported", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                          ["batch", "seq", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch_x_seq", 6])], [w, b])
    model = helper.make_model(graph, producer_name="tf2onnx", producer_version="1.9",
                              opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 6
    save(model, "opset11_dynamic.onnx")


def many_constants():
    #   x -> Add(c0) -> Add(c1) -> ... -> Add(c299) -> y, each ci a Constant node
    nodes, prev = [], "x"
    for i in range(300):
        nodes.append(const(f"k{i}", RNG.standard_normal(4).astype(np.float32) * 0.01,
                           np.float32))
        out = "y" if i == 299 else f"s{i}"
        nodes.append(helper.make_node("Add", [prev, f"k{i}"], [out], name=f"Add_{i}"))
        prev = out
    graph = helper.make_graph(
        nodes, "constants", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    save(model, "many_constants.onnx")


def control_flow():
    #   x[2,3], flag -> If(flag): then Relu(x)*w, else Neg(x)   (x, w from outer scope)
    #   Loop(n=3): acc = acc + w                               (w from outer scope)
    w = weights("w", (2, 3))
    then_g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["tr"]), helper.make_node("Mul", ["tr", "w"], ["to"])],
        "then_branch", [], [helper.make_tensor_value_info("to", TensorProto.FLOAT, [2, 3])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["eo"])], "else_branch", [],
        [helper.make_tensor_value_info("eo", TensorProto.FLOAT, [2, 3])])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["acc_in", "w"], ["acc_out"])],
        "loop_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2, 3])])
    nodes = [
        helper.make_node("If", ["flag"], ["branch"], name="if", then_branch=then_g,
                         else_branch=else_g),
        const("trips", 3),
        const("keep_going", True, np.bool_),
        helper.make_node("Loop", ["trips", "keep_going", "branch"], ["y"], name="loop",
                         body=body),
    ]
    graph = helper.make_graph(
        nodes, "control_flow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("flag", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    save(model, "control_flow.onnx")


if __name__ == "__main__":
    opset9_dynamic()
    opset11_dynamic()
    many_constants()
    control_flow()
