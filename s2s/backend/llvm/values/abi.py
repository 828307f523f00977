"""The kernel's context block and its memory: what native code and the Python wrapper share.

``ctx`` is an array of 64-bit words owned by the wrapper (one per compiled
signature):

* word ``STATUS``: 0, or the error site number (``FunctionLowering.sites``),
  words ``STATUS+1..+3``: integers for the error message (index, axis, size);
* word ``HEAD``: the list of blocks the kernel allocated in this call;
* word ``GROWTHS``: how many times a tape's buffer was reallocated, over all calls
  (a debug counter: a tape grows geometrically, so a few times per size reached);
* words ``TAPES..``: the buffers of the kernel's tapes, kept from one call
  to the next (a tape's memory is touched once, not faulted in at every call);
  freed with the context block (``callpath.context_block``);
* words ``FREE_LISTS..`` and ``FREE_BYTES..``: per size class, a list of small blocks
  no array holds any more and the bytes it holds, kept from one call to the next (see
  below); freed with the context block;
* word ``BUSY``: 1 from a call through ``callpath.Caller`` until its result is read:
  a fast entry (``fastcall.py``) finding it set leaves the call to the general path,
  which waits for the block's lock;
* words from ``RESULT``: the returned value, flattened (``result_layout``):
  a scalar in one word (complex in two), an array as data, block, shape, strides.

Allocations (``alloc``) are ``malloc``'d (``calloc``'d when zeroed) blocks with a 48-byte header
``{next, prev, kept, references, size class}`` in a doubly linked list at ``HEAD``.
A block of at most 4 KiB, header included, is made in one of ``SIZE_CLASSES`` sizes
(``class_size``: 64, 80, 96, ... 4096 bytes; its class + 1 and its size in the header)
and, when freed, goes on its class's free list in the context block instead of back
to the C library (up to ``CLASS_BYTES`` per class): the next allocation of that class
takes it from there.
Arrays pushed on a tape in a loop are made and freed once per iteration; with the
lists, a gradient's second call takes them from there (up to the cap) instead of the C
library.
Variables and tapes holding an array count as references (``retain``/
``release``, called by ``FunctionLowering.store`` and the tape pops): a block
no variable holds any more is freed at once, so a loop that makes a new
array per iteration runs in constant memory.  On return the blocks of the
arrays returned are marked kept and handed to the caller
(``s2s_runtime.native`` frees them with the numpy array that owns them);
every other block still listed is freed (``free_all``), on the error path too.

An allocation site inside a loop of the user's code (``pooled_alloc``) keeps the block
it made last (marked ``kept = POOLED``: release leaves it allocated at zero references)
and hands the same block out again at the next iteration when its reference count is
zero -- nothing holds the array any more: it was not stored, returned, pushed on a tape
or aliased by a view that lives on -- and it is large enough.  That is escape analysis
done exactly, at run time, by the reference counts that already decide when a block is
freed: a loop that makes a temporary or a buffer per iteration mallocs it once.  A block
still held is left to its holders (``kept = 0``, freed by its last release) and the site
makes a new one; ``free_all`` frees pooled blocks on return like any other.

Sizes never wrap and allocations never fail silently: ``byte_count`` computes a
product of counts with an overflow flag, ``alloc`` raises numpy's ``ValueError``
(``array is too big``) for a byte count over ``2**63 - 1`` and ``MemoryError``
when ``malloc`` returns NULL, before anything is written to the block.
"""
from __future__ import annotations

from llvmlite import ir as ll

from ..typing import types as T

STATUS, HEAD, TAPES = 0, 4, 6
#: a debug counter: how many times the kernel's tapes grew since the block was made
GROWTHS = HEAD + 1
#: the ``kept`` word of a block an allocation site keeps for reuse (``pooled_alloc``)
POOLED = 2
MESSAGE_INTS = HEAD - STATUS - 1  # the integers an error message may carry
#: tape buffers kept between calls (pointer, capacity per tape; stacks.py)
CACHED_TAPES = 5
#: small blocks kept for reuse by size class (``class_size``): list heads, bytes held
SIZE_CLASSES = 25
FREE_LISTS = TAPES + 2 * CACHED_TAPES
FREE_BYTES = FREE_LISTS + SIZE_CLASSES
#: 1 while a call from ``Caller`` holds the block (a fast entry then steps aside)
BUSY = FREE_BYTES + SIZE_CLASSES
RESULT = BUSY + 1
#: a block's header: next, prev, kept, references, size class + 1 (0: none), its bytes
HEADER = 48
SMALLEST_CLASS, LARGEST_CLASS = 64, 4096  # bytes of a block, header included
#: the bytes of cached blocks a class holds at most (more are freed)
CLASS_BYTES = 1 << 22


