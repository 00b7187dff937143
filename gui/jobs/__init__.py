"""Background work: computations in worker threads, cancelled promptly."""
