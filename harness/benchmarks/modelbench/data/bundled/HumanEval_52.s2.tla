\* verikit bundled candidate: wrong behaviour (e > t instead of e >= t): the assertion
\* derived from the tests is violated.
---- MODULE HumanEval_52 ----
EXTENDS Naturals, Sequences
CONSTANTS MaxLen, MaxValue, NONE, NULL
VARIABLES l, t, i, result, pc
vars == <<l, t, i, result, pc>>

Init == /\ l \in UNION {[1..n -> 0..MaxValue] : n \in 0..MaxLen}
        /\ t \in 0..MaxValue
        /\ i = 1
        /\ result = NONE
        /\ pc = "loop"

Next == \/ pc = "loop" /\ i <= Len(l) /\ l[i] > t /\ result' = FALSE /\ pc' = "done" /\ UNCHANGED <<l, t, i>>
        \/ pc = "loop" /\ i <= Len(l) /\ l[i] <= t /\ i' = i + 1 /\ UNCHANGED <<l, t, result, pc>>
        \/ pc = "loop" /\ i > Len(l) /\ result' = TRUE /\ pc' = "done" /\ UNCHANGED <<l, t, i>>
        \/ pc = "done" /\ UNCHANGED vars

Spec == Init /\ [][Next]_vars

Assertion == pc = "done" => (result = \A k \in 1..Len(l) : l[k] < t)
====
