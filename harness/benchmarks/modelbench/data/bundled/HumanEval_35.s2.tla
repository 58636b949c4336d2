\* verikit bundled candidate: semantic error (Python's built-in max used as a TLA+ operator;
\* the paper's "Unknown Operator").
---- MODULE HumanEval_35 ----
EXTENDS Integers, Sequences
CONSTANTS MaxLen, MaxValue
VARIABLES l, result, pc

Init == /\ l \in UNION {[1..n -> -MaxValue..MaxValue] : n \in 1..MaxLen}
        /\ result = NONE
        /\ pc = "start"

Next == /\ pc = "start"
        /\ result' = Max(l)
        /\ pc' = "done"
        /\ UNCHANGED l

Spec == Init /\ [][Next]_<<l, result, pc>>

Assertion == TRUE
====
