\* verikit bundled candidate: runtime error (Python's 0-based l[0] kept: l[0] is out of
\* the domain 1..Len(l) of a TLA+ sequence; the paper's "One-based Array Index").
---- MODULE HumanEval_35 ----
EXTENDS Integers, Sequences
CONSTANTS MaxLen, MaxValue
VARIABLES l, m, i, result, pc

Init == /\ l \in UNION {[1..n -> -MaxValue..MaxValue] : n \in 1..MaxLen}
        /\ m = l[0]
        /\ i = 0
        /\ result = NONE
        /\ pc = "loop"

Next == \/ /\ pc = "loop" /\ i < Len(l)
           /\ m' = IF l[i] > m THEN l[i] ELSE m
           /\ i' = i + 1
        \/ /\ pc = "loop" /\ i >= Len(l)
           /\ result' = m /\ pc' = "done"

Spec == Init /\ [][Next]_<<l, m, i, result, pc>>

Assertion == pc = "done" => \A k \in 1..Len(l) : l[k] <= result
====
