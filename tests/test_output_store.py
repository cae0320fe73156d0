"""The output store: bounded buffers, absolute line numbers, ranges, search, eviction, restart."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from secure_shell.errors import BadPattern, ExecutionNotFound, SearchTimeout, StoreFull
from secure_shell.output_search import SEARCH_SECONDS, compile_pattern
from secure_shell.output_store import OutputStore, StoreLimits
from tests.waiting import PATIENCE, finishes


def filled(store: OutputStore, lines: int, stream: str = "stdout", chunk: int = 1000, held: bool = False):
    execution = store.start("bash", "seq", "/tmp", held=held)
    for first in range(1, lines + 1, chunk):
        last = min(lines, first + chunk - 1)
        execution.buffer.feed(stream, "".join(f"{n}\n" for n in range(first, last + 1)).encode())
    store.finish(execution, "completed", 0)
    return execution


@pytest.fixture
def store(tmp_path: Path) -> OutputStore:
    s = OutputStore(StoreLimits(head_bytes=1 << 20, tail_bytes=64 << 10), tmp_path / "logs")
    yield s
    s.close()


def search(execution, pattern: str, context: int = 0, max_lines: int = 100, seconds: float = PATIENCE):
    """A search under a deadline only a hang reaches, unless the test is about the deadline."""
    compiled = compile_pattern(pattern)
    return execution.buffer.search(compiled, context, max_lines, time.monotonic() + seconds)


def test_every_line_kept_under_the_cap(store: OutputStore) -> None:
    execution = filled(store, 10_000)
    result = execution.buffer.line_range(1, None, 100_000, 1 << 30)
    assert [line.number for line in result.lines] == list(range(1, 10_001))
    assert [line.text for line in result.lines[:3]] == ["1", "2", "3"]
    assert result.dropped is None and execution.buffer.total_lines == 10_000


def test_numbering_stays_absolute_after_the_middle_is_dropped(tmp_path: Path) -> None:
    store = OutputStore(StoreLimits(head_bytes=1000, tail_bytes=1000), tmp_path)
    execution = filled(store, 100_000)
    buffer = execution.buffer
    assert buffer.total_lines == 100_000
    first, last = buffer.dropped_range()
    assert first == buffer.head_lines + 1 and last < 100_000
    tail = buffer.line_range(-5, -1, 100, 1 << 20)
    assert [(line.number, line.text) for line in tail.lines] == [(n, str(n)) for n in range(99_996, 100_001)]
    middle = buffer.line_range(50_000, 50_010, 100, 1 << 20)
    assert middle.lines == () and middle.dropped == (50_000, 50_010)
    store.close()


def test_ranges_negative_and_capped(store: OutputStore) -> None:
    execution = filled(store, 1000)
    assert [line.text for line in execution.buffer.line_range(-3, None, 10, 1 << 20).lines] == ["998", "999", "1000"]
    assert [line.text for line in execution.buffer.line_range(10, 12, 10, 1 << 20).lines] == ["10", "11", "12"]
    capped = execution.buffer.line_range(1, 1000, 5, 1 << 20)
    assert len(capped.lines) == 5 and capped.truncated
    by_bytes = execution.buffer.line_range(1, 1000, 1000, 10)
    assert [line.text for line in by_bytes.lines] == ["1", "2", "3", "4", "5"] and by_bytes.truncated


def test_search_counts_every_match_and_returns_the_first_with_context(store: OutputStore) -> None:
    execution = filled(store, 20_000)
    result = search(execution, "^1\\d9$", context=1, max_lines=3)
    assert result.total_matches == 10
    assert [line.text for line in result.matches] == ["108", "109", "110", "118", "119", "120", "128", "129", "130"]
    assert result.truncated


def test_search_is_case_insensitive_and_covers_head_and_tail(tmp_path: Path) -> None:
    store = OutputStore(StoreLimits(head_bytes=200, tail_bytes=200), tmp_path)
    execution = store.start("bash", "x", None)
    execution.buffer.feed("stdout", b"Alpha\n" + b"filler\n" * 200 + b"ALPHA again\n")
    store.finish(execution, "completed", 0)
    result = search(execution, "alpha")
    assert [line.text for line in result.matches] == ["Alpha", "ALPHA again"]
    assert result.total_matches == 2
    store.close()


def test_catastrophic_pattern_is_stopped_with_a_clear_error(store: OutputStore) -> None:
    execution = store.start("bash", "x", None)
    execution.buffer.feed("stdout", b"a" * 60 + b"!\n")
    store.finish(execution, "completed", 0)
    assert search(execution, "(a+)+$").total_matches == 0  # the regex module does not stall here

    def stopped() -> float:
        started = time.thread_time()
        with pytest.raises(SearchTimeout, match=r"search for '\(a\|aa\)\+\$' stopped after 1 s"):
            search(execution, "(a|aa)+$", seconds=SEARCH_SECONDS)  # about fib(60) steps: it never ends by itself
        return time.thread_time() - started

    # The deadline is wall time, so the CPU spent before it fires is at most the deadline however
    # busy the machine is (a loaded machine gives the search less CPU, not more).
    assert finishes(stopped) < SEARCH_SECONDS + 2.0


def test_invalid_pattern_is_a_clear_error() -> None:
    with pytest.raises(BadPattern, match="invalid regular expression"):
        compile_pattern("(unclosed")


@pytest.mark.parametrize(
    "pattern",
    [
        "a{20001}",
        "(ab){10001}",
        "((a{100}){100}){100}",
        "([)](a){150}){150}",  # a parenthesis in a class closes no group
        "([]){1}](a){150}){150}",  # nor does one after a leading ], nor is a brace there a count
        "(\\)(a){150}){150}",  # nor does an escaped one
        "(\\p{L}{150}){150}",  # an escape with braces is one atom, and can be repeated
        "({5}){10000}",  # a count with nothing to repeat is text, repeated all the same
        "(?:a|bc)*{20001}",
    ],
)
def test_a_pattern_that_compiles_to_too_many_copies_is_refused_before_compiling(pattern: str) -> None:
    with pytest.raises(BadPattern, match="repeats too much"):
        compile_pattern(pattern)


@pytest.mark.parametrize("pattern", ["[{]{5}", "\\{99999\\}", "\\p{L}{100}", "[(?R)]x", "^\\d{4}-\\d{2}", ".{0,20000}"])
def test_braces_and_calls_inside_classes_and_escapes_are_text(pattern: str) -> None:
    assert compile_pattern(pattern).pattern == pattern


def test_search_reports_the_lines_it_could_not_search(tmp_path: Path) -> None:
    store = OutputStore(StoreLimits(head_bytes=1000, tail_bytes=1000), tmp_path)
    execution = filled(store, 100_000)
    result = search(execution, "^50000$")
    assert result.total_matches == 0 and result.dropped == execution.buffer.dropped_range()
    assert search(execution, "^1$").dropped == execution.buffer.dropped_range()  # found or not, said
    store.close()


def test_a_search_of_everything_kept_reports_nothing_dropped(store: OutputStore) -> None:
    assert search(filled(store, 1000), "^5").dropped is None


def test_streams_are_remembered_per_line(store: OutputStore) -> None:
    execution = store.start("bash", "x", None)
    execution.buffer.feed("stdout", b"out 1\nout 2\n")
    execution.buffer.feed("stderr", b"err 1\n")
    execution.buffer.feed("stdout", b"out 3\n")
    store.finish(execution, "completed", 0)
    assert [(line.stream, line.text) for line in execution.buffer.line_range(1, None, 10, 1 << 20).lines] == [
        ("stdout", "out 1"),
        ("stdout", "out 2"),
        ("stderr", "err 1"),
        ("stdout", "out 3"),
    ]


def test_partial_lines_and_split_characters_are_joined(store: OutputStore) -> None:
    execution = store.start("bash", "x", None)
    data = "€uro\r\nlast".encode()
    for i in range(len(data)):
        execution.buffer.feed("stdout", data[i : i + 1])
    store.finish(execution, "completed", 0)
    assert [line.text for line in execution.buffer.line_range(1, None, 10, 1 << 20).lines] == ["€uro", "last"]


def test_binary_output_is_summarised_not_stored(store: OutputStore) -> None:
    execution = store.start("bash", "x", None)
    execution.buffer.feed("stdout", b"\x00\x01\x02" * 1000)
    store.finish(execution, "completed", 0)
    lines = execution.buffer.line_range(1, None, 10, 1 << 20).lines
    assert len(lines) == 1 and "binary output" in lines[0].text
    assert execution.buffer.total_bytes == 3000


def test_very_long_lines_are_split(store: OutputStore) -> None:
    execution = store.start("bash", "x", None)
    execution.buffer.feed("stdout", b"x" * 200_000)
    store.finish(execution, "completed", 0)
    assert execution.buffer.total_lines == 4


def test_ids_are_dated_random_and_unique(store: OutputStore) -> None:
    ids = {store.start("bash", "x", None).id for _ in range(20)}
    assert len(ids) == 20
    assert all(len(i) == 19 and i[8] == "-" and i[:8].isdigit() for i in ids)


def test_oldest_finished_executions_are_evicted_first(tmp_path: Path) -> None:
    store = OutputStore(StoreLimits(max_executions=3), tmp_path)
    running = store.start("bash", "long", None)
    done = [filled(store, 10) for _ in range(3)]
    assert running.id in {e.id for e in store.list()}
    assert done[0].id not in {e.id for e in store.list()}
    with pytest.raises(ExecutionNotFound, match=done[0].id):
        store.get(done[0].id)
    assert not (tmp_path / f"{done[0].id}.log").exists()
    store.close()


def test_an_evicted_id_and_one_never_issued_read_differently(tmp_path: Path) -> None:
    """MCP Inspector's CLI starts a server per call: an id from an earlier server is not "evicted"."""
    store = OutputStore(StoreLimits(max_executions=1), tmp_path)
    gone = filled(store, 3)
    filled(store, 3)
    with pytest.raises(ExecutionNotFound) as evicted:
        store.get(gone.id)
    assert str(evicted.value) == (
        f"execution '{gone.id}' was evicted from the output store, its output is gone "
        "(global.logging: maxStoredLogs, maxTotalStorageSize, logRetentionMinutes)"
    )
    with pytest.raises(ExecutionNotFound) as unknown:
        store.hold("20260101-0123456789")
    assert str(unknown.value) == (
        "no execution with id '20260101-0123456789': not known to this server (started by another server "
        "process?); each server process keeps only the executions it started"
    )
    store.close()


