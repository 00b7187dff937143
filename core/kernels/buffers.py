"""Compiled kernels without reference counting, and named views into flat buffers.

The model (`core.kernels.layout`) and the per-call state (`core.kernels.data`) are flat
numpy buffers cut into named arrays inside the compiled kernels. Two costs of numba's
defaults dominated kernels as short as ours (a few hundred flops per joint):

- Reference counting. numba's runtime (NRT) increments and decrements a counter
  around every use of an array, through an out-of-line call: 226 calls in the loop
  geometry of one cut joint, three quarters of its time, and half the time of a
  closed-chain forward dynamics. The kernels never allocate: every array they touch
  belongs to a buffer the caller holds for the whole call. So they are compiled
  without NRT (`compiled_kernel`); numba then refuses, at compile time, any
  allocation in them (np.empty, np.zeros, ...), and does not box the arrays they
  would return: a kernel whose result Python reads returns numbers, or writes into
  arrays Python passed in. (Dispatch is cheaper too: an array argument is not
  wrapped in a counted handle.)
- Type tests. A single-state call (one forward dynamics of a small arm: about a
  microsecond of arithmetic) paid as much again in Python for checking that its
  arguments were float vectors. A `closed_kernel` is compiled only for the argument
  types of its first call (`compile_and_call`) and then refuses others: numba matches
  the types in C, and anything else raises TypeError at once, so the caller's fast
  path is `try: kernel(...)` and its `except TypeError:` the checked path.
- Views. Slicing and `reshape` call into numba's C helpers for every field.
  `view(buffer, offset, shape)` is instead a plain C-ordered array over the buffer's
  memory, made inline: free, and valid while the buffer lives.
"""
from __future__ import annotations

import threading
import types as pytypes

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

from . import blas_check, cache_load, flags, inliner

inliner.install()  # numba's IR inliner without its own costs, before any kernel compiles
flags.install()  # and its compiler flags listed without theirs
cache_load.install()  # numba's cache loads a kernel without parsing its module for linking
blas_check.install()  # numba's BLAS check at a start without importing scipy.linalg

#: Decorator of every compiled kernel: nopython mode, cached on disk (`core.kernels.cache`),
#: compiled without numba's reference counting (see the module docstring), and running
#: without Python's global lock (a simulation in a worker thread leaves the window's
#: thread free; the kernels touch no Python object). Helpers of a few lines are
#: `inlined_kernel`s instead. forceinline is set (False) so that a kernel first compiled
#: from an inlined helper does not inherit the helper's (numba passes it down).
#: No kernel is called through a C function pointer (numba's first-class functions), so
#: none has numba's C wrapper ("no_cfunc_wrapper"): built for every compiled function by
#: default, 2.6 s of the 25 s of CPU of a small arm's first free fall (fresh cache).
KERNEL_OPTIONS = {"cache": True, "_nrt": False, "nogil": True, "forceinline": False,
                  "no_cfunc_wrapper": True}
compiled_kernel = njit(**KERNEL_OPTIONS)


def inner_kernel(function):
    """A `compiled_kernel` that kernels call (the recursions' passes over the model's and
    the workspace's views, mv and D), without numba's Python entry, which unboxed every
    array of both; called from Python, it runs its twin as a helper does
    (`inlined_kernel`)."""
    options = {**KERNEL_OPTIONS, "no_cpython_wrapper": True}
    return _python_calls_to_twin(njit(**options)(function))

#: Helpers inlined into their callers: a call of a compiled function passes every array
#: of its argument list member by member, hundreds of words for the recursions (the
#: model views and a dozen fields), which cost a hot path a fifth of its time. Short
#: helpers are always inlined (`inlined_kernel`) by LLVM (`forceinline`: each is compiled
#: once per argument types and marked alwaysinline), not by numba at its IR level
#: (`inline="always"`), which types and lowers the helper's body again at every call
#: site, nested helpers within it included: that was most of the core's compile time
#: (409 s of CPU for every kernel on the project's machine, 133 s with LLVM inlining the
#: helpers), for the same machine code once LLVM has inlined it. A helper is compiled
#: without numba's Python entry ("no_cpython_wrapper": the code that unboxes each
#: argument, every array of the model's and the workspace's views for most helpers, 3.7 s
#: of the 22 s of CPU of a small arm's first free fall): `inlined_kernel`.
INLINE_OPTIONS = {"cache": True, "_nrt": False, "forceinline": True,
                  "no_cfunc_wrapper": True, "no_cpython_wrapper": True}