def class_size(c: int) -> int:
    """The bytes of a block of size class ``c``: 64, then four steps per doubling
    (80, 96, 112, 128, 160, ... 4096), so a block wastes at most a fifth of itself."""
    if c == 0:
        return SMALLEST_CLASS
    p = SMALLEST_CLASS.bit_length() - 1 + (c - 1) // 4
    return (1 << p) + (((c - 1) % 4 + 1) << (p - 2))


#: switch for benchmarks (``benchmarks/block_cache.py``): compile without the free lists
CACHE_SMALL_BLOCKS = True


def block_classes(module) -> bool:
    """Whether ``module``'s blocks of up to ``LARGEST_CLASS`` bytes are cached by size
    class in the context block (not on a GPU: its context lives for one thread's call)."""
    return CACHE_SMALL_BLOCKS and "nvptx" not in (module.triple or "")


def ctx_slot(L, k):
    return L.b.gep(L.ctx, [ll.Constant(T.I32, k)])


def _runtime(module, name):
    """The module's runtime helper ``name`` (defined once per module)."""
    if name in module.globals:
        return module.globals[name]
    malloc = module.globals.get("malloc") or ll.Function(
        module, ll.FunctionType(T.PTR, [T.I64]), "malloc")
    free = module.globals.get("free") or ll.Function(
        module, ll.FunctionType(ll.VoidType(), [T.PTR]), "free")
    ctxp = T.I64.as_pointer()
    if name == "s2s.alloc":  # (ctx, bytes, zeroed): the block, or NULL (nothing linked)
        calloc = module.globals.get("calloc") or ll.Function(
            module, ll.FunctionType(T.PTR, [T.I64, T.I64]), "calloc")
        fn = ll.Function(module, ll.FunctionType(T.PTR, [ctxp, T.I64, T.I1]), name)
        fn.linkage = "internal"
        b = ll.IRBuilder(fn.append_basic_block())
        ctx, n, zeroed = fn.args
        total = b.add(n, ll.Constant(T.I64, HEADER))
        size_class = ll.Constant(T.I64, 0)  # the header's word: 0, or the class + 1
        if block_classes(module):
            small = b.icmp_unsigned("<=", total, ll.Constant(T.I64, LARGEST_CLASS))
            total, size_class, cached = _class_of(b, module, ctx, total, small)
            with b.if_then(b.and_(zeroed, b.icmp_unsigned(
                    "!=", b.ptrtoint(cached, T.I64), ll.Constant(T.I64, 0)))):
                memset = module.declare_intrinsic("llvm.memset", [T.PTR, T.I64])
                b.call(memset, [b.gep(cached, [ll.Constant(T.I32, HEADER)]),
                                ll.Constant(T.I8, 0), n, ll.Constant(T.I1, 0)])
            before = b.block
            reused = b.icmp_unsigned("!=", b.ptrtoint(cached, T.I64), ll.Constant(T.I64, 0))
            fresh_block = fn.append_basic_block("fresh")
            link = fn.append_basic_block("link")
            b.cbranch(reused, link, fresh_block)
            b.position_at_end(fresh_block)
        with b.if_else(zeroed) as (then, other):
            with then:
                by_calloc = b.call(calloc, [ll.Constant(T.I64, 1), total])
                then_end = b.block
            with other:
                by_malloc = b.call(malloc, [total])
                other_end = b.block
        block = b.phi(T.PTR)
        block.add_incoming(by_calloc, then_end)
        block.add_incoming(by_malloc, other_end)
        got = fn.append_basic_block("got")
        failed = fn.append_basic_block("failed")
        b.cbranch(b.icmp_unsigned("==", b.ptrtoint(block, T.I64), ll.Constant(T.I64, 0)),
                  failed, got)
        b.position_at_end(failed)
        b.ret(block)
        b.position_at_end(got)
        if block_classes(module):
            b.branch(link)
            b.position_at_end(link)
            made = b.phi(T.PTR)
            made.add_incoming(cached, before)
            made.add_incoming(block, got)
            block = made
        words = b.bitcast(block, ctxp)
        head = b.gep(ctx, [ll.Constant(T.I32, HEAD)])
        old = b.load(head)
        b.store(old, words)
        for k in (1, 2, 3):  # prev, kept, references
            b.store(ll.Constant(T.I64, 0), b.gep(words, [ll.Constant(T.I32, k)]))
        b.store(size_class, b.gep(words, [ll.Constant(T.I32, 4)]))
        b.store(total, b.gep(words, [ll.Constant(T.I32, 5)]))
        with b.if_then(b.icmp_unsigned("!=", old, ll.Constant(T.I64, 0))):
            b.store(b.ptrtoint(block, T.I64),
                    b.gep(b.inttoptr(old, ctxp), [ll.Constant(T.I32, 1)]))
        b.store(b.ptrtoint(block, T.I64), head)
        b.ret(block)
        return fn
    if name == "s2s.release":  # one reference fewer; unlink and free at zero
        fn = ll.Function(module, ll.FunctionType(ll.VoidType(), [ctxp, T.PTR]), name)
        fn.linkage = "internal"
        ctx, block = fn.args
        b = ll.IRBuilder(fn.append_basic_block())
        done = fn.append_basic_block("done")
        work = fn.append_basic_block("work")
        b.cbranch(b.icmp_unsigned("==", b.ptrtoint(block, T.I64), ll.Constant(T.I64, 0)),
                  done, work)
        b.position_at_end(work)
        words = b.bitcast(block, ctxp)
        refs_p = b.gep(words, [ll.Constant(T.I32, 3)])
        refs = b.sub(b.load(refs_p), ll.Constant(T.I64, 1))
        b.store(refs, refs_p)
        kept = b.load(b.gep(words, [ll.Constant(T.I32, 2)]))
        dead = b.and_(b.icmp_signed("<=", refs, ll.Constant(T.I64, 0)),
                      b.icmp_unsigned("==", kept, ll.Constant(T.I64, 0)))
        with b.if_then(dead):
            nxt, prev = b.load(words), b.load(b.gep(words, [ll.Constant(T.I32, 1)]))
            zero = ll.Constant(T.I64, 0)
            with b.if_else(b.icmp_unsigned("!=", prev, zero)) as (has_prev, first):
                with has_prev:
                    b.store(nxt, b.inttoptr(prev, ctxp))
                with first:
                    b.store(nxt, b.gep(ctx, [ll.Constant(T.I32, HEAD)]))
            with b.if_then(b.icmp_unsigned("!=", nxt, zero)):
                b.store(prev, b.gep(b.inttoptr(nxt, ctxp), [ll.Constant(T.I32, 1)]))
            b.call(_runtime(module, "s2s.discard"), [ctx, block])
        b.branch(done)
        b.position_at_end(done)
        b.ret_void()
        return fn
    if name == "s2s.free_all":
        fn = ll.Function(module, ll.FunctionType(ll.VoidType(), [ctxp, T.I1]), name)
        fn.linkage = "internal"
        ctx, keep = fn.args
        entry, loop, body, done = (fn.append_basic_block(n) for n in ("e", "l", "b", "d"))
        b = ll.IRBuilder(entry)
        head = b.gep(ctx, [ll.Constant(T.I32, HEAD)])
        first = b.load(head)
        b.store(ll.Constant(T.I64, 0), head)
        b.branch(loop)
        b.position_at_end(loop)
        cur = b.phi(T.I64)
        cur.add_incoming(first, entry)
        b.cbranch(b.icmp_unsigned("==", cur, ll.Constant(T.I64, 0)), done, body)
        b.position_at_end(body)
        words = b.inttoptr(cur, ctxp)
        nxt = b.load(words)
        kept = b.icmp_unsigned("==", b.load(b.gep(words, [ll.Constant(T.I32, 2)])),
                               ll.Constant(T.I64, 1))  # returned (not POOLED)
        with b.if_then(b.not_(b.and_(keep, kept))):
            b.call(_runtime(module, "s2s.discard"), [ctx, b.bitcast(words, T.PTR)])
        cur.add_incoming(nxt, b.block)
        b.branch(loop)
        b.position_at_end(done)
        b.ret_void()
        return fn
    if name == "s2s.discard":  # (ctx, block): an unlinked block to its free list, or freed
        fn = ll.Function(module, ll.FunctionType(ll.VoidType(), [ctxp, T.PTR]), name)
        fn.linkage = "internal"
        ctx, block = fn.args
        b = ll.IRBuilder(fn.append_basic_block())
        words = b.bitcast(block, ctxp)
        stored = b.load(b.gep(words, [ll.Constant(T.I32, 4)]))
        if block_classes(module):
            with b.if_then(b.icmp_unsigned("!=", stored, ll.Constant(T.I64, 0)), likely=True):
                c = b.sub(stored, ll.Constant(T.I64, 1))  # a block of class c: kept if
                held_p = b.gep(ctx, [b.add(c, ll.Constant(T.I64, FREE_BYTES))])  # room
                held = b.add(b.load(held_p), b.load(b.gep(words, [ll.Constant(T.I32, 5)])))
                with b.if_then(b.icmp_unsigned("<=", held, ll.Constant(T.I64, CLASS_BYTES)),
                               likely=True):
                    head_p = b.gep(ctx, [b.add(c, ll.Constant(T.I64, FREE_LISTS))])
                    b.store(b.load(head_p), words)
                    b.store(b.ptrtoint(block, T.I64), head_p)
                    b.store(held, held_p)
                    b.ret_void()
        b.call(free, [block])
        b.ret_void()
        return fn
    raise KeyError(name)


