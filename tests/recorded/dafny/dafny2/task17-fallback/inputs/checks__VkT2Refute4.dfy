// verikit dafny-intent v1: task 17 (MBPP-DFY-153/test/task_id_17.dfy), method SquarePerimeter; Dafny CLI dialect 2
method VkT2Refute4(side: int) returns (perimeter: int)
{
  assume {:axiom} side == 5;
  perimeter := 19;
  assert !((perimeter == 4 * sidee));  // verifies only if the output violates the postcondition
}