def test_total_size_cap_evicts(tmp_path: Path) -> None:
    store = OutputStore(StoreLimits(max_total_bytes=100_000), tmp_path)
    first = filled(store, 20_000)
    filled(store, 20_000)
    assert first.id not in {e.id for e in store.list()}
    store.close()


def test_retention_by_age(tmp_path: Path) -> None:
    store = OutputStore(StoreLimits(retention_seconds=0.01), tmp_path)
    old = filled(store, 10)
    time.sleep(0.05)
    filled(store, 10)
    assert old.id not in {e.id for e in store.list()}
    store.close()


def test_log_directory_survives_a_restart(tmp_path: Path) -> None:
    limits = StoreLimits(head_bytes=1 << 20)
    store = OutputStore(limits, tmp_path)
    execution = filled(store, 5000)
    assert (tmp_path / f"{execution.id}.log").stat().st_mode & 0o777 == 0o600
    again = OutputStore(limits, tmp_path)
    restored = again.get(execution.id)
    assert restored.status == "completed" and restored.buffer.total_lines == 5000
    assert [line.text for line in restored.buffer.line_range(4999, 5000, 10, 1 << 20).lines] == ["4999", "5000"]
    assert search(restored, "^4321$").total_matches == 1


def test_temporary_store_cleans_up(tmp_path: Path) -> None:
    store = OutputStore(StoreLimits())
    filled(store, 10)
    directory = store.directory
    assert directory.exists() and oct(directory.stat().st_mode & 0o777) == "0o700"
    store.close()
    assert not directory.exists()


