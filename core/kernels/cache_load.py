"""numba's disk cache, a kernel loaded without parsing the LLVM module kept for linking it.

numba caches a compiled function as its machine code and, beside it, the LLVM bitcode of
its module, for another function compiled later that calls it (numba links the callee's
module into the caller's). On loading, numba parses that bitcode at once, only to read
the names of the functions and globals it defines (`JitEngine._load_defined_symbols`):
the engine answers "is this symbol defined" from that set. The kernels inline their
helpers, so each module holds its kernel's whole body: parsing them was three quarters
of a warm start's kernel loading (0.35 + 0.13 of 0.59 s in cProfile, for every kernel
of `core.warm_up`).

Here the cache entry also holds those names, and the bitcode is parsed when a caller
compiled later links the library (`_get_module_for_linking`), which a warm start never
does. What is loaded and run is unchanged: the same machine code, the same symbols.
An entry written without the names (by numba's own code) is loaded as numba loads it.
`install()` runs when `core.kernels.buffers` is imported, before any kernel compiles
or loads; the cache's folder is named after the core's sources (`core.kernels.cache`),
so entries of either form are never mixed up with another version's.
"""
from __future__ import annotations

from llvmlite import binding as ll
from numba.core import codegen

_library = codegen.CPUCodeLibrary
_numba_serialize = _library.serialize_using_object_code
_numba_unserialize = _library._unserialize.__func__
_numba_module_for_linking = _library._get_module_for_linking


def defined_symbols(module: ll.ModuleRef) -> frozenset[str]:
    """The names of the functions and global variables `module` defines (not those it
    only declares): what numba's engine records of a module it loads."""
    return frozenset(value.name for values in (module.functions, module.global_variables)
                     for value in values if not value.is_declaration)


def _serialize_using_object_code(self) -> tuple:
    """numba's cache entry (name, "object", (machine code, bitcode)), with the names the
    bitcode defines as a third item of the data."""
    name, kind, (object_code, bitcode) = _numba_serialize(self)
    return name, kind, (object_code, bitcode, defined_symbols(self._get_module_for_linking()))


def _unserialize(cls, target, state: tuple):
    """A library from a cache entry: its machine code loaded, its defined names recorded,
    its bitcode kept unparsed until a caller links it."""
    name, kind, data = state
    if kind != "object" or len(data) != 3:
        return _numba_unserialize(cls, target, state)
    object_code, bitcode, symbols = data
    self = target.create_library(name)
    self.enable_object_caching()
    self._set_compiled_object(object_code)
    self._linking_bitcode = bitcode
    self._finalize_final_module()
    target._engine._defined_symbols.update(symbols)
    return self


def _get_module_for_linking(self) -> ll.ModuleRef:
    """numba's module for linking, parsed from the cache entry's bitcode on first need."""
    bitcode = getattr(self, "_linking_bitcode", None)
    if bitcode is not None and self._shared_module is None:
        self._shared_module = ll.parse_bitcode(bitcode)
        self._linking_bitcode = None
    return _numba_module_for_linking(self)


def install() -> None:
    """Make numba's CPU code libraries cache and load as described above (idempotent)."""
    _library.serialize_using_object_code = _serialize_using_object_code
    _library._unserialize = classmethod(_unserialize)
    _library._get_module_for_linking = _get_module_for_linking


def installed() -> bool:
    """Whether numba's code libraries use this module's loading."""
    return _library._get_module_for_linking is _get_module_for_linking
