---- MODULE SumList ----
EXTENDS Naturals, Sequences
CONSTANTS MaxLen, MaxValue, NONE, NULL
VARIABLES nums, total, i, result, pc

vars == <<nums, total, i, result, pc>>

Init == /\ nums \in UNION {[1..n -> 0..MaxValue] : n \in 0..MaxLen}
        /\ total = 0
        /\ i = 1
        /\ result = NONE
        /\ pc = "loop"

Loop == /\ pc = "loop"
        /\ IF i <= Len(nums)
              THEN /\ total' = total + nums[i]
                   /\ i' = i + 1
                   /\ UNCHANGED <<result, pc>>
              ELSE /\ result' = total
                   /\ pc' = "done"
                   /\ UNCHANGED <<total, i>>
        /\ UNCHANGED nums

Done == pc = "done" /\ UNCHANGED vars

Next == Loop \/ Done

Spec == Init /\ [][Next]_vars

Assertion == /\ (pc = "done" /\ nums = <<1, 2, 3>>) => result = 6
             /\ (pc = "done" /\ nums = <<>>) => result = 0
====
