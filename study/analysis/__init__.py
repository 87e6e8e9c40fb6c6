"""Stage 3, analysis: Δ statistics, Wilcoxon tests, the paper's tables and figures and the
generated findings, from the scoring stage's records. Runs no tool."""
