"""The ``s2s`` command line: ``s2s dump FILE.py:FUNC`` shows what s2s generates
for a function (``--mode grad|jvp|hvp|ir``; ``--out`` writes the gradient as a
standalone module), ``s2s check FILE.py:FUNC`` compares its derivative with
finite differences (exit status 1 when they disagree), ``s2s rules`` lists the primitives it has rules for and
their modes (``jvp vjp`` or ``nondiff``).  Errors about the user's code or the command line are one line (plus the
quoted source line and a caret when there is one) on stderr, exit status 2,
and no traceback unless ``--debug``.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import os
import re
import sys

import numpy as np

from .. import __version__
from ..errors import S2SError


class CLIError(Exception):
    """A usage error: reported as one line, exit status 2.

    ``located`` errors start with ``file:line:col`` and are printed as they are.
    """

    def __init__(self, message: str, located: bool = False):
        super().__init__(message)
        self.located = located


# --------------------------------------------------------------------------- loading

def _module_name(path: str) -> str:
    """A stable module name for the file at ``path`` (same path -> same name)."""
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    digest = hashlib.sha1(os.path.abspath(path).encode()).hexdigest()[:8]
    return f"_s2s_cli_{stem}_{digest}"


def load_module(path: str):
    """Import the file at ``path`` with its directory on sys.path (sibling imports)."""
    if not os.path.isfile(path):
        raise CLIError(f"{path}: no such file")
    path = os.path.abspath(path)
    name = _module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CLIError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    directory = os.path.dirname(path)
    sys.path.insert(0, directory)
    try:
        # what the file prints while importing goes to stderr: stdout is the dump
        with contextlib.redirect_stdout(sys.stderr):
            spec.loader.exec_module(module)
    except SyntaxError as e:
        sys.modules.pop(name, None)
        where = f"{e.filename or path}:{e.lineno or 0}:{e.offset or 0}"
        text = (e.text or "").rstrip("\n")
        quoted = ""
        if text.strip():
            stripped = text.lstrip()
            caret = max((e.offset or 1) - 1 - (len(text) - len(stripped)), 0)
            quoted = f"\n    {stripped}\n    {' ' * caret}^"
        raise CLIError(f"{where}: syntax error: {e.msg}{quoted}", located=True) from e
    except SystemExit as e:  # sys.exit() at import: the file is a script, not a module
        sys.modules.pop(name, None)
        raise CLIError(f"{path}: importing it called sys.exit({e.code!r}) (s2s imports the "
                       "file to find the function; put the script's own code under "
                       "if __name__ == '__main__':)") from None
    except Exception as e:
        sys.modules.pop(name, None)
        raise CLIError(f"{path}: importing it raised {type(e).__name__}: {e}") from e
    finally:
        try:
            sys.path.remove(directory)
        except ValueError:
            pass
    return module


def resolve_target(target: str):
    """``FILE.py:FUNC`` -> (module, function)."""
    path, sep, func_name = target.rpartition(":")
    if not sep or not path or not func_name:
        raise CLIError(f"expected FILE.py:FUNC, got {target!r}")
    module = load_module(path)
    fn = getattr(module, func_name, None)
    if fn is None:
        raise CLIError(f"{path}: no function named {func_name!r}")
    from ..core.custom import is_custom_function

    if not inspect.isfunction(fn) and not is_custom_function(fn):
        raise CLIError(f"{path}: {func_name!r} is a {type(fn).__name__}, not a Python function")
    return module, fn


# --------------------------------------------------------------------------- arguments

_SCALAR_KINDS = {
    "f64": (np.float64, lambda: 1.0), "f32": (np.float32, lambda: np.float32(1.0)),
    "c128": (np.complex128, lambda: 1.0 + 0.0j), "c64": (np.complex64, lambda: np.complex64(1.0)),
    "i64": (np.int64, lambda: 1), "i32": (np.int32, lambda: np.int32(1)),
    "bool": (np.bool_, lambda: True),
}
_KIND_RE = re.compile(r"^\s*(\w+)\s*(?:\[\s*(:(?:\s*,\s*:)*)\s*\])?\s*$")


def parse_signature(text: str):
    """``'f64, f64[:]'`` -> example values ``[1.0, np.ones(2)]``."""
    values = []
    parts = re.split(r",(?![^\[]*\])", text) if text.strip() else []  # commas outside [...]
    for part in parts:
        m = _KIND_RE.match(part)
        if not m or m.group(1) not in _SCALAR_KINDS:
            known = " ".join(_SCALAR_KINDS)
            raise CLIError(f"bad --signature entry {part.strip()!r}: expected one of {known}, "
                           f"optionally followed by [:], [:, :], ...")
        dtype, scalar = _SCALAR_KINDS[m.group(1)]
        if m.group(2) is None:
            values.append(scalar())
        else:
            ndim = m.group(2).count(":")
            values.append(np.ones((2,) * ndim, dtype=dtype))
    return values


def example_values(fn, module, args_expr, signature):
    """One example value per parameter of ``fn``, in order."""
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    if args_expr is not None:
        namespace = dict(vars(module))
        namespace.setdefault("np", np)
        try:
            value = eval(args_expr, namespace)
        except Exception as e:
            raise CLIError(f"bad --args {args_expr!r}: {type(e).__name__}: {e}") from e
        if len(params) == 1 and not (isinstance(value, tuple) and len(value) == 1):
            given = [value]
        elif isinstance(value, tuple):
            given = list(value)
        else:
            given = [value]
    elif signature is not None:
        given = parse_signature(signature)
    else:
        given = [1.0 for p in params if p.default is p.empty
                 and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    try:
        bound = sig.bind(*given)
    except TypeError as e:
        raise CLIError(f"{len(given)} example argument(s) do not fit "
                       f"{fn.__name__}{sig}: {e}") from e
    bound.apply_defaults()
    return [bound.arguments[p.name] for p in params
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def parse_argnums(text: str):
    try:
        nums = tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise CLIError(f"bad --argnums {text!r}: expected integers such as 0 or 0,1") from None
    if not nums:
        raise CLIError("bad --argnums: expected at least one integer")
    return nums[0] if len(nums) == 1 and "," not in text else nums


# --------------------------------------------------------------------------- commands

def generate(args):
    """The text ``s2s dump`` prints (or writes with --out)."""
    from .. import api
    from ..core import pipeline
    from ..emit.load import standalone_module
    from ..emit.printer import format_ir

    if args.arch is not None:  # refused before any work, whatever the mode
        from ..backend.cuda.target import check_arch
        if args.mode != "ptx":
            raise CLIError(f"--arch chooses the GPU of --mode ptx; it does nothing with "
                           f"--mode {args.mode}")
        try:
            check_arch(args.arch)
        except ValueError as e:
            raise CLIError(str(e)) from e
    module, fn = resolve_target(args.target)
    if args.mode == "ir":
        if args.out:
            raise CLIError("--out writes a gradient module; it needs --mode grad")
        return format_ir(pipeline.front(fn).func)
    if args.mode in ("jvp", "hvp"):
        return _jvp_source(fn, module, args)
    if args.mode in ("llvm", "asm"):  # the LLVM backend's module (s2s.jit)
        from .dump_llvm import llvm_text
        values = example_values(fn, module, args.args, args.signature)
        try:
            return llvm_text(fn, values, parse_argnums(args.argnums) if args.grad else None,
                             args.stage, asm=args.mode == "asm")
        except TypeError as e:  # an argument kind jit does not compile (i32, c64...)
            if not str(e).startswith("jit: "):
                raise
            raise CLIError(f"{e} (--signature: {args.signature})" if args.signature
                           else str(e)) from e
    if args.mode == "ptx":  # s2s.cuda: the elementwise kernel for an NVIDIA GPU
        from .dump_ptx import ptx_text
        try:
            return ptx_text(fn, example_values(fn, module, args.args, args.signature),
                            parse_argnums(args.argnums) if args.grad else None,
                            args.arch or "sm_80")
        except (TypeError, ValueError) as e:
            raise CLIError(str(e)) from e
    if args.mode == "vmap":  # the batched code (s2s/cli/dump_vmap.py)
        from .dump_vmap import vmap_source

        if args.out:
            raise CLIError("--out writes a gradient module; it needs --mode grad")
        try:
            return vmap_source(fn, example_values(fn, module, args.args, args.signature),
                               args.in_axes)
        except ValueError as e:
            raise CLIError(str(e)) from e
    argnums = parse_argnums(args.argnums)
    try:
        transform = api.grad(fn, argnums=argnums, has_aux=args.has_aux)
    except (TypeError, ValueError) as e:
        raise CLIError(str(e)) from e
    values = example_values(fn, module, args.args, args.signature)
    try:
        transform._param_info(values)  # usage errors: e.g. integer-valued wrt arguments
    except TypeError as e:
        raise CLIError(str(e)) from e
    emitted = pipeline.emit(transform.specialised(values))
    if not args.out:
        return emitted.source
    doc = (f"Gradient of `{fn.__name__}` in {os.path.basename(args.target.rpartition(':')[0])} "
           f"(argnums={argnums!r}{', has_aux=True' if args.has_aux else ''}).\n\n"
           f"{_freevar_note(pipeline.front(fn).freevars)}"
           f"Generated by s2s {__version__} (`s2s dump`); imports only numpy, math "
           f"and s2s_runtime.\n")
    try:
        return standalone_module(emitted, doc)
    except ValueError as e:
        raise CLIError(str(e)) from e


def _jvp_source(fn, module, args) -> str:
    """The tangent code: every argument with a float/complex leaf carries a tangent."""
    from ..core.forward import forward_of
    from ..core import pipeline
    from ..ir.kinds import is_inexact_leaf
    from s2s_runtime.tree import tree_leaves

    if args.out:
        raise CLIError("--out writes a gradient module; it needs --mode grad")
    values = example_values(fn, module, args.args, args.signature)
    carries = [any(map(is_inexact_leaf, tree_leaves(v))) for v in values]
    if args.mode == "hvp":  # forward mode over the generated gradient code
        from .. import api

        fn, _ = api.grad(fn, argnums=parse_argnums(args.argnums)).generated(values)
        values = values[:len(carries)]
    transform = forward_of(fn, args.has_aux)
    return pipeline.emit(transform.specialised(values, carries)).source


def _freevar_note(freevars) -> str:
    if not freevars:
        return ""
    names = ", ".join(sorted(freevars))
    return (f"The source function's free variables are keyword-only parameters, "
            f"pass them by name: {names}.\n\n")


def highlight(text: str, color: str, stream) -> str:
    if color == "never" or (color == "auto" and (not stream.isatty() or os.environ.get("NO_COLOR"))):
        return text
    try:
        from pygments import highlight as _hl
        from pygments.formatters import TerminalFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return text
    return _hl(text, PythonLexer(), TerminalFormatter())


def cmd_dump(args) -> int:
    text = generate(args)
    if args.out:
        try:
            with open(args.out, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise CLIError(f"cannot write {args.out}: {e.strerror}") from e
        print(f"wrote {args.out}", file=sys.stderr)
        return 0
    text = text if text.endswith("\n") else text + "\n"
    sys.stdout.write(highlight(text, args.color, sys.stdout))
    return 0


def cmd_check(args) -> int:
    """``s2s check``: the derivative against central differences (and jvp against vjp);
    exit status 0 when they agree, 1 when they do not, 2 on an error."""
    from ..check import check

    module, fn = resolve_target(args.target)
    values = example_values(fn, module, args.args, args.signature)
    argnums = parse_argnums(args.argnums)
    names = [p.name for p in inspect.signature(fn).parameters.values()
             if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    try:
        report = check(fn, values, argnums, args.mode, names=names, rtol=args.rtol,
                       atol=args.atol)
    except (TypeError, ValueError) as e:
        if args.debug:
            raise
        raise CLIError(str(e)) from e
    wrt = ", ".join(names[k] for k in ((argnums,) if isinstance(argnums, int) else argnums))
    what = {"grad": "s2s.grad", "jvp": "s2s.jvp and s2s.vjp",
            "jit": "s2s.jit(s2s.grad)"}[args.mode]
    sys.stdout.write(f"{what} of {fn.__name__} w.r.t. {wrt}\n" + report.table())
    return 0 if report.ok else 1


def cmd_rules(args) -> int:
    """One row per primitive: ``name  jvp+ vjp+ vmap+ jit-  (reasons)``; marks: ``+`` a
    rule, ``0`` a zero derivative, ``i`` the helper's code inlined, ``-`` none (with the
    reason in the record), ``?`` none and no reason (a gap).  ``--missing``: only the
    rows with a gap; ``--summary``: the counts (``s2s/cli/modes.py``)."""
    from . import modes

    fns = modes.inventory()
    if args.summary:
        for k, v in modes.summary(fns).items():
            print(f"{k}: {v}")
        return 0
    rows = []
    for fn in fns:
        if args.missing and all(m.ok for m in modes.modes(fn).values()):
            continue
        rows.append(modes.row(fn))
    sys.stdout.write("".join(r + "\n" for r in rows))
    return 0


# --------------------------------------------------------------------------- main

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="s2s", description="s2s: a source-to-source autodiff compiler for Python.")
    parser.add_argument("--version", action="version", version=f"s2s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    dump = sub.add_parser("dump", help="print the code s2s generates for a function",
                          description="Print the code s2s generates for FUNC in FILE.py.")
    dump.add_argument("target", metavar="FILE.py:FUNC")
    dump.add_argument("--mode", choices=("grad", "jvp", "hvp", "vmap", "ir", "llvm", "asm", "ptx"),
                      default="grad",
                      help="grad: the generated gradient (default); jvp: the forward-mode "
                           "tangent code; hvp: forward mode over the gradient code "
                           "(Hessian-vector products); vmap: the batched code (see --in-axes); "
                           "ir: the function's IR; llvm/asm: "
                           "the LLVM IR / machine code s2s.jit compiles; ptx: the GPU "
                           "kernel s2s.cuda.vectorize launches (--signature: element types; with "
                           "arrays, the s2s.cuda.kernel index form)")
    dump.add_argument("--grad", action="store_true",
                      help="--mode llvm/asm/ptx: compile the gradient (w.r.t. --argnums)")
    dump.add_argument("--arch", help="--mode ptx: the GPU architecture (default sm_80; "
                      "sm_90 for H100/H200)")
    dump.add_argument("--stage", choices=("opt", "unopt"), default="opt",
                      help="--mode llvm: after (default) or before LLVM's optimisations")
    dump.add_argument("--in-axes", help="vmap: which arguments are batched, e.g. 0,None "
                      "(default: all, on axis 0)")
    dump.add_argument("--argnums", default="0", help="differentiate w.r.t. these, e.g. 0,1")
    dump.add_argument("--signature", help="argument kinds, e.g. 'f64, f32[:], c128[:, :], i64'")
    dump.add_argument("--args", help="Python expression for the example arguments (a tuple, "
                      "or one value for a one-parameter function); np and the module's "
                      "globals are in scope")
    dump.add_argument("--has-aux", action="store_true", help="FUNC returns (value, aux)")
    dump.add_argument("--out", metavar="FILE.py", help="write a standalone module instead")
    dump.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    dump.add_argument("--debug", action="store_true", help="show tracebacks")
    dump.set_defaults(run=cmd_dump)
    chk = sub.add_parser("check", help="check a function's derivative against finite differences",
                         description="Compare s2s's derivative of FUNC in FILE.py with central "
                         "finite differences (and jvp with vjp by the dot-product test); "
                         "exit status 1 when they disagree, 2 on an error.")
    chk.add_argument("target", metavar="FILE.py:FUNC")
    chk.add_argument("--args", help="Python expression for the arguments (a tuple, or one "
                     "value for a one-parameter function); np and the module's globals are "
                     "in scope")
    chk.add_argument("--signature", help="argument kinds instead of --args (values of one)")
    chk.add_argument("--argnums", default="0", help="differentiate w.r.t. these, e.g. 0,1")
    chk.add_argument("--mode", choices=("grad", "jvp", "jit"), default="grad",
                     help="grad: s2s.grad against differences (default); jvp: s2s.jvp "
                          "against differences along a random tangent and against s2s.vjp "
                          "(dot-product test; any output); jit: s2s.jit(f) and "
                          "s2s.jit(s2s.grad(f))")
    chk.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance (1e-5)")
    chk.add_argument("--atol", type=float, default=1e-8, help="absolute tolerance (1e-8)")
    chk.add_argument("--debug", action="store_true", help="show tracebacks")
    chk.set_defaults(run=cmd_check)
    rules = sub.add_parser("rules", help="list every primitive with its jvp / vjp / vmap / "
                           "jit modes (+ a rule, 0 zero derivative, i inlined helper code, "
                           "- none with the reason, ? a gap)")
    rules.add_argument("--missing", action="store_true",
                       help="only the primitives missing a mode without a stated reason")
    rules.add_argument("--summary", action="store_true",
                       help="the counts: primitives, with all four modes, gaps")
    rules.add_argument("--debug", action="store_true", help="show tracebacks")
    rules.set_defaults(run=cmd_rules)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version, usage errors
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return args.run(args)
    except (S2SError, CLIError) as e:
        if args.debug:
            raise
        plain = isinstance(e, S2SError) or e.located
        print(str(e) if plain else f"s2s: error: {e}", file=sys.stderr)
        return 2
    except Exception as e:
        if args.debug:
            raise
        print(f"s2s: internal error: {type(e).__name__}: {e} "
              f"(this is a bug in s2s; rerun with --debug for the traceback)", file=sys.stderr)
        return 1
