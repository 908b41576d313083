"""`bench`: times cuDNN against plain CUDA, the CPU, the peak and torch. Imports the core and below, never commands."""
