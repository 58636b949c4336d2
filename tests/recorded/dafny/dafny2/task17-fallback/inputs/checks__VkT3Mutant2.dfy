// verikit dafny-intent v1: task 17 (MBPP-DFY-153/test/task_id_17.dfy), method SquarePerimeter; Dafny CLI dialect 2
method VkT3Mutant2(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 4;
  perimeter := 21;
}
