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
  torch_segnet_dynamic.onnx
                         what torch.onnx.export (opset 13, dynamic_axes on
                         batch, height and width) writes for a small
                         MobileNetV3-style segmentation net: "/module/Op"
                         node names, "onnx::Conv_N" initializers, HardSwish
                         as HardSigmoid + Mul, ReLU6 as Clip with Constant
                         bounds, BatchNormalization kept (a training-mode
                         export), squeeze-excite, a bilinear Resize by
                         Constant scales, a ConvTranspose, and a Resize to
                         the input's size through Shape -> Slice -> Concat.

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


def weights(name, shape, scale=0.5):
    return numpy_helper.from_array(RNG.standard_normal(shape).astype(np.float32) * scale, name)


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


class TorchExport:
    """Nodes and initializers named the way torch.onnx.export names them."""

    def __init__(self):
        self.nodes, self.inits, self.counter = [], [], 0

    def node(self, op, inputs, module, **attrs):
        out = f"{module}/{op}_output_0"
        self.nodes.append(helper.make_node(op, inputs, [out], name=f"{module}/{op}", **attrs))
        return out

    def const(self, module, value, dtype):
        out = f"{module}/Constant_output_0"
        self.nodes.append(helper.make_node(
            "Constant", [], [out], name=f"{module}/Constant",
            value=numpy_helper.from_array(np.array(value, dtype=dtype), name="")))
        return out

    def param(self, name, shape, scale):
        self.inits.append(weights(name, shape, scale))
        return name

    def conv(self, x, module, cin, cout, k, stride=1, group=1, bias=True):
        # Eval-mode exports fold BN into the conv and name the result
        # "onnx::Conv_N"; the fan-in scale keeps activations O(1).
        self.counter += 1
        scale = 1.0 / np.sqrt(cin // group * k * k)
        w = self.param(f"onnx::Conv_{self.counter}", (cout, cin // group, k, k), scale)
        inputs = [x, w]
        if bias:
            inputs.append(self.param(f"onnx::Conv_{self.counter}_bias", (cout,), 0.1))
        return self.node("Conv", inputs, module, dilations=[1, 1], group=group,
                         kernel_shape=[k, k], pads=[k // 2] * 4, strides=[stride, stride])

    def bn(self, x, module, c):
        prefix = module[1:].replace("/", ".")
        names = [f"{prefix}.{p}" for p in ("weight", "bias", "running_mean", "running_var")]
        values = [1 + 0.1 * RNG.standard_normal(c), 0.1 * RNG.standard_normal(c),
                  0.1 * RNG.standard_normal(c), 0.5 + RNG.random(c)]
        self.inits += [numpy_helper.from_array(v.astype(np.float32), name)
                       for v, name in zip(values, names)]
        return self.node("BatchNormalization", [x] + names, module, epsilon=1e-5, momentum=0.9)

    def hardswish(self, x, module):
        # opset 13 has no HardSwish: torch writes x * hardsigmoid(x).
        gate = self.node("HardSigmoid", [x], module, alpha=1.0 / 6, beta=0.5)
        return self.node("Mul", [x, gate], module)

    def relu6(self, x, module):
        lo = self.const(module + "/lo", 0.0, np.float32)
        hi = self.const(module + "/hi", 6.0, np.float32)
        return self.node("Clip", [x, lo, hi], module)


def torch_segnet_dynamic():
    #   input[batch_size, 3, height, width]
    #     stem: Conv s2 (folded BN) -> HardSigmoid/Mul (hardswish)      /2, 16 ch
    #     block: dw Conv -> BN -> Relu -> SE(GAP, Conv, Relu, Conv,
    #            HardSigmoid, Mul) -> 1x1 Conv -> BN -> Add(stem)        /2, 16 ch
    #     down: Conv s2 -> Clip(0, 6) -> 1x1 Conv -> hardswish           /4, 32 ch
    #     up:   Resize(scales 2, bilinear) -> Add(block) -> Relu         /2, 32 ch
    #           ConvTranspose s2 -> BN -> Relu                           /1, 8 ch
    #     head: Resize(sizes = Shape(input)[2:4]) -> Conv 1x1 -> logits[batch_size, 5, height, width]
    t = TorchExport()
    x = "input"
    stem = t.hardswish(t.conv(x, "/stem/conv", 3, 16, 3, stride=2), "/stem/act")
    b = t.conv(stem, "/block/dw", 16, 16, 3, group=16, bias=False)
    b = t.node("Relu", [t.bn(b, "/block/dw_bn", 16)], "/block/dw_act")
    s = t.node("GlobalAveragePool", [b], "/block/se/pool")
    s = t.node("Relu", [t.conv(s, "/block/se/fc1", 16, 8, 1)], "/block/se/act")
    s = t.node("HardSigmoid", [t.conv(s, "/block/se/fc2", 8, 16, 1)], "/block/se/gate",
               alpha=1.0 / 6, beta=0.5)
    b = t.node("Mul", [b, s], "/block/se")
    b = t.bn(t.conv(b, "/block/pw", 16, 16, 1, bias=False), "/block/pw_bn", 16)
    block = t.node("Add", [b, stem], "/block")
    d = t.relu6(t.conv(block, "/down/conv", 16, 32, 3, stride=2), "/down/act")
    d = t.hardswish(t.conv(d, "/down/pw", 32, 16, 1), "/down/pw_act")
    scales = t.const("/up/scales", [1.0, 1.0, 2.0, 2.0], np.float32)
    u = t.node("Resize", [d, "", scales], "/up/interp", mode="linear",
               coordinate_transformation_mode="pytorch_half_pixel", nearest_mode="floor",
               cubic_coeff_a=-0.75)
    u = t.node("Relu", [t.node("Add", [u, block], "/up")], "/up/act")
    t.counter += 1
    tw = t.param(f"onnx::ConvTranspose_{t.counter}", (16, 8, 2, 2), 0.25)
    u = t.node("ConvTranspose", [u, tw], "/up/deconv", dilations=[1, 1], group=1,
               kernel_shape=[2, 2], pads=[0, 0, 0, 0], strides=[2, 2])
    u = t.node("Relu", [t.bn(u, "/up/deconv_bn", 8)], "/up/deconv_act")
    # F.interpolate(u, size=input.shape[-2:], mode="bilinear"): sizes from
    # the input's runtime shape, the form every dynamic-size export takes.
    shape_in = t.node("Shape", [x], "/head/shape_in")
    hw = t.node("Slice", [shape_in, t.const("/head/start", [2], np.int64),
                          t.const("/head/end", [4], np.int64),
                          t.const("/head/axes", [0], np.int64)], "/head/hw")
    shape_u = t.node("Shape", [u], "/head/shape_u")
    nc = t.node("Slice", [shape_u, t.const("/head/nc_start", [0], np.int64),
                          t.const("/head/nc_end", [2], np.int64),
                          t.const("/head/nc_axes", [0], np.int64)], "/head/nc")
    sizes = t.node("Concat", [nc, hw], "/head/sizes", axis=0)
    h = t.node("Resize", [u, "", "", sizes], "/head/interp", mode="linear",
               coordinate_transformation_mode="pytorch_half_pixel", nearest_mode="floor",
               cubic_coeff_a=-0.75)
    logits = t.conv(h, "/head/classifier", 8, 5, 1)
    t.nodes.append(helper.make_node("Identity", [logits], ["logits"], name="/head/Identity"))
    graph = helper.make_graph(
        t.nodes, "main_graph",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                       ["batch_size", 3, "height", "width"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       ["batch_size", 5, "height", "width"])], t.inits)
    model = helper.make_model(graph, producer_name="pytorch", producer_version="2.1.0",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    save(model, "torch_segnet_dynamic.onnx")


if __name__ == "__main__":
    opset9_dynamic()
    opset11_dynamic()
    many_constants()
    control_flow()
    torch_segnet_dynamic()