#: A helper's twin for calls from Python (`inlined_kernel`): the helper as a kernel.
PYTHON_ENTRY_OPTIONS = {"cache": True, "_nrt": False, "no_cfunc_wrapper": True}


def inlined_kernel(function):
    """`function` as a helper inlined by LLVM into the kernels that call it
    (INLINE_OPTIONS), without a Python entry. Called from Python (a few helpers are:
    the stops' forces, quaternions, the road), it runs its twin `<name>_py`
    (PYTHON_ENTRY_OPTIONS; compiled or loaded at the first such call): numba's table of
    Python entries of the helper stays empty, so every call from Python goes to
    `_compile_for_args`, which hands numba the twin to call instead."""
    return _python_calls_to_twin(njit(**INLINE_OPTIONS)(function))


def _python_calls_to_twin(kernel):
    kernel._insert = _no_python_entry
    kernel._compile_for_args = _PythonEntry(kernel)
    return kernel


def _no_python_entry(*args, **kwargs) -> None:
    """A helper's compiled code is not entered from Python (it has no entry)."""


class _PythonEntry:
    """numba's `_compile_for_args` of a helper: its twin with a Python entry, which
    numba's dispatcher then calls with the arguments (it calls what this returns)."""

    def __init__(self, kernel) -> None:
        self.kernel = kernel
        self.twin = None

    def __call__(self, *args, **kwargs):
        if self.twin is None:
            self.twin = njit(**PYTHON_ENTRY_OPTIONS)(_renamed(self.kernel.py_func, "py"))
        return self.twin

#: Inlined by numba at its IR level: the recursions' `inline_twin`s that only the hot
#: paths call (inlining them everywhere would double the compile time of the core), the
#: integrator's right-hand side (`core.kernels.rhs.accelerations`; inlined by LLVM, a
#: PUMA's evaluation took 10 % longer), and a helper that returns a view it cut from a
#: buffer (compiled without reference counting, a function may return only an array it
#: was passed). Their bodies call the helpers, which LLVM inlines. numba copies what it
#: inlines in a way that grew with the square of its size: `core.kernels.inliner`.
IR_INLINE_OPTIONS = {"cache": True, "_nrt": False, "inline": "always",
                     "no_cfunc_wrapper": True}
ir_inlined_kernel = njit(**IR_INLINE_OPTIONS)


def inline_twin(kernel, *, llvm: bool = False):
    """`kernel`'s function again, inlined by numba where it is called (IR_INLINE_OPTIONS),
    or with `llvm` by LLVM (INLINE_OPTIONS: compiled once, its machine code inlined:
    for a large body inlined into kernels that are themselves inlined in several places,
    numba's IR inlining would type and lower it again at every one of them).

    A copy of the function named `<name>_inline` (`<name>_llvm`): numba's on-disk cache names its files
    after the function, not after the options it was compiled with, so a twin of the
    same function compiled by itself (inlined by LLVM, say) would load the kernel's
    compiled code (not inlined), or give the kernel its own."""
    if llvm:
        return inlined_kernel(_renamed(kernel.py_func, "llvm"))
    return njit(**IR_INLINE_OPTIONS)(_renamed(kernel.py_func, "inline"))


def _renamed(function, suffix: str):
    """A copy of `function` named `<name>_<suffix>` (numba's cache files are named after
    the function)."""
    twin = pytypes.FunctionType(function.__code__, function.__globals__,
                                f"{function.__name__}_{suffix}", function.__defaults__,
                                function.__closure__)
    twin.__qualname__ = f"{function.__qualname__}_{suffix}"
    twin.__module__, twin.__doc__ = function.__module__, function.__doc__
    return twin

_compiling = threading.Lock()


