// quire-bench: the core's benchmarks (see `make bench`).
print("usage: quire-bench diff")
