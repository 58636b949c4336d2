// verikit dafny-intent v1: task 2 (MBPP-DFY-153/test/task_id_2.dfy), method SharedElements; Dafny CLI dialect 2
predicate InArray(a: array<int>, x: int)
  reads a
{
  exists i :: 0 <= i < a.Length && a[i] == x
}

method VkT3Refute4(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [11, 12, 14, 13];
  assume {:axiom} b[..] == [17, 15, 14, 13];
  assert a[0] == 11;
  assert a[1] == 12;
  assert a[2] == 14;
  assert a[3] == 13;
  assert b[0] == 17;
  assert b[1] == 15;
  assert b[2] == 14;
  assert b[3] == 13;
  result := [14];
  assert result[0] == 14;
  assert 13 in result || !(13 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}