def naive_search(lines: list[str], needle: str, kept: set[int], context: int) -> tuple[int, list[tuple[int, str]]]:
    """What a search must find, from the plain list of lines: matches among the kept lines, with context."""
    hits = [n for n in sorted(kept) if needle.lower() in lines[n - 1].lower()]
    shown = {m for n in hits for m in range(n - context, n + context + 1) if m in kept}
    return len(hits), [(n, lines[n - 1]) for n in sorted(shown)]


@pytest.mark.parametrize("head_bytes", [300, 5000, 1 << 20])
@pytest.mark.parametrize("needle", ["99", "x9", "€9"])
def test_literal_searches_number_lines_like_a_plain_scan(tmp_path: Path, head_bytes: int, needle: str) -> None:
    # Lines of very different lengths, so matches fall on both sides of many 4 KiB index marks.
    lines = [("x" * (n % 7000) if n % 50 == 0 else "€" * (n % 3)) + str(n) for n in range(1, 4000)]
    store = OutputStore(StoreLimits(head_bytes=head_bytes, tail_bytes=20_000), tmp_path)
    execution = store.start("bash", "x", None)
    data = "".join(f"{line}\n" for line in lines).encode()
    for at in range(0, len(data), 3001):  # chunk seams inside lines and inside characters
        execution.buffer.feed("stdout", data[at : at + 3001])
    store.finish(execution, "completed", 0)
    buffer = execution.buffer
    dropped = buffer.dropped_range()
    kept = {n for n in range(1, len(lines) + 1) if dropped is None or not dropped[0] <= n <= dropped[1]}
    total, expected = naive_search(lines, needle, kept, context=1)
    result = search(execution, needle, context=1, max_lines=10_000)
    assert result.total_matches == total
    assert [(line.number, line.text) for line in result.matches] == expected
    store.close()


