"""The study: data sets, scoring, analysis and the workflow's pipeline.

Importing it puts Arrow, which reads and writes every parquet record of the workflow, on the
system allocator (`ARROW_DEFAULT_MEMORY_POOL`, unless the caller set it). With pyarrow's
default (mimalloc in its wheels) a process that has read parquet aborts now and then at exit
("terminate called without an active exception", SIGABRT, after its work is done; apache/arrow
issues 34314 and 39862, open), which fails a Snakemake job whose output was written. Reading
the 189 score files of a 2D run in a fresh process, measured here: 9 aborts in 1,260 runs on
the default allocator, none in 1,200 on the system one. Arrow reads the variable when pyarrow
loads (pandas loads it on import), so this holds for every script and command that imports
the study before pandas, as the workflow's scripts do (tests/test_arrow_allocator.py).
"""

import os

os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
