"""Every process keeps the interpreter's default recursion limit (1,000).

py_ecc, which eth-account imports (through eth-keyfile), raises the limit to 100,000 when it is
first imported. Past the default, C code that recurses once per level (the json decoder: one C
call per nested array or object) runs out of C stack before Python's own check can raise
``RecursionError``, and the whole process dies with SIGSEGV: one feed message of 100,000 ``[``
killed the feed, and a structure that deep parsed anywhere would kill a web or worker process the
same way. Nothing we call needs the higher limit: eth-keys multiplies curve points by recursing
once per bit of a 256-bit scalar (signing, recovering and deriving HD keys need about 260 frames),
and we never call py_ecc's own curves (the EVM and crypto tests run under the default limit).

The package ``config`` imports this module before anything else, and every process imports
``config`` first (gunicorn its WSGI module and worker class, Celery its app, ``manage.py``, the
feed included, its settings), so py_ecc is imported here, once, before any app asks for it, and
the limit is put back at once. tests/faults/test_recursion_limit.py starts every kind of process
as it is deployed and checks the limit it runs with."""

import importlib
import sys

DEFAULT_RECURSION_LIMIT = sys.getrecursionlimit()

importlib.import_module("py_ecc")  # sets the limit to 100,000 as it loads
sys.setrecursionlimit(DEFAULT_RECURSION_LIMIT)
