"""The batching transform behind ``s2s.vmap``: ``transform.py`` (the IR pass),
``control.py`` (branches and loops on batched conditions), ``table.py`` and
``rules_*.py`` (one batching rule per primitive, by family: ``rules_core``, ``rules_python``,
``rules_rank``, ``rules_products``, ``rules_bilinear``, ``rules_derivative_code``), ``helper_rules.py``
(derivative rules of the run-time helpers batched code calls)."""
