"""The compiled kernels keep the properties their speed rests on (core.kernels.buffers)."""
from __future__ import annotations

import importlib
import pkgutil
import inspect
import re
from pathlib import Path

import numpy as np
import pytest
from numba import njit
from numba.core.registry import CPUDispatcher

from armdyn.core import forward_dynamics, inverse_dynamics, load_mechanism, load_robot
from armdyn.core.kernels.buffers import KERNEL_OPTIONS
from armdyn.core.kernels.loops import closure_residual

ROBOTS = Path(__file__).resolve().parents[1] / "robots"


def _core_modules():
    import armdyn.core
    return [importlib.import_module(info.name)
            for info in pkgutil.walk_packages(armdyn.core.__path__, "armdyn.core.")]


def test_every_kernel_is_compiled_without_reference_counting():
    """Each numba dispatcher of the core is a compiled_kernel (no reference counting, no
    global lock; a closed single-state kernel keeps the lock), or a helper inlined into
    one; and every one lives in core/kernels/, the compiled layer."""
    seen = 0
    for module in _core_modules():
        for attr, value in inspect.getmembers(module, lambda v: isinstance(v, CPUDispatcher)):
            if value.py_func.__module__ != module.__name__:
                continue
            seen += 1
            where = f"{module.__name__}.{attr}"
            assert module.__name__.startswith("armdyn.core.kernels."), where
            options = value.targetoptions
            assert (options.get("_nrt") is False
                    and (options.get("nogil") is True or value._can_compile is False)
                    or options.get("forceinline") is True
                    or options.get("inline") == "always"), where
    assert seen > 40


def _calls_reference_counting(dispatcher, *args) -> bool:
    dispatcher(*args)
    ir = dispatcher.inspect_llvm(dispatcher.signatures[0])
    body = ir.split("cpython.")[0]  # the function, not numba's Python wrapper
    assert "define" in body
    return "NRT_incref" in body or "NRT_decref" in body


def test_numba_honours_compiling_without_reference_counting():
    """The option compiled_kernel rests on is a private one of numba's: check that this
    numba still drops the counter calls with it (and makes them without it)."""
    mech = load_mechanism(ROBOTS / "fourbar.toml")
    k = mech.kernel
    from armdyn.core.kernels.layout import model_views
    from armdyn.core.kernels.data import data_views, new_workspace

    def residual(F, I, ws, q):
        mv = model_views(F, I)
        D = data_views(mv, ws)
        closure_residual(mv, D, q, D.Phi)

    options = {key: value for key, value in KERNEL_OPTIONS.items() if key != "cache"}
    args = (k.F, k.I, new_workspace(k), mech.q_home)
    assert not _calls_reference_counting(njit(**options)(residual), *args)
    assert _calls_reference_counting(njit(residual), *args)


def test_llvm_inlines_the_helpers_and_the_twins():
    """The helpers (`inlined_kernel`) are compiled once and inlined by LLVM, not by numba
    at its IR level, and the recursions' inline twins are inlined by numba: the speed
    of the hot paths rests on both, so a kernel over them calls none of them but the
    compiled kernel it calls itself (the twists' recursion calls A_times and
    add_P_times, which calls add_p_times)."""
    from armdyn.core.kernels import denoc
    from armdyn.core.kernels.data import data_views, new_workspace
    from armdyn.core.kernels.layout import model_views

    def hot_path(F, I, ws, q, qd):
        mv = model_views(F, I)
        D = data_views(mv, ws)
        denoc.link_quantities(mv, D, q)  # compiled first: a call
        denoc.link_quantities_inline(mv, D, q)
        denoc.twists(mv, D, qd)

    robot = load_robot(ROBOTS / "puma560_saha.toml")
    k = robot.kernel
    options = {key: value for key, value in KERNEL_OPTIONS.items() if key != "cache"}
    kernel = njit(**options)(hot_path)
    kernel(k.F, k.I, new_workspace(k), robot.q_home, np.ones(6))
    ir = kernel.inspect_llvm(kernel.signatures[0])
    body = re.search(r"define [^\n]*hot_path[^\n]*\n(.*?)\n}\n", ir, re.S).group(1)
    called = re.findall(r"call [^@\n]*@\"?([\w.$]+)", body)
    inlined = {value.py_func.__name__ for module in _core_modules()
               for _, value in inspect.getmembers(module, lambda v: isinstance(v, CPUDispatcher))
               if value.targetoptions.get("forceinline")
               or value.targetoptions.get("inline") == "always"}
    assert {"twists", "A_times", "add_P_times", "add_p_times",
            "link_quantities_inline"} <= inlined
    assert not [name for name in called for h in inlined if f"{len(h)}{h}" in name], called
    assert len([name for name in called if "15link_quantities" in name]) == 1, called


