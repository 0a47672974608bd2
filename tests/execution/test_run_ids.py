"""Run ids: random (from the OS's generator, read in blocks), unique, and never repeated by a forked child."""

import concurrent.futures
import os
import re
import sys

import pytest

from tether.execution import Run


def test_run_ids_are_unique_32_hex_digits_across_many_blocks() -> None:
    ids = [Run().id for _ in range(1000)]  # 16 KB of randomness: four blocks
    assert len(set(ids)) == 1000
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)


@pytest.mark.skipif(sys.platform == "win32", reason="os.fork is POSIX only")
def test_a_forked_child_does_not_repeat_its_parent_s_next_ids() -> None:
    Run()  # the block is read: without a fresh start the child would hand out the parent's next ids
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next ids, to the parent, then out without running the parent's teardown
        os.write(write, " ".join(Run().id for _ in range(3)).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    child = os.read(read, 4096).decode().split()
    os.close(read)
    parent = [Run().id for _ in range(3)]
    assert len(child) == 3
    assert not set(child) & set(parent)


def test_run_ids_made_by_many_threads_at_once_are_unique() -> None:
    # no lock: each id has its own number of a counter, and a block read twice gives each reader its own bytes
    def ids_of_one_thread(_: int) -> list[str]:
        return [Run().id for _ in range(2000)]

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        batches = list(pool.map(ids_of_one_thread, range(8)))
    ids = [i for batch in batches for i in batch]
    assert len(set(ids)) == len(ids) == 16_000
