"""Memory that compiled kernels hand back to Python.

A kernel allocates with ``malloc`` (``s2s.backend.llvm.values.abi``); the blocks of the
arrays it returns are wrapped here as numpy arrays *without copying*: each
array's base is a ``NativeBlock`` that calls the C library's ``free`` when the
last array using the block is gone.  ``array_layout_ok()`` checks, once, that
the ``PyArrayObject`` field offsets compiled entry points read (data 16, nd 24,
dimensions 32, strides 40, descr 56, flags 64; the descr's scalar type 16) hold in
this numpy.
"""
from __future__ import annotations

import ctypes

import numpy as np

_libc = ctypes.CDLL(None)
free_block = _libc.free
free_block.argtypes = [ctypes.c_void_p]
free_block.restype = None


class NativeBlock:
    """Owns one block allocated by a kernel; frees it when collected."""

    __slots__ = ("address", "__weakref__")

    def __init__(self, address: int):
        self.address = address

    def __del__(self):
        if self.address:
            free_block(self.address)
            self.address = 0


class _Interface:
    """A buffer description numpy wraps (its ``base``), keeping the block alive."""

    __slots__ = ("__array_interface__", "block")

    def __init__(self, data, shape, strides, typestr, block):
        self.__array_interface__ = {"data": (data, False), "shape": shape,
                                    "strides": strides, "typestr": typestr, "version": 3}
        self.block = block


def wrap(data: int, block: NativeBlock, shape, strides, typestr) -> np.ndarray:
    """A numpy array over native memory at ``data`` (owned by ``block``), not copied."""
    return np.asarray(_Interface(data,
                                 tuple(shape), tuple(strides), typestr, block))


def array_layout_ok() -> bool:
    """Whether ``PyArrayObject`` has the field offsets compiled entry points read."""
    x = np.zeros((3, 5))[:, ::2]
    base = id(x)
    read = ctypes.c_ssize_t.from_address
    data = read(base + 16).value
    dims = read(base + 32).value
    strides = read(base + 40).value
    descr = read(base + 56).value
    nd = ctypes.c_int.from_address(base + 24).value
    flags = ctypes.c_int.from_address(base + 64).value
    return (data == x.ctypes.data and read(dims).value == 3 and read(dims + 8).value == 3
            and read(strides).value == 40 and read(strides + 8).value == 16 and nd == 2
            and descr == id(x.dtype) and read(descr + 16).value == id(np.float64)
            and flags == x.flags.num)