def test_the_head_line_index_survives_a_restart(tmp_path: Path) -> None:
    limits = StoreLimits(head_bytes=1 << 20)
    store = OutputStore(limits, tmp_path)
    execution = filled(store, 50_000, chunk=777)
    restored = OutputStore(limits, tmp_path).get(execution.id)
    for pattern in ("49999", "1234"):
        before, after = search(execution, pattern, max_lines=1000), search(restored, pattern, max_lines=1000)
        assert [(line.number, line.text) for line in after.matches] == [
            (line.number, line.text) for line in before.matches
        ]
        assert all(line.text == str(line.number) for line in after.matches)
    store.close()


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_literal_search_numbers_lines_whose_newline_sits_on_an_index_mark(tmp_path: Path, shift: int) -> None:
    # Every newline lands at (or one byte beside) a multiple of 4096, where the index has a mark.
    lines = ["a" * (4096 + shift - 1) + "9"] + ["b" * 4094 + "9" for _ in range(20)]
    store = OutputStore(StoreLimits(head_bytes=1 << 20), tmp_path)
    execution = store.start("bash", "x", None)
    execution.buffer.feed("stdout", "".join(f"{line}\n" for line in lines).encode())
    store.finish(execution, "completed", 0)
    result = search(execution, "9", max_lines=100)
    assert [line.number for line in result.matches] == list(range(1, 22))
    store.close()


def test_searching_while_the_command_still_writes(tmp_path: Path) -> None:
    import threading

    store = OutputStore(StoreLimits(head_bytes=1 << 20, tail_bytes=64 << 10), tmp_path)
    execution = store.start("bash", "seq", None)
    done = threading.Event()

    def write() -> None:
        for first in range(1, 200_000, 500):
            execution.buffer.feed("stdout", "".join(f"{n}\n" for n in range(first, first + 500)).encode())
        done.set()

    writer = threading.Thread(target=write)
    writer.start()
    totals = []
    while not done.is_set():
        result = search(execution, "77", max_lines=5)
        assert all(line.text == str(line.number) for line in result.matches)
        totals.append(result.total_matches)
    writer.join()
    assert totals  # searched at least once mid-write, every line numbered right (checked above)
    store.close()


