"""What the receiving process runs in the scale-out tests (imported there by name)."""
import os
import pickle


def call(blob, args, kwargs=None):
    """Unpickle a function, call it; ``(result, facts about the object)``."""
    fn = pickle.loads(blob)
    out = fn(*args, **(kwargs or {}))
    return out, {"pid": os.getpid(), "id": id(fn), "type": type(fn).__name__,
                 "specs": len(getattr(fn, "specs", ()))}


def dies_once(marker, fn, *args):
    """``fn(*args)``, but the first call anywhere (no file ``marker`` yet) kills its
    process, as a worker lost mid-computation."""
    if not os.path.exists(marker):
        with open(marker, "w"):
            pass
        os._exit(1)
    return fn(*args)
