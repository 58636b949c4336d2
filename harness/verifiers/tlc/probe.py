"""The invariant probe: the unreachable states an invariant is checked on in a
follow-up TLC run (:func:`probe_variants`, asked by :meth:`TLC.followup`) and the reading
of that run (:func:`read_probe`)."""

from __future__ import annotations

import random

from ...model import FOLLOWUP, ProcResult
from .output import (CLASS_ERROR, MSG_COMPUTING_INIT, MSG_INVARIANT_BEHAVIOR, MSG_INVARIANT_INITIAL, MSG_SUCCESS,
                     error_text, parse_state, split_messages)

#: The invariant probe (:meth:`TLC.followup`): the follow-up run's module, and its bounds
#: (:func:`probe_variants`).
PROBE_MODULE = "VKProbe"
PROBE_MAX_VARIANTS = 2000
PROBE_MAX_STATES = 400
PROBE_MAX_VALUES = 12


def probe_variants(states: list[dict[str, str]], *, seed: int = 0, max_variants: int = PROBE_MAX_VARIANTS,
                   max_states: int = PROBE_MAX_STATES, max_values: int = PROBE_MAX_VALUES) -> list[dict[str, str]]:
    """States that are not reachable, made from reachable ones (``states``, the dump's
    ``{variable: value}``) by changing one variable to another value it takes in some
    reachable state. Bounded and seeded (``random.Random(seed)``): at most ``max_states``
    reachable states (drawn), ``max_values`` values per variable (drawn), ``max_variants``
    variants (drawn); the order is deterministic. Only states with the same variables are
    combined. Returns ``[]`` when no variable takes two values."""
    rng = random.Random(seed)
    states = [s for s in states if s]
    if not states:
        return []
    names = sorted(states[0])
    states = [s for s in states if sorted(s) == names]
    reach = {tuple(s[v] for v in names) for s in states}
    pools = {v: sorted({s[v] for s in states}) for v in names}
    pools = {v: (p if len(p) <= max_values else sorted(rng.sample(p, max_values))) for v, p in pools.items()}
    base = states if len(states) <= max_states else [states[i] for i in sorted(rng.sample(range(len(states)), max_states))]
    seen: set[tuple] = set()
    out: list[dict[str, str]] = []
    for s in base:
        for v in names:
            for w in pools[v]:
                t = tuple(w if n == v else s[n] for n in names)
                if w != s[v] and t not in reach and t not in seen:
                    seen.add(t)
                    out.append(dict(zip(names, t)))
    if len(out) > max_variants:
        out = [out[i] for i in sorted(rng.sample(range(len(out)), max_variants))]
    return out


def read_probe(proc: ProcResult, states: list[dict[str, str]], *, seed: int = 0) -> dict:
    """The invariant probe's outcome (:meth:`TLC.followup`) from the follow-up files in
    ``proc.files``: ``{"outcome", "variants", ...}`` where ``outcome`` is

    - ``falsified``: the invariant is false on a variant (``state``: the first TLC found);
    - ``error``: TLC could not evaluate it on a variant (``error``; e.g. a sequence index
      out of its domain): not true by construction either;
    - ``held``: true on every variant (the probe's finding);
    - ``no_variants``: no variable takes two values in the reachable states (nothing to
      change: the probe cannot ask);
    - ``not_run``: variants exist but the follow-up did not run or came to no result
      (``error`` says why: its ``ended`` line, or its output).
    """
    files = proc.files or {}
    n = len(probe_variants(states, seed=seed))
    if not n:
        return {"outcome": "no_variants", "variants": 0}
    if FOLLOWUP + "stdout" not in files:
        why = files.get(FOLLOWUP + "ended", b"no follow-up run").decode("utf-8", "replace")
        return {"outcome": "not_run", "variants": n, "error": why}
    ended = files.get(FOLLOWUP + "ended", b"").decode("utf-8", "replace")
    text = files[FOLLOWUP + "stdout"].decode("utf-8", "replace")
    out = split_messages(text)
    violated = out.first(MSG_INVARIANT_INITIAL) or out.first(MSG_INVARIANT_BEHAVIOR)
    if violated is not None:  # 2107 prints the violating initial state in its own text
        try:
            state = parse_state(violated.text.partition("\n")[2])
        except ValueError:
            state = None
        return {"outcome": "falsified", "variants": n, "state": state}
    errors = [(i, m) for i, m in enumerate(out.messages) if m.cls == CLASS_ERROR]
    init_at = next((i for i, m in enumerate(out.messages) if m.code == MSG_COMPUTING_INIT), None)
    if errors and init_at is not None and errors[0][0] > init_at:
        return {"outcome": "error", "variants": n, "error": error_text(out, errors[0][0])}
    if out.first(MSG_SUCCESS) is not None and not errors and ended == "exit 0":
        return {"outcome": "held", "variants": n}
    detail = error_text(out, errors[0][0]) if errors else (ended + ": " + text.strip()[-300:])
    return {"outcome": "not_run", "variants": n, "error": detail}
