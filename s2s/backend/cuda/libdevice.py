"""Math on the GPU: LLVM math intrinsics and libm calls as libdevice's ``__nv_*``.

The NVPTX backend cannot lower ``llvm.sin.f64``, ``tanh`` and friends.  The
CPU lowering (``backend.llvm.values.scalars``) emits LLVM intrinsics and C library
calls; ``resolve(module)`` renames each declaration of such a function to
its libdevice name (``llvm.sin.f64`` / ``sin`` -> ``__nv_sin``, ``llvm.sin.f32`` /
``sinf`` -> ``__nv_sinf``, ``llvm.powi.f64.i32`` -> ``__nv_powi``), links
``libdevice.10.bc`` in and makes every libdevice function internal (so the
optimiser inlines what is used and drops the rest).  The module flag
``nvvm-reflect-ftz = 0`` (denormals kept, as on the CPU) is what NVVM
reflect reads.  ``frem`` becomes ``__nv_fmod`` (exact, as the C library's).
Intrinsics the NVPTX backend lowers itself (``fabs``,
``sqrt``, ``floor``, ``fma``, ``minnum``...) are left alone.  A call to any
other external function raises ``UnsupportedSyntaxError`` naming it: there
is no C library on the GPU.
"""
from __future__ import annotations

import re

import llvmlite.binding as llvm

from ...errors import UnsupportedSyntaxError
from .toolkit import libdevice_path

#: libm names (double precision) that libdevice implements as ``__nv_<name>``
LIBM = frozenset("""sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh exp exp2
exp10 expm1 log log2 log10 log1p pow hypot cbrt erf erfc lgamma tgamma fmod remainder
copysign fmin fmax fdim nextafter ldexp frexp logb ilogb rint nearbyint round trunc floor
ceil fabs sqrt rsqrt sinpi cospi j0 j1 y0 y1 erfinv erfcinv normcdf normcdfinv""".split())

#: intrinsics whose PTX lowering needs a library call: llvm.<name>.f32/f64
INTRINSICS = frozenset("sin cos tan exp exp2 exp10 log log2 log10 pow asin acos atan atan2 "
                       "sinh cosh tanh ldexp frexp".split())

#: external functions the GPU provides (device malloc/free are PTX system calls)
SYSTEM = frozenset({"malloc", "free", "vprintf"})

_INTRINSIC_RE = re.compile(r"^llvm\.([a-z0-9]+)\.(f32|f64)$")
_POWI_RE = re.compile(r"^llvm\.powi\.(f32|f64)\.i32$")

_BITCODE = {}
_DECLARE_RE = re.compile(
    r'^declare (?P<ret>[^@]*)@"?(?P<name>[\w.$]+)"?\((?P<args>[^)]*)\)', re.M)


def libdevice_name(name: str):
    """The ``__nv_*`` function implementing the external function ``name``, or None."""
    m = _INTRINSIC_RE.match(name)
    if m and m.group(1) in INTRINSICS:
        return "__nv_" + m.group(1) + ("f" if m.group(2) == "f32" else "")
    m = _POWI_RE.match(name)
    if m:
        return "__nv_powi" + ("f" if m.group(1) == "f32" else "")
    if name in LIBM:
        return "__nv_" + name
    if name.endswith("f") and name[:-1] in LIBM:
        return "__nv_" + name
    return None


def _bitcode() -> bytes:
    path = libdevice_path()
    data = _BITCODE.get(path)
    if data is None:
        with open(path, "rb") as f:
            data = _BITCODE[path] = f.read()
    return data


def rename_math(text: str):
    """``(text, used)``: the LLVM IR ``text`` with every math declaration and call
    renamed to libdevice's function (one declaration per function); ``used`` the
    sorted libdevice names.  An external function the GPU does not have raises
    ``UnsupportedSyntaxError``."""
    mapping = {}
    for m in _DECLARE_RE.finditer(text):
        name = m.group("name")
        target = libdevice_name(name)
        if target is not None:
            mapping[name] = target
        elif not (name in SYSTEM or name.startswith("llvm.")
                  and (_INTRINSIC_RE.match(name) is None
                       or name.split(".")[1] not in INTRINSICS)):
            raise UnsupportedSyntaxError(
                f"cuda: the function {name!r} has no GPU implementation (not in libdevice)")
    text, frem = _frem_as_fmod(text)
    if not mapping and not frem:
        return text, []
    out, declared = [], set(frem)
    for line in text.split("\n"):
        m = _DECLARE_RE.match(line)
        if m and m.group("name") in mapping:
            target = mapping[m.group("name")]
            if target not in declared:
                declared.add(target)
                out.append(f"declare {m.group('ret')}@{target}({m.group('args')})")
            continue
        out.append(line)
    for target in frem:
        if not any(v == target for v in mapping.values()):
            ty = "double" if target == "__nv_fmod" else "float"
            out.append(f"declare {ty} @{target}({ty}, {ty})")
    text = "\n".join(out)
    if mapping:
        names = "|".join(re.escape(n) for n in sorted(mapping, key=len, reverse=True))
        ref = re.compile(r'@"?(' + names + r')"?(?=\()')
        text = ref.sub(lambda m: "@" + mapping[m.group(1)], text)
    return text, sorted(set(mapping.values()) | set(frem))


_FREM_RE = re.compile(r"^(\s*%\S+) = frem (?:[a-z]+ )*(double|float) (\S+), (\S+)$", re.M)


def _frem_as_fmod(text):
    """``frem`` (the remainder Python's ``%`` starts from) as libdevice's exact ``fmod``:
    NVPTX expands ``frem`` to ``a - trunc(a / b) * b``, which is wrong when ``a / b`` is
    large.  Returns the text and the libdevice functions it now calls."""
    used = set()

    def call(m):
        name = "__nv_fmod" if m.group(2) == "double" else "__nv_fmodf"
        used.add(name)
        ty = m.group(2)
        return f"{m.group(1)} = call {ty} @{name}({ty} {m.group(3)}, {ty} {m.group(4)})"

    return _FREM_RE.sub(call, text), sorted(used)


def link(mod, keep=()):
    """Link libdevice into ``mod`` (in place) and make every function internal except
    those named in ``keep`` (the kernels), so that unused ones are dropped."""
    lib = llvm.parse_bitcode(_bitcode())
    lib.triple = mod.triple
    lib.data_layout = mod.data_layout
    mod.link_in(lib)
    keep = set(keep)
    for fn in mod.functions:
        if not fn.is_declaration and fn.name not in keep:
            fn.linkage = "internal"
