"""The backend's value types and how an IR function gets them.

``types`` (the types and numpy's promotion rules, NEP 50), ``infer`` (one type per
variable of a function, a fixpoint over loops), ``statics`` (arguments that are
compile-time constants, ``types.Static``).
"""
