// verikit dafny-intent v1: task 2 (MBPP-DFY-153/test/task_id_2.dfy), method SharedElements; Dafny CLI dialect 2
predicate InArray(a: array<int>, x: int)
  reads a
{
  exists i :: 0 <= i < a.Length && a[i] == x
}

method VkT1Refute3(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [3, 4, 5, 6];
  assume {:axiom} b[..] == [5, 7, 4, 10];
  assert a[0] == 3;
  assert a[1] == 4;
  assert a[2] == 5;
  assert a[3] == 6;
  assert b[0] == 5;
  assert b[1] == 7;
  assert b[2] == 4;
  assert b[3] == 10;
  result := [4, 59, 5];
  assert result[0] == 4;
  assert result[1] == 59;
  assert result[2] == 5;
  assert 59 in result || !(59 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}
