"""Stage 2, scoring: every implementation on every mask pair, the edge-case probe, HD timing
and the grid check. Reads the dataset stage's files; knows nothing of the analysis."""
