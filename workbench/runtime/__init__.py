"""What the process runs with, below every layer: derived arrays written atomically and read
without pickle (:mod:`.array_file`), the garbage collector paused for bulk builds
(:mod:`.gc_paused`), the cores a step may use (:mod:`.cores`), and the stages a progress line
counts (:mod:`.progress`).
"""