def _class_of(b, module, ctx, total, small):
    """``(bytes, size class + 1, cached)`` of a block of ``total`` bytes: for a ``small``
    one its class's size (``class_size``), its class + 1 and the head of its free list,
    taken off the list (NULL when the list is empty); else ``total``, 0 and NULL."""
    i64 = lambda v: ll.Constant(T.I64, v)  # noqa: E731
    ctlz = module.globals.get("llvm.ctlz.i64") or ll.Function(
        module, ll.FunctionType(T.I64, [T.I64, T.I1]), "llvm.ctlz.i64")
    low = SMALLEST_CLASS.bit_length() - 1
    # above 64 bytes: 2**p < total <= 2**(p + 1), in quarter steps of 2**(p - 2)
    big = b.icmp_unsigned(">", total, i64(SMALLEST_CLASS))
    last = b.sub(b.select(big, total, i64(SMALLEST_CLASS + 1)), i64(1))
    p = b.sub(i64(63), b.call(ctlz, [last, ll.Constant(T.I1, 0)]))
    step = b.sub(p, i64(2))
    quarter = b.lshr(b.sub(last, b.shl(i64(1), p)), step)  # 0..3
    c = b.select(big, b.add(i64(1), b.add(b.shl(b.sub(p, i64(low)), i64(2)), quarter)),
                 i64(0))
    size = b.select(big, b.add(b.shl(i64(1), p), b.shl(b.add(quarter, i64(1)), step)),
                    i64(SMALLEST_CLASS))
    c = b.select(small, c, i64(0))
    head_p = b.gep(ctx, [b.add(c, i64(FREE_LISTS))])
    first = b.select(small, b.load(head_p), i64(0))
    with b.if_then(b.icmp_unsigned("!=", first, i64(0))):
        b.store(b.load(b.inttoptr(first, T.I64.as_pointer())), head_p)
        held_p = b.gep(ctx, [b.add(c, i64(FREE_BYTES))])
        b.store(b.sub(b.load(held_p), size), held_p)
    return (b.select(small, size, total), b.select(small, b.add(c, i64(1)), i64(0)),
            b.inttoptr(first, T.PTR))


