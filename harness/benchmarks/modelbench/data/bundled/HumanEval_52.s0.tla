\* verikit bundled candidate: runs, with an auxiliary counter the oracle does not have
\* (its values lower the state similarity under Definition 4 as written).
---- MODULE HumanEval_52 ----
EXTENDS Naturals, Sequences
CONSTANTS MaxLen, MaxValue
VARIABLES l, t, i, steps, result, pc

Init == /\ l \in UNION {[1..n -> 0..MaxValue] : n \in 0..MaxLen}
        /\ t \in 0..MaxValue
        /\ i = 1
        /\ steps = 10
        /\ result = NONE
        /\ pc = "loop"

Next == \/ /\ pc = "loop" /\ i <= Len(l) /\ l[i] >= t
           /\ result' = FALSE /\ pc' = "done" /\ steps' = steps + 1
        \/ /\ pc = "loop" /\ i <= Len(l) /\ l[i] < t
           /\ i' = i + 1 /\ steps' = steps + 1
        \/ /\ pc = "loop" /\ i > Len(l)
           /\ result' = TRUE /\ pc' = "done" /\ steps' = steps + 1
        \/ pc = "done" /\ UNCHANGED <<l, t, i, steps, result, pc>>

Spec == Init /\ [][Next]_<<l, t, i, steps, result, pc>>

Assertion == pc = "done" => (result = \A k \in 1..Len(l) : l[k] < t)
====
