"""How the PostgreSQL adapter stores and compares vectors, per ``embedding.vectorStorage``.

One ``vectors`` table beside ``chunks`` in every layout; its comment records the layout as JSON
(``{"storage": ..., "dimensions": ...}``) so the adapter reads back what it created::

    float32  embedding vector(n)                    HNSW vector_cosine_ops            4n bytes
    float16  embedding halfvec(n)                   HNSW halfvec_cosine_ops           2n bytes
    int8     embedding bytea (n codes), q_scale     HNSW on the codes as halfvec(n)   n bytes
             real, q_zero smallint                  (an expression index)
    binary   embedding vector(n)                    HNSW bit_hamming_ops on           4n bytes
             (+ vector_centre: one row)             lvsm_binary_bits(embedding)::bit(n)
    binary   embedding vector(n)                    HNSW bit_hamming_ops on           4n bytes
    (before                                         binary_quantize(embedding)::bit(n)
    decision 380)

(bytes: the table row's vector; each HNSW index holds its own copy of what it compares: 4n, 2n,
2n and n/8 bytes plus the graph.)

int8: pgvector has no int8 type. The codes are symmetric scalar quantization with one scale per
vector (decision 425: ``round(127 * v / max|v|)``, the largest component +-127), stored as
``bytea``; the row's ``q_scale`` records what a code is worth at unit length (``max|v| / 127``;
1/127 on rows from before 425) and ``q_zero`` the zero point (0). The HNSW index is built over an
expression that turns the codes into a ``halfvec``: integers up to 2048 are exact in half
precision, so the index compares exactly the int8 codes (cosine ignores each vector's scale), as
SQLite's ``vec0 int8`` does with the quantized query. The index proposes ``max(2 x limit, 40)``
candidates, which are re-scored asymmetrically (decision 381): the float32 query against the
stored codes, so the distance reported is ``1 - cos(query, codes)``.

binary: the HNSW index over sign bits (Hamming distance) proposes ``max(8 x limit, 400, rows /
10)`` candidates, at most 4,096 (decision 430: the SQLite adapter's pool; past ``ef_search``'s
1,000 the iterative scan walks on), re-ranked by exact cosine over the float32 column.
The bits are those of ``embedding - centre`` (decision 380): the bundled model's vectors share
a large common direction, so raw signs say little. ``vector_centre`` records the centre (the
mean of the stored vectors, made again while fewer than ``CENTRE_SAMPLE`` vectors made it and
their count has doubled since) and ``lvsm_binary_bits``, an immutable SQL function, holds it as
a constant: the index is built over it and the query's bits come from it, so both always use
one centre; a new centre replaces the function and rebuilds the index in one transaction. A
table from before the centre (no ``"centred"`` in its comment) is searched with raw signs as it
was built until ``ensure_schema`` centres it in place (``VectorLayout.centred_upgrade``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from pgvector import Bit, HalfVector

from .chunks import unit
from .quantized import (
    INT8_MIN_CANDIDATES,
    INT8_OVERFETCH,
    binary_candidates,
    int8_codes,
    int8_scale,
)

__all__ = [
    "INT8_ZERO_POINT",
    "STORAGES",
    "VectorLayout",
    "int8_codes",
    "to_numpy",
]

STORAGES = ("float32", "float16", "int8", "binary")
INT8_ZERO_POINT = 0
MAX_EF_SEARCH = 1000  # pgvector's upper bound

# The codes as a halfvec (minus the zero point): the expression the int8 HNSW index is built on.
# The type is schema-qualified: index builds run with a search path of pg_catalog only. Its cost
# is declared high (it unpacks n bytes) so the planner walks the HNSW index instead of computing
# it for every row of a sequential scan.
INT8_FUNCTION = """
create or replace function lvsm_int8_halfvec(codes bytea, zero smallint) returns {ext}.halfvec
immutable strict parallel safe cost 10000 language sql as $$
  select array(select ((get_byte(codes, i) + 128) % 256 - 128 - zero)::real
               from generate_series(0, length(codes) - 1) as i)::{ext}.halfvec
$$
"""


# The centred binary layout's bits: an immutable function whose body holds the centre as a
# constant (replaced, and the index rebuilt, in the transaction that changes the centre). Every
# name is schema-qualified: index builds run with a search path of pg_catalog only.
BINARY_FUNCTION = """
create or replace function lvsm_binary_bits(v {ext}.vector) returns bit
immutable strict parallel safe language sql as $$
  select {ext}.binary_quantize(v operator({ext}.-) '{centre}'::{ext}.vector)::bit({n})
