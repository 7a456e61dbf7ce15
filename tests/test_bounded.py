"""BoundedDict: the eviction policy behind every in-process memo and the local store."""

from __future__ import annotations

from service.runtime.bounded import BoundedDict, IdentityMemo


def test_put_evicts_the_oldest_beyond_the_bound() -> None:
    memo: BoundedDict[str, int] = BoundedDict(3)
    for i, key in enumerate("abcd"):
        memo.put(key, i)
    assert list(memo.items()) == [("b", 1), ("c", 2), ("d", 3)]


def test_replacing_a_key_makes_it_newest_without_evicting() -> None:
    memo: BoundedDict[str, int] = BoundedDict(3)
    for i, key in enumerate("abc"):
        memo.put(key, i)
    memo.put("a", 10)
    assert list(memo.items()) == [("b", 1), ("c", 2), ("a", 10)]
    memo.put("d", 4)
    assert list(memo) == ["c", "a", "d"]


def test_touch_keeps_recently_used_entries() -> None:
    memo: BoundedDict[str, int] = BoundedDict(2)
    memo.put("a", 1)
    memo.put("b", 2)
    assert memo.touch("a") == 1
    memo.put("c", 3)
    assert list(memo) == ["a", "c"]
    assert memo.touch("b") is None


def test_a_bound_below_one_still_holds_one_entry() -> None:
    memo: BoundedDict[str, int] = BoundedDict(0)
    memo.put("a", 1)
    memo.put("b", 2)
    assert list(memo.items()) == [("b", 2)]


def test_identity_memo_keeps_a_value_per_object_and_drops_the_oldest() -> None:
    memo: IdentityMemo[object, int] = IdentityMemo(2)
    a, b, c = object(), object(), object()
    memo.put(a, 1)
    memo.put(b, 2)
    assert (memo.get(a), memo.get(b), memo.get(c)) == (1, 2, None)
    memo.put(c, 3)  # a, the oldest, goes
    assert (memo.get(a), memo.get(b), memo.get(c)) == (None, 2, 3)


def test_identity_memo_never_answers_for_an_equal_object() -> None:
    memo: IdentityMemo[tuple[int, ...], str] = IdentityMemo(4)
    kept = tuple([1, 2])
    memo.put(kept, "kept")
    assert memo.get(kept) == "kept"
    assert memo.get(tuple([1, 2])) is None  # equal, not the same object
