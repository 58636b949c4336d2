"""OSVBench candidates: the spec in a model's output, the integrity scan, and the
reference specs shown in the prompt examples.

Upstream code read: ``LLM_API_Invocations_passk.py`` (``find_spec``: spec extraction),
``bench_prompts/*_examples`` (the solved examples).
"""

from __future__ import annotations

import io
import re
import tokenize

_FENCE = re.compile(r"```python.*?```", re.S)

#: Identifiers a candidate spec may not use (outside comments and strings): the spec
#: module's imports are fixed by the harness, and these would let a spec escape the
#: programming model or forge the checker's output (e.g. print a passing test line, then
#: raise SystemExit(0)). Fail closed: such a spec is ``rejected``.
FORBIDDEN = {
    "import": "import statement (the spec module's imports are fixed)",
    "exec": "exec", "eval": "eval", "execfile": "execfile", "compile": "compile",
    "open": "open (file access)", "file": "file (file access)", "print": "print (could forge the checker's output)",
    "globals": "globals", "locals": "locals", "vars": "vars", "getattr": "getattr", "setattr": "setattr",
    "delattr": "delattr", "reload": "reload", "exit": "exit", "quit": "quit", "SystemExit": "SystemExit",
    "KeyboardInterrupt": "KeyboardInterrupt", "os": "os module", "sys": "sys module",
    "subprocess": "subprocess module", "unittest": "unittest module", "signal": "signal module",
    "socket": "socket module", "builtins": "builtins", "__builtin__": "__builtin__",
}


def extract_spec(output: str) -> str:
    """The spec in a model's output: upstream's rule (LLM_API_Invocations_passk.py
    ``find_spec``: the first ```` ```python ... ``` ```` block, minus its 9-character
    opening and 3-character closing fence); an output without such a block is taken as
    the spec itself (upstream's results JSON stores specs already extracted)."""
    m = _FENCE.search(output)
    return m.group()[9:-3] if m else output


def integrity_scan(spec: str) -> list[str]:
    """Forbidden identifiers (:data:`FORBIDDEN`) and dunder names used by ``spec`` outside
    comments and strings, each ``"<name>: <why> (line N)"``; [] for a clean spec. A spec
    Python cannot tokenize is scanned as raw text (fail closed)."""
    names: list[tuple[str, int]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(spec).readline):
            if tok.type == tokenize.NAME:
                names.append((tok.string, tok.start[0]))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        names = [(m.group(), spec.count("\n", 0, m.start()) + 1) for m in re.finditer(r"[A-Za-z_]\w*", spec)]
    found = []
    for name, line in names:
        why = FORBIDDEN.get(name) or ("dunder name (reaches interpreter internals)"
                                      if len(name) > 4 and name.startswith("__") and name.endswith("__") else None)
        if why:
            found.append(f"{name}: {why} (line {line})")
    return list(dict.fromkeys(found))




_EXAMPLE = re.compile(r"^Example \d+:\n", re.M)
_EXAMPLE_SYSCALL = re.compile(r"^Given a system call `(\w+)`", re.M)
_EXAMPLE_SPEC = re.compile(r"^\[Specification\]:\n.*?^```python\n(.*?)^```", re.M | re.S)


def example_specs(text: str) -> dict[str, str]:
    """The solved examples of a prompt examples file (``bench_prompts/<n>_shot(s)_example(s)``):
    system call -> its specification (the code of the ```` ```python ```` block after
    ``[Specification]:``, without the fences), in file order. They are Hyperkernel's own
    specifications: three of them (``sys_alloc_port``, ``sys_map_page_desc``,
    ``sys_protect_frame``) are token for token, comments aside, specs the published run
    verified (tests/test_osvbench_benchmark.py)."""
    out = {}
    for part in _EXAMPLE.split(text)[1:]:
        name = _EXAMPLE_SYSCALL.search(part)
        spec = _EXAMPLE_SPEC.search(part)
        if name and spec:
            out[name.group(1)] = spec.group(1)
    return out
