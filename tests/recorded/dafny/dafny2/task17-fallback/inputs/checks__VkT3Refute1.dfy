// verikit dafny-intent v1: task 17 (MBPP-DFY-153/test/task_id_17.dfy), method SquarePerimeter; Dafny CLI dialect 2
method VkT3Refute1(side: int) returns (perimeter: int)
{
  assume {:axiom} side == 4;
  perimeter := 25;
  assert !((perimeter == 4 * sidee));  // verifies only if the output violates the postcondition
}
