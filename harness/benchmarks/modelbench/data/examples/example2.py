def count_char(s: str, c: str) -> int:
    count = 0
    for ch in s:
        if ch == c:
            count += 1
    return count


assert count_char("abca", "a") == 2
assert count_char("", "a") == 0