def test_a_small_head_stays_in_memory_and_spills_to_its_file_past_the_threshold(tmp_path: Path) -> None:
    from secure_shell.output_head import HEAD_IN_MEMORY

    store = OutputStore(StoreLimits(head_bytes=1 << 20))  # a temporary store: nothing kept after a restart
    execution = store.start("bash", "seq", None)
    buffer = execution.buffer
    written = 0
    n = 0
    while written < HEAD_IN_MEMORY * 2:
        chunk = "".join(f"{n + i}\n" for i in range(1, 501)).encode()
        n += 500
        written += len(chunk)
        buffer.feed("stdout", chunk)
        on_disk = buffer.path.exists()
        assert on_disk == (written > HEAD_IN_MEMORY)
        last = buffer.line_range(-1, None, 1, 1 << 20).lines[0]
        assert (last.number, last.text) == (n, str(n))  # readable at every step, before and after
        assert [line.number for line in search(execution, f"^{n - 250}$", max_lines=5).matches] == [n - 250]
    store.finish(execution, "completed", 0)
    assert [line.text for line in buffer.line_range(1, 3, 10, 1 << 20).lines] == ["1", "2", "3"]
    small = store.start("bash", "echo", None)
    small.buffer.feed("stdout", b"hi\n")
    store.finish(small, "completed", 0)
    assert not small.buffer.path.exists()  # a temporary store never writes a small head
    assert [line.text for line in search(small, "hi").matches] == ["hi"]
    store.close()


def test_a_log_directory_writes_even_a_small_head_to_disk(tmp_path: Path) -> None:
    store = OutputStore(StoreLimits(), tmp_path)
    execution = store.start("bash", "echo", None)
    execution.buffer.feed("stdout", b"kept\n")
    store.finish(execution, "completed", 0)
    assert (tmp_path / f"{execution.id}.log").read_bytes() == b"kept\n"
    assert (tmp_path / f"{execution.id}.log").stat().st_mode & 0o777 == 0o600
    restored = OutputStore(StoreLimits(), tmp_path).get(execution.id)
    assert [line.text for line in restored.buffer.line_range(1, None, 10, 1 << 20).lines] == ["kept"]


def ids(store: OutputStore) -> set[str]:
    return {e.id for e in store.list()}


def test_an_execution_held_for_its_reply_outlives_the_count_cap(tmp_path: Path) -> None:
    """A command that had just finished used to be evicted before its reply was built."""
    store = OutputStore(StoreLimits(max_executions=2), tmp_path)
    mine = filled(store, 10, held=True)
    other = filled(store, 10)
    newer = filled(store, 10)  # room is made by evicting `other`, the oldest nobody holds
    assert ids(store) == {mine.id, newer.id} and other.id not in ids(store)
    assert [line.text for line in mine.buffer.line_range(-2, None, 10, 1 << 20).lines] == ["9", "10"]
    store.release(mine)
    filled(store, 10)
    assert mine.id not in ids(store) and not (tmp_path / f"{mine.id}.log").exists()
    store.close()


def test_a_store_full_of_running_and_held_executions_refuses_by_name(tmp_path: Path) -> None:
    store = OutputStore(StoreLimits(max_executions=2), tmp_path)
    running = store.start("bash", "sleep", None)
    held = filled(store, 10, held=True)
    with pytest.raises(
        StoreFull,
        match=r"maxStoredLogs 2\) and every command in it is still running \(1\) or being "
        r"read \(1\).*raise global.logging.maxStoredLogs",
    ):
        store.start("bash", "echo", None)
    assert ids(store) == {running.id, held.id}  # the refusal evicted nothing
    with store.reading(held.id) as read:  # a second reader of the same execution
        store.release(held)
        with pytest.raises(StoreFull):
            store.start("bash", "echo", None)
        assert read.buffer.total_lines == 10
    started = store.start("bash", "echo", None)
    assert ids(store) == {running.id, started.id}
    store.close()