def closed_kernel(function):
    """A kernel for one state (about a microsecond), closed to argument types it has not
    been compiled for (see the module docstring): call it through `compile_and_call`
    where the types may be new. It keeps the GIL: releasing and taking it back would
    cost more than the other threads gain."""
    kernel = njit(**{**KERNEL_OPTIONS, "nogil": False})(function)
    # (numba's disable_compile() insists on a compiled signature; this is what it sets)
    kernel._can_compile = False
    # numba's refusal of other types runs two Python callbacks of its dispatcher: one
    # looks for conversions to install (typing every argument: none exists between the
    # array types these kernels take), one types the arguments again for its message.
    # ~80 us of CPU for a (T, n) batch, so callers tested the shape first (~30 ns a
    # call); refused at once instead (~1 us), the `try:` alone is the fast path's test.
    kernel._search_new_conversions = _no_conversion
    kernel._explain_matching_error = _refuse
    return kernel


def _no_conversion(*args) -> bool:
    """A closed kernel's search for conversions of new argument types: none."""
    return False


def _refuse(*args):
    """A closed kernel's refusal of argument types it was not compiled for."""
    raise TypeError("a closed kernel refuses argument types it was not compiled for")


def compile_and_call(kernel, *args):
    """kernel(*args) for a `closed_kernel`, compiling (or loading from numba's cache) the
    types of args first if they are new to it."""
    with _compiling:
        kernel._can_compile = True
        try:
            return kernel(*args)
        finally:
            kernel._can_compile = False


@intrinsic
def view(typingctx, buffer, offset, shape):
    """The C-ordered array of `shape` (a tuple of ints) over buffer[offset:] (a 1-D
    contiguous array): no copy, no reference, no bounds check against the buffer."""
    ndim = len(shape)
    result = types.Array(buffer.dtype, ndim, "C")

    def codegen(context, builder, signature, args):
        source = context.make_array(signature.args[0])(context, builder, args[0])
        data = builder.gep(source.data, [args[1]])
        dims = [context.cast(builder, value, typ, types.intp) for value, typ in
                zip(cgutils.unpack_tuple(builder, args[2]), signature.args[2])]
        itemsize = context.get_constant(
            types.intp, context.get_abi_sizeof(context.get_data_type(buffer.dtype)))
        strides = [itemsize] * ndim
        for i in range(ndim - 2, -1, -1):
            strides[i] = builder.mul(strides[i + 1], dims[i + 1])
        out = context.make_array(result)(context, builder)
        populate_array(out, data=data, shape=dims, strides=strides, itemsize=itemsize,
                       meminfo=None)
        return out._getvalue()

    return result(buffer, offset, shape), codegen


@intrinsic
def address_of(typingctx, buffer, offset):
    """A raw pointer to buffer[offset] (a 1-D contiguous array), for C callbacks
    (`core.kernels.torque`)."""
    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.gep(array.data, [args[1]])

    return types.CPointer(buffer.dtype)(buffer, offset), codegen


#: A transparent huge page (Linux, x86-64 and arm64), bytes.
HUGE_PAGE = 1 << 21
#: From this size on, malloc (glibc's largest mmap threshold) gives every block a fresh
#: mapping from the system; smaller ones it recycles from its heap once one was freed.
FRESH_MAPPING_MIN = 1 << 25


def zeroed_result(shape: tuple[int, ...]) -> np.ndarray:
    """np.zeros(shape) (float64, C order) for a kernel to fill, a large one starting on a
    huge-page boundary.

    A block of FRESH_MAPPING_MIN or more is a fresh mapping on every call, its memory
    zeroed by the system page by page at the first write. numpy asks for transparent
    huge pages on it (madvise), but a huge page backs only a whole aligned 2 MiB
    stretch, and the mapping starts anywhere: the stretches before the first boundary
    and after the last came as 4 KiB pages, 5.4 MB of the 37 MB of the PUMA's
    regressor of 10,000 samples, 1,380 faults of 1.5 us here (2 of its 7 ms). So a large
    result is cut from a buffer up to 4 MiB larger (its tail rounded up to a whole huge
    page), from its first 2 MiB boundary: a view, C-contiguous; the untouched rest of
    the buffer is never given memory. A smaller one is np.zeros: malloc recycles it
    (cut the same way it was 8 % slower, the larger buffer being zeroed by memset).
    """
    nbytes = int(np.prod(shape, dtype=np.int64)) * 8
    if nbytes < FRESH_MAPPING_MIN:
        return np.zeros(shape)
    raw = np.zeros(-(-nbytes // HUGE_PAGE) * HUGE_PAGE + HUGE_PAGE, dtype=np.uint8)
    start = -raw.ctypes.data % HUGE_PAGE
    return raw[start:start + nbytes].view(np.float64).reshape(shape)
