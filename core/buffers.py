"""Named views into flat buffers, without reference counting.

The model (`core.kernel_model`) and the per-call state (`core.workspace`) are flat
numpy buffers cut into named arrays inside the compiled kernels. Cutting them with
slices and `reshape` made every field a reference-counted view and every reshape a
call into numba's C helpers: about two microseconds per call for the sixty fields,
as much as a whole forward dynamics of a small arm. `view(buffer, offset, shape)`
is instead a plain array over the buffer's memory (numba's `carray` of a pointer):
free to make, and valid while the buffer lives, which the caller guarantees by
holding the buffer for the whole call.
"""
from __future__ import annotations

from numba import carray, njit, types
from numba.extending import intrinsic


@intrinsic
def _address_of(typingctx, buffer, offset):
    """A raw pointer to buffer[offset] (a 1-D contiguous array)."""
    sig = types.CPointer(buffer.dtype)(buffer, offset)

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.gep(array.data, [args[1]])

    return sig, codegen


@njit(cache=True, inline="always")
def view(buffer, offset, shape):
    """The array of `shape` over buffer[offset:], no copy, no reference counting."""
    return carray(_address_of(buffer, offset), shape)
