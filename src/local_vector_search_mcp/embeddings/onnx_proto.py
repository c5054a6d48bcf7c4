"""The few ONNX protobuf messages the encoder graph needs, serialised by hand.

onnxruntime takes a model as bytes; building them with the ``onnx`` package
would add 33 MB of dependencies (onnx, ml_dtypes) to write one small graph
whose weights we already hold as numpy arrays. Protobuf's wire format is
simple enough to write directly: every field is ``key = number << 3 | wire
type`` followed by a varint (integers), four bytes (float) or a length and the
bytes (strings, nested messages). Field numbers are those of ``onnx.proto``
(ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto,
ValueInfoProto); tests/embeddings parses the result back with the ``onnx``
package (a dev dependency) and checks it.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["GraphBuilder"]

_VARINT, _FIXED32, _BYTES = 0, 5, 2
# TensorProto.DataType
_ELEM_TYPES = {np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.int8): 3, np.dtype(np.int32): 6}
_ELEM_TYPES[np.dtype(np.int64)] = 7
# AttributeProto.AttributeType
_ATTR_FLOAT, _ATTR_INT, _ATTR_STRING, _ATTR_INTS = 1, 2, 3, 7


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64 as its two's complement, as protobuf does
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3 | _VARINT) + _varint(value)


def _bytes(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | _BYTES) + _varint(len(payload)) + payload


def _str(field: int, text: str) -> bytes:
    return _bytes(field, text.encode("utf-8"))


def _attribute(name: str, value: int | float | str | Sequence[int]) -> bytes:
    out = _str(1, name)
    if isinstance(value, bool | int):
        return out + _int(3, int(value)) + _int(20, _ATTR_INT)
    if isinstance(value, float):
        return out + _varint(2 << 3 | _FIXED32) + struct.pack("<f", value) + _int(20, _ATTR_FLOAT)
    if isinstance(value, str):
        return out + _bytes(4, value.encode("utf-8")) + _int(20, _ATTR_STRING)
    return out + b"".join(_int(8, int(v)) for v in value) + _int(20, _ATTR_INTS)


def _value_info(name: str, elem_type: int, dims: Sequence[int | str]) -> bytes:
    shape = b"".join(_bytes(1, _int(1, d) if isinstance(d, int) else _str(2, d)) for d in dims)
    tensor_type = _int(1, elem_type) + _bytes(2, shape)
    return _str(1, name) + _bytes(2, _bytes(1, tensor_type))


class GraphBuilder:
    """Nodes and initialisers of one graph, then the model's bytes."""

    def __init__(self) -> None:
        self._nodes: list[bytes] = []
        self._initializers: list[tuple[bytes, bytes]] = []

    def node(self, op: str, inputs: Sequence[str], outputs: Sequence[str], domain: str = "", **attrs: object) -> None:
        """Append a node (an empty input name skips an optional input)."""
        out = b"".join(_str(1, i) for i in inputs) + b"".join(_str(2, o) for o in outputs)
        out += _str(4, op)
        out += b"".join(_bytes(5, _attribute(k, v)) for k, v in attrs.items())  # type: ignore[arg-type]
        if domain:
            out += _str(7, domain)
        self._nodes.append(out)

    def const(self, name: str, value: npt.NDArray[np.generic]) -> str:
        """An initialiser holding ``value`` (C order, little-endian); returns its name."""
        array = np.ascontiguousarray(value)
        raw = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        head = b"".join(_int(1, d) for d in array.shape) + _int(2, _ELEM_TYPES[array.dtype]) + _str(8, name)
        head += _varint(9 << 3 | _BYTES) + _varint(len(raw))
        # kept as two parts: the weights are copied once, into the model's bytes, not once per nesting level
        self._initializers.append((head, raw))
        return name

    def model(
        self,
        name: str,
        inputs: Sequence[tuple[str, type, Sequence[int | str]]],
        outputs: Sequence[tuple[str, type, Sequence[int | str]]],
        opsets: dict[str, int],
        ir_version: int = 8,
    ) -> bytes:
        """The serialised ModelProto; inputs and outputs are ``(name, numpy type, dims)``."""
        graph: list[bytes] = [_bytes(1, n) for n in self._nodes] + [_str(2, name)]
        for head, raw in self._initializers:
            graph += [_varint(5 << 3 | _BYTES), _varint(len(head) + len(raw)), head, raw]
        graph += [_bytes(11, _value_info(n, _ELEM_TYPES[np.dtype(t)], d)) for n, t, d in inputs]
        graph += [_bytes(12, _value_info(n, _ELEM_TYPES[np.dtype(t)], d)) for n, t, d in outputs]
        opset_import = b"".join(_bytes(8, _str(1, domain) + _int(2, version)) for domain, version in opsets.items())
        graph_len = sum(len(part) for part in graph)
        return b"".join([_int(1, ir_version), opset_import, _varint(7 << 3 | _BYTES), _varint(graph_len), *graph])
