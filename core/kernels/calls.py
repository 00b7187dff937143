"""A compiled kernel called through its address: compiled once, linked into no caller.

A numba kernel that calls another compiled kernel links a copy of the callee's code into
its own, and LLVM optimises that copy again in every caller (numba's final module pass
runs over the linked-in callees too). For the integrator's right-hand side
(`core.kernels.dop853.rhs`, the whole forward dynamics inlined) that was most of the
integrator's compile: a copy optimised again in `initial_step`, `dop853_advance` and
its dense-output stages, per build (a tree, a floating body, loops).

Here the caller takes the callee's address as an int64 argument (`address_of_kernel`,
taken in Python from the callee's compiled code for the exact argument types) and
`call_at` calls it with numba's own calling convention: the arguments flattened as any
call between compiled kernels passes them, the callee's errors propagated. The caller's
code holds no address (numba refuses to cache code with one), so every kernel stays in
numba's on-disk cache; the callee is compiled (or loaded) once per argument types.
The call is one indirect call where the linked copy was one direct call (the right-hand
side is too large for LLVM to inline in either).
"""
from __future__ import annotations

from numba import types
from numba._dispatcher import compute_fingerprint
from numba.core import cgutils
from numba.extending import intrinsic

#: What a kernel called through `call_at` returns.
RESULT = types.int64


@intrinsic
def call_at(typingctx, address, arguments):
    """kernel(*arguments) (an int64) for `address` (int64) of a kernel compiled for exactly
    the types of the tuple `arguments` (`address_of_kernel` of the same values)."""
    if not isinstance(address, types.Integer) or not isinstance(arguments, types.BaseTuple):
        return None
    argument_types = tuple(arguments)

    def codegen(context, builder, signature, args):
        function_type = context.call_conv.get_function_type(RESULT, argument_types)
        callee = builder.inttoptr(args[0], function_type.as_pointer())
        values = cgutils.unpack_tuple(builder, args[1], len(argument_types))
        status, result = context.call_conv.call_function(builder, callee, RESULT,
                                                         argument_types, values)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return result

    return RESULT(address, arguments), codegen


#: (kernel, the arguments' type keys) -> the address of its code for their types
_addresses: dict[tuple, int] = {}


def address_of_kernel(kernel, *args) -> int:
    """The address of `kernel`'s (a numba dispatcher) compiled code for the types of
    `args` (compiled, or loaded from numba's cache, if new): for `call_at` with
    arguments of these types. The code lives as long as the kernel. Known types are
    looked up by numba's type fingerprints (~0.1 us an argument, as numba's dispatcher
    does; typing an array in Python takes 5 us, 60 us of a run's set-up)."""
    key = (kernel, *(_type_key(kernel, value) for value in args))
    address = _addresses.get(key)
    if address is None:
        address = _addresses[key] = _compiled_address(kernel, args)
    return address


def _type_key(kernel, value):
    """numba's fingerprint of value's type, or (where it has none) the type."""
    try:
        return compute_fingerprint(value)
    except NotImplementedError:
        return kernel.typeof_pyval(value)


def _compiled_address(kernel, args) -> int:
    signature = tuple(kernel.typeof_pyval(value) for value in args)
    result = kernel.overloads.get(signature)
    if result is None:
        kernel.compile(signature)  # (under numba's compiler lock)
        result = kernel.overloads[signature]
    if result.signature.return_type != RESULT:
        raise TypeError(f"{kernel.py_func.__qualname__} returns "
                        f"{result.signature.return_type}, call_at expects {RESULT}")
    address = result.library.get_pointer_to_function(result.fndesc.llvm_func_name)
    if not address:
        raise RuntimeError(f"no compiled code of {kernel.py_func.__qualname__} for "
                           f"{signature}")
    return address