def test_readers_never_see_their_execution_evicted_under_churn(tmp_path: Path) -> None:
    """Readers and a writer that starts and finishes commands as fast as it can, on a store with room
    for three: each reader holds the newest execution and reads its whole head back from disk."""
    import threading

    store = OutputStore(StoreLimits(max_executions=3, head_bytes=1 << 20), tmp_path)
    filled(store, 2000)
    stop = threading.Event()
    problems: list[str] = []
    reads = [0]
    refusals = [0]

    def write() -> None:
        for _ in range(150):
            try:
                filled(store, 2000)
            except StoreFull:
                refusals[0] += 1
        stop.set()

    def read() -> None:
        while not stop.is_set():
            newest = max(store.list(), key=lambda e: e.started).id
            try:
                with store.reading(newest) as execution:
                    for _ in range(3):
                        lines = execution.buffer.line_range(1, None, 5000, 1 << 20).lines
                        if [line.text for line in lines] != [str(n) for n in range(1, len(lines) + 1)]:
                            problems.append(f"{newest}: {len(lines)} lines, out of order")
                    reads[0] += 1
            except ExecutionNotFound:
                continue  # evicted before this reader held it: allowed
            except Exception as exc:  # whatever it is, it is the failure this test looks for
                problems.append(f"{newest}: {exc!r}")

    threads = [threading.Thread(target=write), *(threading.Thread(target=read) for _ in range(3))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert problems == []
    assert reads[0] > 0 and len(store.list()) <= 3
    store.close()


def test_the_age_cap_goes_by_when_each_execution_finished_not_when_it_started(tmp_path: Path) -> None:
    store = OutputStore(StoreLimits(retention_seconds=0.2), tmp_path)
    long_running = store.start("bash", "sleep", None)
    quick = filled(store, 10)
    time.sleep(0.3)
    store.finish(long_running, "completed", 0)  # started first, finished just now: young
    filled(store, 10)
    assert quick.id not in ids(store) and long_running.id in ids(store)
    store.close()


def test_the_count_cap_evicts_only_as_many_as_it_must_oldest_started_first(tmp_path: Path) -> None:
    store = OutputStore(StoreLimits(max_executions=4), tmp_path)
    running = store.start("bash", "sleep", None)
    done = [filled(store, 10) for _ in range(3)]
    assert ids(store) == {running.id, *(e.id for e in done)}
    newest = filled(store, 10)  # one over: the oldest finished goes, the running one stays
    assert ids(store) == {running.id, done[1].id, done[2].id, newest.id}
    store.finish(running, "completed", 0)
    last = filled(store, 10)  # now the first started, finished last, is the oldest candidate
    assert ids(store) == {done[1].id, done[2].id, newest.id, last.id}
    store.close()


def test_the_size_cap_counts_running_output_and_evicts_the_oldest_unheld_until_under_it(tmp_path: Path) -> None:
    size = len("".join(f"{n}\n" for n in range(1, 1001)))  # 3 893 bytes stored per filled(1000)
    store = OutputStore(StoreLimits(max_total_bytes=3 * size + 10), tmp_path)
    held = filled(store, 1000, held=True)
    older, old = filled(store, 1000), filled(store, 1000)
    assert ids(store) == {held.id, older.id, old.id}
    running = store.start("bash", "seq", None)
    running.buffer.feed("stdout", b"x" * size + b"\n")  # the running output counts toward the cap
    small = store.start("bash", "echo", None)  # over by less than one: `held` passed over, `older` goes
    assert ids(store) == {held.id, old.id, running.id, small.id}
    small.buffer.feed("stdout", b"y" * 20 + b"\n")
    store.finish(small, "completed", 0)  # over again by a few bytes: the next oldest unheld goes, no more
    assert ids(store) == {held.id, running.id, small.id}
    store.release(held)  # under the cap now: nothing to evict
    assert ids(store) == {held.id, running.id, small.id}
    store.close()
