"""Python helpers that more than one script uses: the CPU time of processes, the cluster's nginx configuration."""