def libc(module, name):
    """``malloc`` or ``free`` declared in ``module``."""
    fn = module.globals.get(name)
    if fn is None:
        fnty = ll.FunctionType(T.PTR, [T.I64]) if name == "malloc" else \
            ll.FunctionType(ll.VoidType(), [T.PTR])
        fn = ll.Function(module, fnty, name)
    return fn


#: numpy's message for a byte count over ``2**63 - 1`` (``arr.nbytes`` overflows ``intp``)
TOO_BIG = ("array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum "
           "possible size.")


def byte_count(b, counts, size):
    """``(product, overflowed)``: ``size * prod(counts)`` (i64 values, each >= 0) and an
    i1 that is true when the product does not fit in a signed 64-bit integer.  A zero
    count makes the product 0 but, as numpy, the other counts are still checked (the
    product of the counts that are not zero must fit)."""
    zero, one = ll.Constant(T.I64, 0), ll.Constant(T.I64, 1)
    acc = ll.Constant(T.I64, size) if isinstance(size, int) else size
    over, empty = ll.Constant(T.I1, 0), ll.Constant(T.I1, 0)
    for n in counts:
        is_zero = b.icmp_signed("==", n, zero)
        empty = b.or_(empty, is_zero)
        pair = b.smul_with_overflow(acc, b.select(is_zero, one, n))
        acc = b.extract_value(pair, 0)
        over = b.or_(over, b.extract_value(pair, 1))
    return b.select(empty, zero, acc), over