def test_single_calls_agree_with_the_checked_batch_path():
    robot = load_robot(ROBOTS / "puma560_saha.toml")
    rng = np.random.default_rng(1)
    Q, Qd, X = (rng.normal(size=(5, 6)) for _ in range(3))
    tau = inverse_dynamics(robot, Q, Qd, X)
    qdd = forward_dynamics(robot, Q, Qd, X)
    for s in range(5):
        assert np.array_equal(inverse_dynamics(robot, Q[s], Qd[s], X[s]), tau[s])
        assert np.array_equal(forward_dynamics(robot, Q[s], Qd[s], X[s]), qdd[s])


@pytest.mark.parametrize("bad", [np.zeros(5), np.zeros(7), np.array([0.0, 1, 2, 3, 4, np.nan])])
def test_the_fast_path_checks_what_the_kernel_receives(bad):
    robot = load_robot(ROBOTS / "puma560_saha.toml")
    z = np.zeros(6)
    with pytest.raises(ValueError, match="q"):
        inverse_dynamics(robot, bad, z, z)
    if len(bad) != 6:
        with pytest.raises(ValueError, match="tau"):
            forward_dynamics(robot, z, z, bad)


def test_numba_imported_first_still_uses_this_versions_cache(tmp_path):
    """numba's default cache (beside each source file) checks only the timestamp of a
    kernel's own file: a kernel compiled against an older workspace layout would load.
    core points numba at its per-version folder even when numba was imported first."""
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", "import numba\nimport armdyn.core\nfrom numba.core import config\n"
         "print(config.CACHE_DIR)"],
        cwd=Path(__file__).resolve().parents[1], env=env, capture_output=True, text=True,
        check=True).stdout.strip()
    assert out.startswith(str(tmp_path / "armdyn" / "numba-")), out


