"""The lab runner: find labs, build, verify, benchmark, and compare CUDA with HIP counterparts."""
