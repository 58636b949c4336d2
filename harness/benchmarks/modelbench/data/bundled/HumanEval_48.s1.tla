\* verikit bundled candidate: runs; follows the transformed code (numeric pc of the basic
\* blocks, 0-based index) rather than the oracle's labels.
---- MODULE HumanEval_48 ----
EXTENDS Naturals, Sequences
CONSTANTS MaxLen, Alphabet
VARIABLES text, i, result, pc
vars == <<text, i, result, pc>>

Init == /\ text \in UNION {[1..n -> Alphabet] : n \in 0..MaxLen}
        /\ i = 0
        /\ result = NONE
        /\ pc = 1

Next == \/ pc = 1 /\ i < Len(text) /\ pc' = 2 /\ UNCHANGED <<text, i, result>>
        \/ pc = 1 /\ i >= Len(text) /\ pc' = 3 /\ UNCHANGED <<text, i, result>>
        \/ pc = 2 /\ text[i + 1] # text[Len(text) - i] /\ pc' = 4 /\ UNCHANGED <<text, i, result>>
        \/ pc = 2 /\ text[i + 1] = text[Len(text) - i] /\ i' = i + 1 /\ pc' = 1 /\ UNCHANGED <<text, result>>
        \/ pc = 3 /\ result' = TRUE /\ pc' = -1 /\ UNCHANGED <<text, i>>
        \/ pc = 4 /\ result' = FALSE /\ pc' = -1 /\ UNCHANGED <<text, i>>
        \/ pc = -1 /\ UNCHANGED vars

Spec == Init /\ [][Next]_vars

Assertion == pc = -1 => (result = (text = [k \in 1..Len(text) |-> text[Len(text) + 1 - k]]))
====
