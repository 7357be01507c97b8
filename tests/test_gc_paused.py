"""The cyclic collector around bulk builds: paused, what the build keeps promoted, and skipped at exit."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

from workbench.runtime.gc_paused import gc_paused


def test_what_a_paused_block_keeps_goes_to_the_oldest_generation_unexamined():
    with gc_paused():
        kept = [[i] for i in range(1000)]
        assert not gc.isenabled()
    assert gc.isenabled()
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(kept) in oldest and all(id(row) in oldest for row in kept[:10])
    assert not any(o is kept for o in gc.get_objects(generation=0))


def test_a_block_inside_a_disabled_collector_leaves_it_disabled():
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


EXIT = textwrap.dedent("""
    import sys
    from workbench.runtime.gc_paused import skip_exit_collection

    class Cycle:
        def __del__(self):
            print("collected at exit", flush=True)

    held = Cycle()
    held.self = held
    if sys.argv[1] == "skip":
        skip_exit_collection()
        skip_exit_collection()  # registered once
""")


def test_a_process_that_skips_the_exit_collection_leaves_its_cycles_to_the_system():
    def run(mode: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", EXIT, mode], capture_output=True, text=True, timeout=60)

    walked, skipped = run("walk"), run("skip")
    assert walked.returncode == skipped.returncode == 0, walked.stderr + skipped.stderr
    assert "collected at exit" in walked.stdout  # the interpreter's own exit collection found it
    assert skipped.stdout == ""
