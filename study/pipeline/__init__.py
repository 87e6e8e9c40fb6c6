"""The pipeline: the validated configuration, the layout of every file, and the plans the
Snakemake rules are built from. The only part of `study` that knows the stages together."""
