\* verikit bundled candidate (deliberately imperfect set): faithful, other variable names,
\* no copies of the inputs, and it relies on the post-processing for NONE/NULL and EXTENDS.
---- MODULE HumanEval_13 ----
EXTENDS Naturals
CONSTANTS MaxValue
VARIABLES x, y, result, pc

Init == /\ x \in 1..MaxValue
        /\ y \in 1..MaxValue
        /\ result = NONE
        /\ pc = "loop"

Step == /\ pc = "loop"
        /\ y # 0
        /\ x' = y
        /\ y' = x % y
        /\ UNCHANGED <<result, pc>>

Finish == /\ pc = "loop"
          /\ y = 0
          /\ result' = x
          /\ pc' = "done"
          /\ UNCHANGED <<x, y>>

Next == Step \/ Finish \/ (pc = "done" /\ UNCHANGED <<x, y, result, pc>>)

Spec == Init /\ [][Next]_<<x, y, result, pc>>

Assertion == pc = "done" => result >= 1
====
