"""The benchmark families of scripts/bench.py, a module each, and what they share (common, lists)."""
