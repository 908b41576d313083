"""`bench`: how fast cuDNN runs here, against plain CUDA, the CPU, the GPU's datasheet peak and torch."""
