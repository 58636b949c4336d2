// verikit dafny-intent v1: task 2 (MBPP-DFY-153/test/task_id_2.dfy), method SharedElements; Dafny CLI dialect 2
predicate InArray(a: array<int>, x: int)
  reads a
{
  exists i :: 0 <= i < a.Length && a[i] == x
}

method VkT2Refute3(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [1, 2, 3, 4];
  assume {:axiom} b[..] == [5, 4, 3, 7];
  assert a[0] == 1;
  assert a[1] == 2;
  assert a[2] == 3;
  assert a[3] == 4;
  assert b[0] == 5;
  assert b[1] == 4;
  assert b[2] == 3;
  assert b[3] == 7;
  result := [53, 3, 4];
  assert result[0] == 53;
  assert result[1] == 3;
  assert result[2] == 4;
  assert 53 in result || !(53 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}
