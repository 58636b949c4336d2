"""Output mutants (paper, Section II-A), seeded: for completeness, each test's expected
output is mutated by the paper's operators, and a specification is complete to the extent
that it rejects the mutants. A test's mutants depend only on (seed, task id, test index)."""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from decimal import Decimal

from .tests import Task, TestCase
from .values import CHAR, Arr, Char, Tup, Ty, ValueError_, coerce, render

#: Paper, Section II-A: "we consider up to 5 distinct mutants of the output values for each test".
MUTANTS_PER_TEST = 5
#: Draws of the mutation operators per test before giving up on finding more distinct mutants.
MAX_DRAWS = 200
#: The mutation seed when a run gives none (``--seed``).
DEFAULT_SEED = 0
#: Lowercase letters: the reference script's alphabet for string mutations.
ALPHABET = "abcdefghijklmnopqrstuvwxyz"
#: Range of the random value inserted into an integer sequence (reference: randint(0, 100)).
INSERT_RANGE = (0, 100)


def test_seed(seed: int, task_id: str, test_index: int) -> int:
    """The RNG seed of one test's mutants: the first 8 bytes (big-endian) of
    sha256("verikit/dafny-intent/<seed>/<task_id>/<test>"). Independent of task order and
    of which other tasks run, so a task's mutants depend only on (seed, task, test)."""
    h = hashlib.sha256(f"verikit/dafny-intent/{seed}/{task_id}/{test_index}".encode()).digest()
    return int.from_bytes(h[:8], "big")


def random_value(ty: Ty, rng: random.Random):
    """A random value of ``ty`` for an insertion: integers in :data:`INSERT_RANGE` (as the
    reference script); other types (an extension of the paper's integer-only operator):
    booleans, lowercase letters, one-letter strings, reals with integer values, sequences
    of 0-3 such values, tuples component-wise."""
    if ty.is_int:
        hi = INSERT_RANGE[1]
        m = re.fullmatch(r"bv(\d+)", ty.name)
        if m:
            hi = min(hi, 2 ** int(m.group(1)) - 1)
        return rng.randint(INSERT_RANGE[0], hi)
    if ty.name == "bool":
        return rng.choice([False, True])
    if ty.name == "real":
        return Decimal(rng.randint(*INSERT_RANGE))
    if ty == CHAR:
        return Char(rng.choice(ALPHABET))
    if ty.name == "seq" and ty.args == (CHAR,):
        return rng.choice(ALPHABET)
    if ty.name in ("seq", "array") and ty.args:
        items = tuple(random_value(ty.args[0], rng) for _ in range(rng.randint(0, 3)))
        return Arr(items) if ty.name == "array" else items
    if ty.name == "tuple":
        return Tup(tuple(random_value(t, rng) for t in ty.args))
    raise ValueError_(f"no random values of type {ty}")


def mutate(value, ty: Ty, rng: random.Random):
    """One draw of the paper's output mutation operators (Section II-A):

    - bool: flipped;
    - integers (int, nat, bvN): a random k in 1..10 added or subtracted (rng.randint(1, 10),
      then rng.choice([True, False]): True adds);
    - strings: a random lowercase letter, then rng.choice(["replace", "append"]) (an empty
      string is appended to): replace puts it at rng.randrange(len) ;
    - integer arrays and sequences: rng.choice(["drop", "insert"]) (empty: insert); drop
      removes the element at rng.randrange(len); insert puts :func:`random_value` at
      rng.randint(0, len) (so appending is possible, unlike the reference script);

    and, outside the paper's types (extensions, reported as such): reals like integers;
    chars replaced by a random letter; sequences and arrays of other element types with
    drop/insert; tuples: one component (rng.randrange) mutated.
    """
    if ty.name == "bool":
        return not value
    if ty.is_int or ty.name == "real":
        k = rng.randint(1, 10)
        up = rng.choice([True, False])
        k = Decimal(k) if ty.name == "real" else k
        return value + k if up else value - k
    if ty == CHAR:
        return Char(rng.choice(ALPHABET))
    if ty.name == "seq" and ty.args == (CHAR,):
        c = rng.choice(ALPHABET)
        op = "append" if not value else rng.choice(["replace", "append"])
        if op == "append":
            return value + c
        pos = rng.randrange(len(value))
        return value[:pos] + c + value[pos + 1:]
    if ty.name in ("seq", "array") and ty.args:
        items = list(value.items if isinstance(value, Arr) else value)
        op = "insert" if not items else rng.choice(["drop", "insert"])
        if op == "drop":
            del items[rng.randrange(len(items))]
        else:
            pos = rng.randint(0, len(items))
            items.insert(pos, random_value(ty.args[0], rng))
        return Arr(tuple(items)) if ty.name == "array" else tuple(items)
    if ty.name == "tuple":
        i = rng.randrange(len(ty.args))
        items = list(value.items)
        items[i] = mutate(items[i], ty.args[i], rng)
        return Tup(tuple(items))
    raise ValueError_(f"no mutation operator for type {ty}")


def output_key(values: tuple, types) -> str:
    """An output tuple as text: its values' Dafny literals joined by ``|`` (how mutants are
    compared, and how outputs are recorded in the check list)."""
    return "|".join(render(v, t) for v, t in zip(values, types))


def mutants(task: Task, test: TestCase, seed: int) -> dict:
    """Up to :data:`MUTANTS_PER_TEST` distinct output mutants of one test.

    With several out-parameters one of them (rng.randrange) is mutated per draw. A draw is
    discarded, and another one made, when it equals the expected output or an alternative
    output the test accepts (a mutant equal to an allowed output must not count against the
    specification), repeats an earlier mutant, or is not a value of the output type (e.g. a
    negative ``nat``); at most :data:`MAX_DRAWS` draws.

    Returns ``{"seed": test seed, "mutants": [output tuples], "discarded": {"allowed": n,
    "duplicate": n, "ill-typed": n}, "draws": n}``.
    """
    types = [r.type for r in task.method.returns]
    rng = random.Random(test_seed(seed, task.task_id, test.index))
    allowed = {output_key(test.outputs, types)} | {output_key(a, types) for a in test.alternatives}
    seen: set[str] = set()
    out: list = []
    discarded = Counter()
    draws = 0
    while len(out) < MUTANTS_PER_TEST and draws < MAX_DRAWS:
        draws += 1
        i = rng.randrange(len(types)) if len(types) > 1 else 0
        vals = list(test.outputs)
        try:
            vals[i] = coerce(mutate(vals[i], types[i], rng), types[i], "mutant")
        except ValueError_:
            discarded["ill-typed"] += 1
            continue
        k = output_key(tuple(vals), types)
        if k in allowed:
            discarded["allowed"] += 1
        elif k in seen:
            discarded["duplicate"] += 1
        else:
            seen.add(k)
            out.append(tuple(vals))
    return {"seed": test_seed(seed, task.task_id, test.index), "mutants": out,
            "discarded": {k: discarded.get(k, 0) for k in ("allowed", "duplicate", "ill-typed")}, "draws": draws}