$$
"""

# The mean of the stored vectors becomes the centre (no row when there is no vector).
CENTRE_MEAN = (
    b"update vector_centre set vectors = s.n, centre = s.c"
    b" from (select count(*) as n, avg(embedding) as c from vectors) s where s.n > 0"
    b" returning vector_centre.centre"
)

# The binary layout's centre: one row, created with the table (zeros: no vector yet).
CENTRE_TABLE = (
    "create table vector_centre (id smallint primary key check (id = 1), vectors bigint not null,"
    " centre vector({n}) not null);"
    " insert into vector_centre values (1, 0, array_fill(0::real, array[{n}])::vector({n}))"
)


_UNIT_SLACK = 1e-6  # how far from 1 a stored unit vector's float32 norm may be (about 1e-7)


@dataclass(frozen=True)
class VectorLayout:
    storage: str
    dimensions: int
    centred: bool = False  # binary: the index over the bits of ``embedding - centre`` (decision 380)

    @classmethod
    def new(cls, storage: str, dimensions: int) -> VectorLayout:
        """The layout a new table gets (binary: centred)."""
        return cls(storage, dimensions, storage == "binary")

    # schema ---------------------------------------------------------------------------
    def create(self, extension_schema: str) -> bytes:
        """The table, its HNSW index and its comment (run inside the caller's transaction).
        Only integers, constants and the quoted schema of the ``vector`` extension go into the
        text: nothing here comes from a user."""
        n = int(self.dimensions)
        column = {
            "float32": f"embedding vector({n}) not null",
            "float16": f"embedding halfvec({n}) not null",
            "int8": f"embedding bytea not null check (length(embedding) = {n}),"
            " q_scale real not null, q_zero smallint not null",
            "binary": f"embedding vector({n}) not null",
        }[self.storage]
        parts = [
            f"create table vectors (chunk_id bigint primary key references chunks(id) on delete cascade, {column})",
            self.index(),
            "comment on table vectors is '" + self.comment().replace("'", "''") + "'",
        ]
        if self.storage == "int8":
            parts.insert(0, INT8_FUNCTION.format(ext=_quoted(extension_schema)))
        if self.centred:
            parts[:0] = [self.bits_function(extension_schema, np.zeros(n, np.float32)), CENTRE_TABLE.format(n=n)]
        return "; ".join(parts).encode()

    def bits_function(self, extension_schema: str, centre: npt.NDArray[np.float32]) -> str:
        """``lvsm_binary_bits`` for ``centre`` (float32 values written exactly: ``repr``)."""
        text = "[" + ",".join(repr(float(x)) for x in np.asarray(centre, dtype=np.float32)) + "]"
        return BINARY_FUNCTION.format(ext=_quoted(extension_schema), centre=text, n=int(self.dimensions))

    def index(self) -> str:
        """The HNSW index (m 16, ef_construction 64: pgvector's defaults)."""
        ops = {
            "float32": "vector_cosine_ops",
            "float16": "halfvec_cosine_ops",
            "int8": "halfvec_cosine_ops",
            "binary": "bit_hamming_ops",
        }[self.storage]
        return f"create index vectors_hnsw on vectors using hnsw ({self._ann_expr('')} {ops})"

    def comment(self) -> str:
        found: dict[str, Any] = {"storage": self.storage, "dimensions": self.dimensions}
        if self.centred:
            found["centred"] = True
        return json.dumps(found)

    @classmethod
    def from_catalog(cls, comment: str | None, column_type: str, index_def: str, typmod: int) -> VectorLayout:
        """The layout of an existing table: its comment, else (tables made before the comment
        existed: float32 only) the column's type."""
        if comment:
            try:
                found = json.loads(comment)
                return cls(str(found["storage"]), int(found["dimensions"]), found.get("centred") is True)
            except (ValueError, KeyError, TypeError):
                pass
        if column_type.startswith("halfvec"):
            return cls("float16", typmod)
        if "binary_quantize" in index_def:
            return cls("binary", typmod)
        return cls("float32", typmod)

    # values -----------------------------------------------------------------------------
    @property
    def insert_columns(self) -> str:
        return "embedding, q_scale, q_zero" if self.storage == "int8" else "embedding"

    @property
    def insert_marks(self) -> str:
        return "%s, %s, %s" if self.storage == "int8" else "%s"

    # the binary centre ----------------------------------------------------------------
    def recentre(self, conn: Any, extension_schema: str, rebuild: str) -> None:
        """Make the centre the mean of every stored vector (nothing when there is none), put it
        into ``lvsm_binary_bits`` and rebuild the index (``rebuild``: ``reindex`` an existing
        one, ``create`` a new one), in the caller's transaction. The index rebuild takes the
        table's SHARE lock: a write in progress is waited for and included, a later one waits
        for the commit and then computes its bits with the new function, so no row keeps bits
        of another centre."""
        found = conn.execute(CENTRE_MEAN).fetchone()
        if found is not None:
            conn.execute(self.bits_function(extension_schema, to_numpy(found[0])).encode())
        conn.execute(b"reindex index vectors_hnsw" if rebuild == "reindex" else self.index().encode())

    def centred_upgrade(self, conn: Any, extension_schema: str) -> VectorLayout:
        """A binary table from before decision 380 made centred in place, in the caller's
        transaction: its float32 vectors are all there, so nothing is re-embedded; the raw-sign
        expression index is replaced by the centred one."""
        centred = VectorLayout(self.storage, self.dimensions, True)
        n = int(self.dimensions)
        conn.execute(CENTRE_TABLE.format(n=n).encode())
        conn.execute(b"drop index vectors_hnsw")
        conn.execute(centred.bits_function(extension_schema, np.zeros(n, np.float32)).encode())
        centred.recentre(conn, extension_schema, "create")
        conn.execute(("comment on table vectors is '" + centred.comment().replace("'", "''") + "'").encode())
        return centred

    def row(self, vector: npt.NDArray[np.float32], normalise: bool = True) -> tuple[Any, ...]:
        """The stored values of one vector, normalised to unit length first unless it comes
        from another index as it was stored (a copy between engines keeps float32 bit for bit)."""
        v = np.asarray(vector, dtype=np.float32)
        # a vector already of unit length is kept as it is: a chunk re-indexed with its text unchanged
        # gets its stored vector back, and dividing by its float32 norm again moved its last bits on
        # every re-index (decision 1036)
        if normalise and abs(float(np.linalg.norm(v)) - 1.0) > _UNIT_SLACK:
            v = unit(v)
        if self.storage == "float16":
            return (HalfVector(v),)
        if self.storage == "int8":
            return (int8_codes(v).tobytes(), int8_scale(v), INT8_ZERO_POINT)
        return (v,)

    def read_expr(self, alias: str) -> str:
        """SQL giving a stored vector back in a type the pgvector loaders turn into numpy."""
        if self.storage == "int8":
            return f"lvsm_int8_halfvec({alias}.embedding, {alias}.q_zero)"
        return f"{alias}.embedding"

    # comparisons ---------------------------------------------------------------------------
    def probe(self, vector: npt.NDArray[np.float32]) -> dict[str, Any]:
        """Query parameters: ``v`` for the exact distance, ``a`` for the ANN index's."""
        q = unit(vector)
        if self.storage == "float16":
            return {"v": HalfVector(q), "a": HalfVector(q)}
        if self.storage == "int8":  # candidates by the quantized query, scores by the float one
            return {"v": q, "a": HalfVector(int8_codes(q).astype(np.float32))}
        if self.storage == "binary":  # centred: the bits are computed from ``v`` in the query
            return {"v": q} if self.centred else {"v": q, "a": Bit(q > 0)}
        return {"v": q, "a": q}

    def _ann_expr(self, alias: str) -> str:
        col = f"{alias}.embedding" if alias else "embedding"
        zero = f"{alias}.q_zero" if alias else "q_zero"
        n = int(self.dimensions)
        if self.storage == "int8":
            return f"(lvsm_int8_halfvec({col}, {zero})::halfvec({n}))"
        if self.storage == "binary":
            if self.centred:
                return f"(lvsm_binary_bits({col})::bit({n}))"
            return f"(binary_quantize({col})::bit({n}))"
        return col

    def ann_distance(self, alias: str) -> str:
        """The distance the HNSW index orders by (``%(a)s`` the probe; centred binary: the
        query's bits from ``%(v)s`` and the stored centre)."""
        if self.centred:
            n = int(self.dimensions)
            return f"{self._ann_expr(alias)} <~> (lvsm_binary_bits(%(v)s::vector({n}))::bit({n}))"
        op = "<~>" if self.storage == "binary" else "<=>"
        return f"{self._ann_expr(alias)} {op} %(a)s"

    def exact_distance(self, alias: str) -> str:
        """Cosine distance as this layout scores it (``%(v)s`` the float32 query): over float32
        (float32, binary), the halves (float16), the int8 codes as a vector (int8: asymmetric,
        decision 381; cosine ignores the codes' scale)."""
        if self.storage == "int8":
            return f"(lvsm_int8_halfvec({alias}.embedding, {alias}.q_zero)::vector({int(self.dimensions)})) <=> %(v)s"
        return f"{alias}.embedding <=> %(v)s"

    def candidates(self, limit: int, rows: int = 0) -> int:
        """How many rows the ANN index proposes for ``limit`` results out of about ``rows`` stored
        vectors. binary: the SQLite adapter's pool, growing with the index (decision 430); beyond
        ``hnsw.ef_search``'s 1,000 the iterative scan (strict order) walks on to fill it."""
        if self.storage == "binary":
            return binary_candidates(limit, rows)
        if self.storage == "int8":
            return min(max(limit * INT8_OVERFETCH, INT8_MIN_CANDIDATES), MAX_EF_SEARCH)
        return limit

    @property
    def reranks(self) -> bool:
        return self.storage in ("binary", "int8")


def _quoted(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def to_numpy(value: Any) -> npt.NDArray[np.float32]:
    """A stored vector as a float32 numpy array (pgvector's loaders hand back their own types)."""
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)
