"""numba's IR inliner (`inline="always"`: `core.kernels.buffers.ir_inlined_kernel` and the
recursions' inline twins) without two costs of its own; what it inlines is unchanged.

numba's InlineWorker (numba/core/inline_closurecall.py, numba 0.59 to 0.69) inlines a
call by running the untyped half of the compiler over the callee's function, then
copying the callee's IR twice (one copy is inlined, one kept). With the recursions and
the integrator's right-hand side inlined into the hot kernels, that was a third of a
fresh compile (cProfile of a PUMA's first free fall: 84 of 261 s):

- The copy (`copy_ir` in `InlineWorker.inline_ir`) deep-copies block by block, each
  with a memo of its own, so every block copies the function's whole scope, every
  variable of the function with it: blocks x variables. Here the blocks of one copy
  share one copy of their scope, as the blocks of the IR copied share theirs (the
  inliner requires one scope, `_get_all_scopes`, and then moves the blocks into the
  caller's). The blocks are copied as before.
- The untyped passes ran again at every call site of the same function, and at every
  call site of what that function inlines in turn. Their result depends on the function
  (and the compiler's flags) alone, and `inline_ir` copies it before changing
  anything, so it is computed once per function and flags.

Measured on a fresh cache (CPU of a PUMA's first free fall, the machine shared):
86-88 s as numba does it, 65 s with the copy alone, 60 s with both.
`install()` runs when `core.kernels.buffers` is imported, before any kernel compiles.
"""
from __future__ import annotations

import copy
import threading

from numba.core import inline_closurecall, ir

_state = threading.local()


class _SharedScopeCopy:
    """`copy` as numba's inliner module sees it: inside `InlineWorker.inline_ir`, the deep
    copy of a block starts from the one copy of its scope made for that call."""

    def __getattr__(self, name):
        return getattr(copy, name)

    @staticmethod
    def deepcopy(x, memo=None):
        scopes = getattr(_state, "scopes", None)
        if memo is None and scopes is not None and isinstance(x, ir.Block):
            scope = x.scope
            held = scopes.get(id(scope))
            if held is None:  # (the original is held too: its id stays its own)
                held = scopes[id(scope)] = (scope, copy.deepcopy(scope))
            memo = {id(scope): held[1]}
        return copy.deepcopy(x, memo)


_numba_inline_ir = inline_closurecall.InlineWorker.inline_ir
_untyped_ir: dict[tuple, ir.FunctionIR] = {}


def _inline_ir(self, *args, **kwargs):
    """numba's inline_ir, its blocks copied with one copy of their scope per scope."""
    outer = getattr(_state, "scopes", None)
    _state.scopes = {}
    try:
        return _numba_inline_ir(self, *args, **kwargs)
    finally:
        _state.scopes = outer


def _inline_function(self, caller_ir, block, i, function, arg_typs=None):
    """numba's inline_function, the untyped passes over `function` run once per flags."""
    self.flags.enable_ssa = False  # as run_untyped_passes sets it on the caller's flags
    key = (function, self.typingctx, self.targetctx, str(self.flags.values()))
    callee_ir = _untyped_ir.get(key)
    if callee_ir is None:
        callee_ir = _untyped_ir[key] = self.run_untyped_passes(function)
    return self.inline_ir(caller_ir, block, i, callee_ir, function.__code__.co_freevars,
                          arg_typs=arg_typs)


def install() -> None:
    """Put both changes into numba's inliner (once; later calls do nothing)."""
    worker = inline_closurecall.InlineWorker
    if worker.inline_ir is _inline_ir:
        return
    inline_closurecall.copy = _SharedScopeCopy()
    worker.inline_ir = _inline_ir
    worker.inline_function = _inline_function
