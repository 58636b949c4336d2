def sum_list(nums: list) -> int:
    total = 0
    for x in nums:
        total += x
    return total


assert sum_list([1, 2, 3]) == 6
assert sum_list([]) == 0
