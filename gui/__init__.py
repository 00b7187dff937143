"""ArmDyn's Qt GUI. Importing the package does not import Qt (`armdyn inverse ...` and
`armdyn simulate ...` run without it)."""
