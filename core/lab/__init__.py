"""The teaching lab's computations: the recursion walkthrough, DH rows one at a
time, operation counts, the complexity sweep, suspicious-model checks.
Built on `algorithms` and `sim`."""
