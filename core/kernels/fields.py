"""Field tables: flat buffers declared once, field by field, and cut into named views.

The model's buffers (`core.kernels.layout`) and the per-call state (`core.kernels.data`)
are flat numpy arrays cut into named fields, as MuJoCo declares every field of its
`mjModel` and `mjData` once, in one line of `mjxmacro.h`, and derives the rest. Here a
`FieldTable` is that declaration: a list of `Field`s (name, shape in terms of the
table's named sizes, which buffer, a line of documentation). From it follow

- the buffer lengths for given sizes (`FieldTable.lengths`),
- the views inside compiled kernels (`FieldTable.cutter()`: a numba intrinsic that
  lays the fields out one after the other, as plain C-ordered arrays over the buffers'
  memory, with no copy and no reference counting; a buffer shorter than its fields
  raises IndexError instead of handing out views past its end),
- the same views from Python, as numpy views that keep their buffer alive
  (`FieldTable.numpy_views`),
- the documented table (`FieldTable.describe`), which the modules put in their
  docstrings.

The views come as a namedtuple of the table's name: first the sizes (ints), then the
fields in order.
"""
from __future__ import annotations

import math
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array


@dataclass(frozen=True)
class Field:
    """One field: `shape` holds ints and size names of its table; `buffer` is the index
    of the buffer it lives in (a table may span a float and an int buffer)."""

    name: str
    shape: tuple
    doc: str
    buffer: int = 0


class FieldTable:
    """A declaration of named fields over one or more flat buffers (module docstring).

    name    : the namedtuple's name (and the module-level name it must be bound to, so
              that numba's cache can pickle its type)
    module  : that module's name
    sizes   : the size names, in the order the views list them
    dtypes  : the dtype of each buffer
    fields  : the fields, in buffer order
    """

    def __init__(self, name: str, module: str, sizes: tuple[str, ...],
                 dtypes: tuple[type, ...], fields: tuple[Field, ...]) -> None:
        names = [f.name for f in fields]
        if len(set(names) | set(sizes)) != len(names) + len(sizes):
            raise ValueError(f"{name}: a field name is used twice")
        for f in fields:
            for d in f.shape:
                if not (isinstance(d, int) or d in sizes):
                    raise ValueError(f"{name}.{f.name}: unknown size {d!r}")
            if not 0 <= f.buffer < len(dtypes):
                raise ValueError(f"{name}.{f.name}: no buffer {f.buffer}")
        self.name, self.sizes, self.dtypes, self.fields = name, tuple(sizes), tuple(dtypes), \
            tuple(fields)
        self.views_type = namedtuple(name, (*sizes, *names), module=module)

    # ----- Python side --------------------------------------------------------------
    def shape_of(self, field: Field, sizes: dict[str, int]) -> tuple[int, ...]:
        return tuple(d if isinstance(d, int) else int(sizes[d]) for d in field.shape)

    def lengths(self, **sizes: int) -> tuple[int, ...]:
        """The length of each buffer for these sizes."""
        out = [0] * len(self.dtypes)
        for f in self.fields:
            out[f.buffer] += math.prod(self.shape_of(f, sizes))
        return tuple(out)

    def new_buffers(self, **sizes: int) -> tuple[np.ndarray, ...]:
        """Zeroed buffers for these sizes."""
        return tuple(np.zeros(length, dtype=dtype)
                     for length, dtype in zip(self.lengths(**sizes), self.dtypes))

    def numpy_views(self, buffers: tuple[np.ndarray, ...], **sizes: int):
        """The named fields as numpy views into `buffers` (they keep the buffers alive)."""
        offsets = [0] * len(self.dtypes)
        views = []
        for f in self.fields:
            shape = self.shape_of(f, sizes)
            start = offsets[f.buffer]
            stop = start + math.prod(shape)
            if stop > buffers[f.buffer].shape[0]:
                raise IndexError(f"{self.name}.{f.name} lies past the end of its buffer")
            views.append(buffers[f.buffer][start:stop].reshape(shape))
            offsets[f.buffer] = stop
        return self.views_type(*(int(sizes[s]) for s in self.sizes), *views)

    def describe(self) -> str:
        """The table as text: one line per field, its shape and what it holds."""
        lines = []
        for f in self.fields:
            shape = "(" + ", ".join(str(d) for d in f.shape) + ("," if len(f.shape) == 1 else "") + ")"
            head = f"    {f.name} {shape}"
            doc = f.doc.split("\n")
            lines.append(f"{head:<26} {doc[0]}")
            lines.extend(f"{'':<27}{more}" for more in doc[1:])
        return "\n".join(lines)

    # ----- compiled side ------------------------------------------------------------
    def cutter(self):
        """A numba intrinsic `cut(sizes, buffers)`: sizes a tuple of ints in the order of
        `sizes`, buffers a tuple of 1-D contiguous arrays; returns the views namedtuple
        (module docstring). Raises IndexError if a buffer is shorter than its fields."""
        table = self
        size_index = {s: i for i, s in enumerate(table.sizes)}

        @intrinsic
        def cut(typingctx, sizes, buffers):
            array_types = [types.Array(buffers[f.buffer].dtype, len(f.shape), "C")
                           for f in table.fields]
            result = types.NamedTuple([types.intp] * len(table.sizes) + array_types,
                                      table.views_type)

            def codegen(context, builder, signature, args):
                intp = types.intp
                size_values = [context.cast(builder, v, t, intp) for v, t in
                               zip(cgutils.unpack_tuple(builder, args[0]), signature.args[0])]
                buffer_structs = [context.make_array(t)(context, builder, v) for v, t in
                                  zip(cgutils.unpack_tuple(builder, args[1]), signature.args[1])]
                offsets = [context.get_constant(intp, 0) for _ in buffer_structs]
                members = list(size_values)
                for f, array_type in zip(table.fields, array_types):
                    source = buffer_structs[f.buffer]
                    dims = [context.get_constant(intp, d) if isinstance(d, int)
                            else size_values[size_index[d]] for d in f.shape]
                    itemsize = context.get_constant(
                        intp, context.get_abi_sizeof(context.get_data_type(array_type.dtype)))
                    strides = [itemsize] * len(dims)
                    for i in range(len(dims) - 2, -1, -1):
                        strides[i] = builder.mul(strides[i + 1], dims[i + 1])
                    out = context.make_array(array_type)(context, builder)
                    populate_array(out, data=builder.gep(source.data, [offsets[f.buffer]]),
                                   shape=dims, strides=strides, itemsize=itemsize,
                                   meminfo=None)
                    members.append(out._getvalue())
                    count = context.get_constant(intp, 1)
                    for d in dims:
                        count = builder.mul(count, d)
                    offsets[f.buffer] = builder.add(offsets[f.buffer], count)
                for source, end in zip(buffer_structs, offsets):
                    length = cgutils.unpack_tuple(builder, source.shape)[0]
                    with builder.if_then(builder.icmp_signed(">", end, length), likely=False):
                        context.call_conv.return_user_exc(
                            builder, IndexError,
                            (f"a buffer of {table.name} is shorter than its fields",))
                return context.make_tuple(builder, result, members)

            return result(sizes, buffers), codegen

        return cut
