"""The cluster test's scenarios, a module each, and the harness they share (run by scripts/test/cluster-test)."""
