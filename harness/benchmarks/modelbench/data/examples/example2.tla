---- MODULE CountChar ----
\* Strings are sequences of code points: "a" is 97, "b" is 98, "c" is 99.
EXTENDS Naturals, Sequences
CONSTANTS MaxLen, Alphabet, NONE, NULL
VARIABLES s, c, count, i, result, pc

vars == <<s, c, count, i, result, pc>>

Init == /\ s \in UNION {[1..n -> Alphabet] : n \in 0..MaxLen}
        /\ c \in Alphabet
        /\ count = 0
        /\ i = 1
        /\ result = NONE
        /\ pc = "loop"

Loop == /\ pc = "loop"
        /\ IF i <= Len(s)
              THEN /\ count' = IF s[i] = c THEN count + 1 ELSE count
                   /\ i' = i + 1
                   /\ UNCHANGED <<result, pc>>
              ELSE /\ result' = count
                   /\ pc' = "done"
                   /\ UNCHANGED <<count, i>>
        /\ UNCHANGED <<s, c>>

Done == pc = "done" /\ UNCHANGED vars

Next == Loop \/ Done

Spec == Init /\ [][Next]_vars

Assertion == /\ (pc = "done" /\ s = <<97, 98, 99, 97>> /\ c = 97) => result = 2
             /\ (pc = "done" /\ s = <<>>) => result = 0
====
