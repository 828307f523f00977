"""The batching transform behind ``s2s.vmap``: ``transform.py`` (the IR pass),
``control.py`` (branches and loops on batched conditions), ``table.py`` and
``rules_*.py`` (one batching rule per primitive, by family), ``helper_rules.py``
(derivative rules of the run-time helpers batched code calls)."""