def test_a_batch_is_refused_by_the_one_state_kernels_at_once():
    """The common call offers its arguments to a one-state kernel untested (a test of q in
    Python costs the call a few percent), so a (T, n) batch is offered too: refused at
    once, then computed by the batch path with the same result row by row. numba's own
    refusal typed every argument twice for its search and its message: ~80 us of CPU a
    call (0.3 ms of wall time at a load of 6), as much as a 100-sample run's inverse
    dynamics."""
    import time

    from armdyn.core.kernels.data import thread_workspace
    from armdyn.core.kernels.dynamics import inverse_dynamics_state_kernel

    robot = load_robot(ROBOTS / "puma560_saha.toml")
    Q, Qd, X = np.random.default_rng(4).normal(size=(3, 5, 6))
    tau = inverse_dynamics(robot, Q, Qd, X)
    qdd = forward_dynamics(robot, Q, Qd, X)
    for s in range(Q.shape[0]):  # the one-state path, a row at a time
        np.testing.assert_allclose(tau[s], inverse_dynamics(robot, Q[s], Qd[s], X[s]),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(qdd[s], forward_dynamics(robot, Q[s], Qd[s], X[s]),
                                   rtol=1e-12, atol=1e-12)
    k = robot.kernel
    ws, out = thread_workspace(k), np.empty(6)

    def refusals() -> None:
        for _ in range(10):
            with pytest.raises(TypeError):
                inverse_dynamics_state_kernel(k.F, k.I, ws, Q, Qd, X, out)

    best = np.inf
    for _ in range(20):  # CPU time, the best of 20: the machine's load does not count
        t0 = time.thread_time()
        refusals()
        best = min(best, (time.thread_time() - t0) / 10)
    assert best < 30e-6, f"a refusal took {best * 1e6:.1f} us"


def test_a_large_result_starts_on_a_huge_page_and_is_zero():
    """zeroed_result: np.zeros(shape) C-ordered, cut from its buffer's first 2 MiB
    boundary when malloc would map it afresh (32 MiB and more), else np.zeros itself."""
    from armdyn.core.kernels.buffers import FRESH_MAPPING_MIN, HUGE_PAGE, zeroed_result
    for shape in ((10_000, 6, 78), (FRESH_MAPPING_MIN // 8,), (4096, 6, 78), (3, 5),
                  (0, 6, 78)):
        y = zeroed_result(shape)
        assert y.shape == shape and y.dtype == np.float64 and y.flags.c_contiguous
        assert y.flags.writeable and not y.any()
        large = y.nbytes >= FRESH_MAPPING_MIN
        assert y.flags.owndata != large
        if large:  # from a boundary, and its last huge page whole inside the buffer
            assert y.ctypes.data % HUGE_PAGE == 0
            end = y.ctypes.data + -(-y.nbytes // HUGE_PAGE) * HUGE_PAGE
            assert end <= y.base.ctypes.data + y.base.nbytes


def _three_ways(x, n):
    """A few blocks and variables to inline: a loop, a branch, an early return."""
    s = 0.0
    for i in range(n):
        if x[i] > 0.0:
            s += x[i] * x[i]
        else:
            s -= x[i]
    if s > 100.0:
        return -1.0
    return s


def test_numba_inliner_copies_a_scope_once_and_the_blocks_as_before():
    """core.kernels.inliner: inside numba's inline_ir, the blocks of the callee's IR are
    copied with one copy of their scope (numba made one per block): the copies equal
    numba's own, share one scope that is not the original's, and renaming a variable in
    the copy leaves the original alone."""
    import copy
    from numba.core import inline_closurecall
    from numba.core.compiler import run_frontend
    from armdyn.core.kernels import inliner

    assert inline_closurecall.InlineWorker.inline_ir.__module__ == inliner.__name__
    func_ir = run_frontend(_three_ways)
    assert len(func_ir.blocks) >= 5
    seen = {}

    def copy_ir(worker, caller_ir, block, i, callee_ir, *args, **kwargs):
        # what numba's copy_ir does, inside the installed inline_ir
        seen["blocks"] = {label: inline_closurecall.copy.deepcopy(b)
                          for label, b in callee_ir.blocks.items()}

    original = inliner._numba_inline_ir
    inliner._numba_inline_ir = copy_ir
    try:
        inline_closurecall.InlineWorker().inline_ir(None, None, 0, func_ir, ())
    finally:
        inliner._numba_inline_ir = original
    blocks = seen["blocks"]
    numba_copies = {label: copy.deepcopy(b) for label, b in func_ir.blocks.items()}
    assert blocks == numba_copies
    scopes = {id(b.scope) for b in blocks.values()}
    assert len(scopes) == 1 and id(func_ir.blocks[0].scope) not in scopes
    names = set(func_ir.blocks[0].scope.localvars._con)
    next(iter(blocks.values())).scope.redefine("s", loc=func_ir.loc)
    assert set(func_ir.blocks[0].scope.localvars._con) == names


def test_a_function_inlined_at_two_sites_computes_as_called():
    """The untyped IR numba's inliner keeps per function (core.kernels.inliner) serves two
    call sites in one kernel and kernels compiled after: each inlined copy is its own."""
    from armdyn.core.kernels import inliner
    from armdyn.core.kernels.buffers import IR_INLINE_OPTIONS

    options = {key: value for key, value in IR_INLINE_OPTIONS.items() if key != "cache"}
    inlined = njit(**options)(_three_ways)

    def two_sites(x, y):
        return inlined(x, x.shape[0]) + 10.0 * inlined(y, 2)

    def one_site(x):
        return inlined(x, 3)

    x, y = np.array([1.0, -2.0, 3.0]), np.array([-4.0, 0.5, 17.0])  # y: s > 100 at 3
    plain = {key: value for key, value in options.items() if key != "inline"}
    assert njit(**plain)(two_sites)(x, y) == _three_ways(x, 3) + 10.0 * _three_ways(y, 2)
    assert njit(**plain)(one_site)(y) == _three_ways(y, 3) == -1.0
    assert njit(**plain)(one_site)(x) == _three_ways(x, 3) != -1.0
    assert [key for key in inliner._untyped_ir if key[0] is _three_ways] != []


def test_a_model_without_loops_compiles_none_of_their_code():
    """`loops_of` a tree is None, and the integrator's kernels then compile the closed
    chains' forward dynamics and projection out (numba prunes a branch on an argument
    typed None): none of their code is in the machine code; a four-bar's run keeps it."""
    from armdyn.core.kernels.constrained import (closed_forward_dynamics, loops_of,
                                                 project_if_loops)
    from armdyn.core.kernels.data import new_workspace
    from armdyn.core.kernels.layout import model_views

    robot, mech = load_robot(ROBOTS / "puma560_saha.toml"), load_mechanism(ROBOTS / "fourbar.toml")
    assert loops_of(robot.kernel.m) is None and loops_of(mech.kernel.m) is True

    def step(F, I, ws, q, qd, tau, f_ext, qdd, loops):
        mv = model_views(F, I)
        return (closed_forward_dynamics(loops, mv, ws, q, qd, tau, f_ext, qdd),
                project_if_loops(loops, mv, ws, q, qd, 1e-9))

    options = {key: value for key, value in KERNEL_OPTIONS.items() if key != "cache"}
    kernel = njit(**options)(step)
    k, n = robot.kernel, robot.kernel.n
    assert kernel(k.F, k.I, new_workspace(k), robot.q_home, np.zeros(n), np.zeros(n),
                  np.zeros((n, 6)), np.zeros(n), None) == (-1, False)
    ir = kernel.inspect_llvm(kernel.signatures[0])
    assert "closed_forward_dynamics" in ir  # (the helpers are there, inlined)
    assert "constrained_forward_dynamics" not in ir and "project_onto_loops" not in ir


_CACHED_PAIR = '''
from numba import njit

@njit(cache=True)
def double(x):
    return 2.0 * x

@njit(cache=True)
def double_plus_one(x):
    return double(x) + 1.0
'''

_LOAD_THEN_LINK = '''
import sys
import armdyn.core.kernels.buffers  # installs core.kernels.cache_load
from armdyn.core.kernels import cache_load
import pair
assert cache_load.installed()
print(pair.double(3.0))
library = pair.double.overloads[pair.double.signatures[0]].library
print(library._shared_module is None, getattr(library, "_linking_bitcode", None) is not None)
if sys.argv[1] == "link":
    print(pair.double_plus_one(3.0))  # compiled now: links the library loaded from the cache
    print(library._shared_module is not None)
'''


def test_numba_cache_loads_a_kernel_without_parsing_its_module_for_linking(tmp_path):
    """core.kernels.cache_load: a kernel compiled in one process loads in another with its
    machine code and its defined symbols, its bitcode unparsed; a caller compiled later
    links it (the bitcode parsed then) and computes as called."""
    import os
    import subprocess
    import sys
    (tmp_path / "pair.py").write_text(_CACHED_PAIR)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))

    def run(mode: str) -> list[str]:
        return subprocess.run([sys.executable, "-c", _LOAD_THEN_LINK, mode], cwd=tmp_path,
                              env=env, capture_output=True, text=True,
                              check=True).stdout.split()

    assert run("load") == ["6.0", "False", "False"]  # compiled here: nothing to defer
    assert run("link") == ["6.0", "True", "True", "7.0", "True"]  # loaded, then linked
    assert run("load") == ["6.0", "True", "True"]  # both from the cache


def test_numba_cache_entry_keeps_numbas_code_and_the_symbols_numba_would_read():
    """The entry core.kernels.cache_load writes is numba's (machine code, bitcode) and the
    names numba's engine reads from that bitcode when it loads it."""
    from llvmlite import binding as ll
    from numba.core import codegen

    from armdyn.core.kernels import cache_load

    @njit(cache=False)
    def square_sum(x):
        return (x * x).sum()

    square_sum(np.ones(3))
    library = square_sum.overloads[square_sum.signatures[0]].library
    name, kind, (code, bitcode, symbols) = library.serialize_using_object_code()
    assert (name, kind) == (library.name, "object")
    assert (code, bitcode) == cache_load._numba_serialize(library)[2]

    class Engine:  # numba's own reading of the names, on the parsed bitcode
        _defined_symbols: set = set()
    codegen.JitEngine._load_defined_symbols(Engine, ll.parse_bitcode(bitcode))
    assert symbols == Engine._defined_symbols and len(symbols) >= 2


def test_compiler_flags_list_the_values_numba_lists():
    """core.kernels.flags: numba's TargetConfig.values() made in one step gives numba's
    own dict (keys in order, values, so hashes and equality) for every kind of flags
    numba has, unset, set, set to a default, copied, and copied from another kind."""
    from numba.core import targetconfig
    from numba.core.compiler import Flags
    from armdyn.core.kernels import flags

    assert targetconfig.TargetConfig.values is flags.values

    def kinds(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from kinds(sub)

    def same(config):
        ours, numbas = config.values(), flags._numba_values(config)
        assert list(ours.items()) == list(numbas.items())

    all_kinds = list(kinds(targetconfig.TargetConfig))
    assert Flags in all_kinds
    for kind in all_kinds:
        same(kind())
    f = Flags()
    f.nrt, f.forceinline, f.fastmath = False, True, True
    f.inline = "always"
    same(f)
    g = Flags(f)
    same(g)
    assert g == f and hash(g) == hash(f) and g != Flags()
    d = Flags()
    d.nrt = Flags.options["nrt"].default  # set to its default: equal to unset
    same(d)
    assert d == Flags() and hash(d) == hash(Flags())
    other = next((k for k in all_kinds if set(k.options) - set(Flags.options)), None)
    if other is not None:  # a copy from another kind holds options Flags has not
        source = other()
        for name in set(other.options) - set(Flags.options):
            setattr(source, name, other.options[name].default)
        same(Flags(source))


def test_a_helper_has_no_python_entry_and_python_calls_its_twin():
    """A helper (`inlined_kernel`) is compiled without numba's Python entry (its
    unboxing of every argument was a sixth of a fresh compile); a kernel still inlines
    it, and a call from Python runs its twin `<name>_py`, compiling nothing of it."""
    from armdyn.core.kernels.buffers import inlined_kernel

    helper = inlined_kernel(_three_ways)

    def twice(x, n):
        return 2.0 * helper(x, n)

    options = {key: value for key, value in KERNEL_OPTIONS.items() if key != "cache"}
    kernel = njit(**options)(twice)
    x = np.array([1.0, -2.0, 3.0])
    expected = _three_ways(x, 3)  # the Python function itself
    assert kernel(x, 3) == 2.0 * expected
    (compiled,) = helper.overloads.values()
    assert compiled.library.get_pointer_to_function(
        compiled.fndesc.llvm_cpython_wrapper_name) == 0  # no Python entry
    assert helper(x, 3) == expected and helper(x, 2) == _three_ways(x, 2)
    assert helper._compile_for_args.twin.py_func.__name__ == "_three_ways_py"
    assert len(helper.overloads) == 1


_BLAS_LATER = '''
import sys
import numpy as np
from numba import njit
import armdyn.core.warmup as warmup
warmup.load_compiler()
warmup.warm_up_display()
print("scipy.linalg" in sys.modules)

@njit(cache=False)
def product(a, b):
    return np.dot(a, b)

a, b = np.arange(12.0).reshape(3, 4), np.arange(4.0)
print(np.array_equal(product(a, b), a @ b), "scipy.linalg" in sys.modules)
'''


def test_a_start_loads_kernels_without_scipy_linalg_and_blas_still_compiles():
    """core.kernels.blas_check: numba's registries and the window's kernels load without
    importing scipy.linalg (0.26 s of every start); a function calling BLAS still compiles
    (numba's own check imports scipy's BLAS then) and computes as numpy does."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", _BLAS_LATER], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True", "True"]