def checked_sum(L, a, c, over):
    """``(a + c, over or the sum overflowed)`` for i64 values."""
    pair = L.b.sadd_with_overflow(a, c)
    return L.b.extract_value(pair, 0), L.b.or_(over, L.b.extract_value(pair, 1))


def alloc(L, nbytes, zeroed=False, overflow=None, too_big=(ValueError, TOO_BIG),
          out_of_memory=None):
    """``(block, data)``: a fresh allocation of ``nbytes`` (i64) owned by this call, its
    bytes zero when ``zeroed`` (``calloc``: untouched pages stay unmapped, as numpy's
    ``np.zeros``).  Raises ``too_big`` (class, message) when the i1 ``overflow`` is true
    or ``nbytes`` is negative (the count wrapped), and ``out_of_memory`` (class, message
    template or a function of the message integers; default: ``MemoryError`` with the
    byte count) when ``malloc`` returns NULL."""
    b = L.b
    bad = b.icmp_signed("<", nbytes, ll.Constant(T.I64, 0))
    if overflow is not None:
        bad = b.or_(bad, overflow)
    L.check(bad, *too_big)
    block = b.call(_runtime(L.module, "s2s.alloc"), [L.ctx, nbytes, ll.Constant(T.I1, int(zeroed))])
    exc, message, ints = out_of_memory or (MemoryError, unable_to_allocate(None), [nbytes])
    L.check(b.icmp_unsigned("==", b.ptrtoint(block, T.I64), ll.Constant(T.I64, 0)),
            exc, message, ints)
    return block, b.gep(block, [ll.Constant(T.I32, HEADER)])


