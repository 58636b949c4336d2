\* verikit bundled candidate: faithful, fenced in markdown as models answer; the actions
\* leave variables out, which the post-processing completes with UNCHANGED.
Here is the TLA+ model:

```tla
---- MODULE HumanEval_35 ----
EXTENDS Integers, Sequences
CONSTANTS MaxLen, MaxValue
VARIABLES l, m, i, result, pc

Init == /\ l \in UNION {[1..n -> -MaxValue..MaxValue] : n \in 1..MaxLen}
        /\ m = l[1]
        /\ i = 1
        /\ result = NONE
        /\ pc = "loop"

Next == \/ /\ pc = "loop" /\ i <= Len(l)
           /\ m' = IF l[i] > m THEN l[i] ELSE m
           /\ i' = i + 1
        \/ /\ pc = "loop" /\ i > Len(l)
           /\ result' = m /\ pc' = "done"
        \/ pc = "done"

Spec == Init /\ [][Next]_<<l, m, i, result, pc>>

Assertion == pc = "done" => \A k \in 1..Len(l) : l[k] <= result
====
```
