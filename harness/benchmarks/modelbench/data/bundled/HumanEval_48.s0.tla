\* verikit bundled candidate: runtime error (indexes a TLA+ string like a Python string;
\* the paper's "Indexing String").
---- MODULE HumanEval_48 ----
EXTENDS Naturals, Sequences
CONSTANTS MaxLen
VARIABLES text, i, result, pc

Init == /\ text \in {"", "a", "ab", "aba"}
        /\ i = 1
        /\ result = NONE
        /\ pc = "loop"

Next == \/ /\ pc = "loop" /\ i <= Len(text)
           /\ IF text[i] # text[Len(text) + 1 - i]
                 THEN result' = FALSE /\ pc' = "done" /\ UNCHANGED i
                 ELSE i' = i + 1 /\ UNCHANGED <<result, pc>>
        \/ /\ pc = "loop" /\ i > Len(text)
           /\ result' = TRUE /\ pc' = "done" /\ UNCHANGED i

Spec == Init /\ [][Next]_<<text, i, result, pc>>

Assertion == TRUE
====