def new_array_block(L, shape, itemsize: int, zeroed, out_of_memory):
    """``(block, data)``: a fresh block for a C-contiguous array of ``shape`` (i64
    values) of ``itemsize``-byte elements, its bytes zero when ``zeroed``, with numpy's
    errors: a negative dimension (``ValueError``), a byte count over ``2**63 - 1``
    (``ValueError: array is too big``), memory the C library cannot give
    (``out_of_memory``: class and message, of the shape when its rank is at most
    ``MESSAGE_INTS``, else of the byte count).

    The checks and the allocation are one helper function per module and rank
    (``s2s.new_block.<rank>``), given the error sites: the caller keeps a call and a
    test, not three checks with their error blocks each (most of the code of a
    kernel that makes hundreds of arrays).  The helper writes the failing site and
    its integers to ``ctx``, so only where no ``try`` handler encloses the allocation
    (``L.handlers`` empty); elsewhere, ``alloc``."""
    b = L.b
    sites = [L.site(ValueError, "negative dimensions are not allowed"),
             L.site(ValueError, TOO_BIG), L.site(*out_of_memory)]
    helper = _new_block_helper(L.module, len(shape))
    block = b.call(helper, [L.ctx, ll.Constant(T.I1, int(zeroed)), ll.Constant(T.I64, itemsize)]
                   + [ll.Constant(T.I64, site) for site in sites] + list(shape))
    ok = L.fn.append_basic_block("ok")
    b.cbranch(b.icmp_unsigned("==", b.ptrtoint(block, T.I64), ll.Constant(T.I64, 0)),
              L.error_block, ok).set_weights([1, 1000])
    b.position_at_end(ok)
    # what the checks proved, for the loops that index the array (trip counts, no wrap)
    assume = L.module.declare_intrinsic("llvm.assume")
    largest = ll.Constant(T.I64, (2 ** 63 - 1) // max(itemsize, 1))
    for d in shape:
        b.call(assume, [b.icmp_signed(">=", d, ll.Constant(T.I64, 0))])
        b.call(assume, [b.icmp_signed("<=", d, largest)])
    return block, b.gep(block, [ll.Constant(T.I32, HEADER)])


def _new_block_helper(module, ndim):
    """``i8* @s2s.new_block.<ndim>(ctx, i1 zeroed, i64 itemsize, i64 negative_site,
    i64 too_big_site, i64 out_of_memory_site, i64 dims...)`` (see ``new_array_block``):
    the block, or NULL after writing the failing site and its integers to ``ctx``."""
    name = f"s2s.new_block.{ndim}"
    if name in module.globals:
        return module.globals[name]
    ctxp = T.I64.as_pointer()
    fnty = ll.FunctionType(T.PTR, [ctxp, T.I1] + [T.I64] * (4 + ndim))
    fn = ll.Function(module, fnty, name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")  # one copy per module: the point of the helper
    # fresh memory, as malloc's: without it the caller's loops may not assume that the
    # new array and the arrays they read are apart (heat stencils: 2x slower)
    fn.return_value.add_attribute("noalias")
    ctx, zeroed, itemsize, negative, too_big, no_memory = fn.args[:6]
    dims = list(fn.args[6:])
    b = ll.IRBuilder(fn.append_basic_block("entry"))
    null = ll.Constant(T.PTR, None)

    def fail_if(bad, site, ints=()):
        with b.if_then(bad, likely=False):
            b.store(site, b.gep(ctx, [ll.Constant(T.I32, STATUS)]))
            for k, v in enumerate(ints):
                b.store(v, b.gep(ctx, [ll.Constant(T.I32, STATUS + 1 + k)]))
            b.ret(null)

    for d in dims:
        fail_if(b.icmp_signed("<", d, ll.Constant(T.I64, 0)), negative)
    nbytes, overflow = byte_count(b, dims, itemsize)
    fail_if(b.or_(overflow, b.icmp_signed("<", nbytes, ll.Constant(T.I64, 0))), too_big)
    block = b.call(_runtime(module, "s2s.alloc"), [ctx, nbytes, zeroed])
    fail_if(b.icmp_unsigned("==", b.ptrtoint(block, T.I64), ll.Constant(T.I64, 0)), no_memory,
            dims if ndim <= MESSAGE_INTS else [nbytes])
    b.ret(block)
    return fn


def pooled_alloc(L, nbytes, zeroed, overflow, out_of_memory):
    """``(block, data)`` as ``alloc``, at an allocation site inside a loop: the block this
    site made before when its reference count is zero and its capacity at least
    ``nbytes`` (its bytes zeroed when ``zeroed``), else a fresh block that the site keeps
    (``POOLED``) in place of the old one, which is freed now if nobody holds it and by its
    last holder otherwise.  The same errors as ``alloc``, before anything is written."""
    b = L.b
    bad = b.icmp_signed("<", nbytes, ll.Constant(T.I64, 0))
    if overflow is not None:
        bad = b.or_(bad, overflow)
    L.check(bad, ValueError, TOO_BIG)
    cache, capacity = L.entry_alloca(T.PTR, "pool.block"), L.entry_alloca(T.I64, "pool.cap")
    entry = ll.IRBuilder(L.fn.entry_basic_block)
    entry.position_before(L.fn.entry_basic_block.terminator)
    entry.store(ll.Constant(T.PTR, None), cache)
    entry.store(ll.Constant(T.I64, 0), capacity)
    old = b.load(cache)
    held = b.icmp_unsigned("!=", b.ptrtoint(old, T.I64), ll.Constant(T.I64, 0))
    words = b.select(held, b.bitcast(old, T.I64.as_pointer()), L.refcount_dummy())
    refs_p = b.gep(words, [ll.Constant(T.I32, 3)])
    free = b.and_(held, b.icmp_signed("==", b.load(refs_p), ll.Constant(T.I64, 0)))
    reuse = b.and_(free, b.icmp_signed(">=", b.load(capacity), nbytes))
    with b.if_else(reuse, likely=True) as (then, other):
        with then:
            if zeroed:
                memset = L.module.declare_intrinsic("llvm.memset", [T.PTR, T.I64])
                b.call(memset, [b.gep(old, [ll.Constant(T.I32, HEADER)]),
                                ll.Constant(T.I8, 0), nbytes, ll.Constant(T.I1, 0)])
            reused = b.block
        with other:
            block, _ = alloc(L, nbytes, zeroed=zeroed, out_of_memory=out_of_memory)
            new_words = b.bitcast(block, T.I64.as_pointer())
            b.store(ll.Constant(T.I64, POOLED), b.gep(new_words, [ll.Constant(T.I32, 2)]))
            with b.if_then(held):  # the old block: to its holders, or freed now
                b.store(ll.Constant(T.I64, 0), b.gep(words, [ll.Constant(T.I32, 2)]))
                with b.if_then(free, likely=False):  # too small, held by nobody
                    b.store(ll.Constant(T.I64, 1), refs_p)
                    release_block(L, old)
            b.store(block, cache)
            b.store(nbytes, capacity)
            made = b.block
    out = b.phi(T.PTR)
    out.add_incoming(old, reused)
    out.add_incoming(block, made)
    return out, b.gep(out, [ll.Constant(T.I32, HEADER)])


def size_text(nbytes: int) -> str:
    """numpy's ``_ArrayMemoryError`` wording of a byte count (``72.8 TiB``, ``4.00 EiB``)."""
    units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    if nbytes < 1024:
        return f"{nbytes} bytes"
    k = min(len(units) - 1, (nbytes.bit_length() - 1) // 10)
    value = nbytes / (1 << (10 * k))
    if round(value, 2) >= 1024 and k + 1 < len(units):
        k, value = k + 1, value / 1024
    text = f"{value:.0f}." if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"
    return f"{text} {units[k]}"


def unable_to_allocate(dtype, ndim=None, itemsize=None):
    """The message of a failed allocation, as numpy words it: a function of the message
    integers (the shape when ``ndim`` is at most ``MESSAGE_INTS``, else the byte count)."""
    def message(*ints):
        if ndim is not None and ndim <= MESSAGE_INTS:
            shape = tuple(ints[:ndim])
            nbytes = itemsize
            for n in shape:
                nbytes *= n
            return (f"Unable to allocate {size_text(nbytes)} for an array with shape "
                    f"{shape} and data type {dtype}")
        what = f" for an array of data type {dtype}" if dtype else ""
        return f"Unable to allocate {size_text(ints[0])}{what}"
    return message


def array_blocks(L, value, t):
    """The block pointers of the arrays in a value of type ``t`` (tuples searched)."""
    if isinstance(t, (T.Array, T.List)):  # a list's storage is a block too (lists.py)
        return [L.b.extract_value(value, 1)]
    if isinstance(t, T.Tuple):
        return [blk for k, it in enumerate(t.items)
                for blk in array_blocks(L, L.b.extract_value(value, k), it)]
    return []


def holds_arrays(t) -> bool:
    return isinstance(t, (T.Array, T.List)) or isinstance(t, T.Tuple) and \
        any(map(holds_arrays, t.items))


def retain(L, value, t):
    """One more reference to the blocks of ``value`` (a variable or a tape now holds it)."""
    b = L.b
    for block in array_blocks(L, value, t):
        with b.if_then(b.icmp_unsigned("!=", b.ptrtoint(block, T.I64), ll.Constant(T.I64, 0))):
            refs = b.gep(b.bitcast(block, T.I64.as_pointer()), [ll.Constant(T.I32, 3)])
            b.store(b.add(b.load(refs), ll.Constant(T.I64, 1)), refs)


def release(L, value, t):
    """One reference fewer to the blocks of ``value``; a block nobody holds is freed."""
    for block in array_blocks(L, value, t):
        L.b.call(_runtime(L.module, "s2s.release"), [L.ctx, block])


def release_block(L, block):
    """One reference fewer to ``block`` (an ``i8*``, maybe null); freed at zero."""
    L.b.call(_runtime(L.module, "s2s.release"), [L.ctx, block])


def free_all(L, keep):
    L.b.call(_runtime(L.module, "s2s.free_all"), [L.ctx, ll.Constant(T.I1, int(keep))])


def keep_for_caller(L, block):
    """Mark ``block`` kept: ``free_all`` leaves it to the Python object that will own it."""
    kept = L.b.gep(L.b.bitcast(block, T.I64.as_pointer()), [ll.Constant(T.I32, 2)])
    L.b.store(ll.Constant(T.I64, 1), kept)


def result_layout(t):
    """The number of words of the flattened result of type ``t``."""
    if isinstance(t, T.Scalar):
        return 2 if t.dtype == "c16" else 1
    if isinstance(t, T.Array):
        return 2 + 2 * t.ndim
    if isinstance(t, T.List):  # numbers as an array (lists.as_array); arrays: handed_back
        from .lists import array_type, holds_arrays
        return 3 if holds_arrays(t) else result_layout(array_type(t))
    if isinstance(t, T.Tuple):
        return sum(result_layout(i) for i in t.items)
    if isinstance(t, T.NoneType):
        return 0
    raise TypeError(t)


def store_result(L, value, t, rt, owned=None):
    """Write ``value`` (of type ``t``, returned as ``rt``) to the result words.  Its
    arrays are made to own their memory (``arrays.owned``) by ``owned(value, rt)``
    when given, else here."""
    from .scalars import convert
    value = convert(L, value, t, rt)
    if owned is not None:
        value = owned(value, rt)
    _store(L, value, rt, [RESULT], owned is None)


def owned_items(L, value, t):
    """``value`` with each array it is or holds in tuples owning its memory
    (``arrays.owned``: a copy of an array the kernel did not allocate)."""
    from .arrays import owned
    if isinstance(t, T.Array):
        return owned(L, value, t)
    if isinstance(t, T.Tuple):
        for k, item in enumerate(t.items):
            if holds_arrays(item):
                owned_item = owned_items(L, L.b.extract_value(value, k), item)
                value = L.b.insert_value(value, owned_item, k)
    return value


def _store(L, value, t, pos, make_owned=True):
    b = L.b

    def word(v, ty):
        slot = b.bitcast(ctx_slot(L, pos[0]), ty.as_pointer())
        b.store(v, slot)
        pos[0] += 1

    if isinstance(t, T.List):
        from .lists import as_array, handed_back, holds_arrays
        if holds_arrays(t):
            for v in handed_back(L, value, t):
                word(v, T.I64)
            return
        value, t = as_array(L, value, t)
    if isinstance(t, T.Scalar):
        if t.dtype == "c16":
            word(b.extract_value(value, 0), T.F64)
            word(b.extract_value(value, 1), T.F64)
        elif t.dtype == "b1":
            word(b.zext(value, T.I64), T.I64)
        else:
            word(value, t.llvm())
    elif isinstance(t, T.Array):
        if make_owned:
            from .arrays import owned
            value = owned(L, value, t)
        block = b.extract_value(value, 1)
        keep_for_caller(L, block)
        word(b.extract_value(value, 0), T.PTR)
        word(block, T.PTR)
        for part in (2, 3):
            for k in range(t.ndim):
                word(b.extract_value(value, [part, k]), T.I64)
    elif isinstance(t, T.Tuple):
        for k, it in enumerate(t.items):
            _store(L, b.extract_value(value, k), it, pos, make_owned)
