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
    """``fn(*args)``, but the first call anywhere (the one that creates the file
    ``marker``) kills its process, as a worker lost mid-computation. The file is
    created atomically (``O_EXCL``): two tasks starting at once on two workers must
    not both see it missing and both die, which leaves no worker to recover on."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return fn(*args)
    os._exit(1)
