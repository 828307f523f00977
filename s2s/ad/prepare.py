"""What reverse mode does to a function's body before its adjoint (a mixin of
``Reverse``).

In order, each a pass with its own contract:

1. ``inplace.resolve_inplace``: ``x += v`` on numbers and on arrays the
   function owns alone becomes ``x = x + v``;
2. ``index_writes.resolve_index_writes``: index writes checked and made
   differentiable (copies and snapshots where the adjoint needs them);
3. ``snapshots.snapshot_mutated_constants``: snapshots of arrays without
   derivatives that change in place after a differentiated read;
4. ``dict_reads.hoist_entry_reads``: entries of dict arguments read in loops
   and branches are read once before them;
5. ``loops.prepare_loops``: loops the tape can run backwards;
6. ``scalars.real_scalars`` (the names that surely hold real scalars) and
   ``hoist.hoist_invariants`` (loop-invariant float arithmetic before loops).
"""
from __future__ import annotations

from typing import Dict, List, Set

from .dict_reads import hoist_entry_reads
from .hoist import hoist_invariants
from .index_writes import resolve_index_writes
from .inplace import has_inplace_operators, resolve_inplace
from .scalars import real_scalars
from .snapshots import snapshot_mutated_constants


class BodyPreparation:
    def prepare_body(self, body) -> List:
        from .reverse import scalar_item_of  # one definition, shared with inplace.py

        info = self.info
        wrt = [p for p in self.wrt if info[p].differentiable]
        scalar_item = lambda v: scalar_item_of(v, info)  # noqa: E731
        vectors = {p for p, i in info.items() if i.real_vector}
        self.scalar_seqs = {p for p, i in info.items() if i.all_items_scalar}
        if has_inplace_operators(body):
            body = resolve_inplace(body, real_scalars(body, self.scalars, scalar_item, vectors,
                                                      self.scalar_seqs), info)
        body, self.same_object = resolve_index_writes(
            body, wrt, {p.var.name for p in self.fn.params}, self.names)
        body = snapshot_mutated_constants(body, wrt, self.names)
        self.scope_kinds: List[str] = []  # "loop" or "try", innermost last
        self.try_records: Dict[int, object] = {}
        self.tries_with_adjoint: Set[int] = set()
        body, self.entry_dicts = hoist_entry_reads(
            body, {p: i.dict_paths for p, i in info.items() if i.is_dict}, self.names)
        body = self.prepare_loops(body)
        self.scalars = real_scalars(body, self.scalars, scalar_item, vectors, self.scalar_seqs)
        return hoist_invariants(body, self.scalars)
