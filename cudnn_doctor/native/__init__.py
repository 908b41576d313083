"""Native calls (dlopen, NVML), always in a child process with a time limit. Imports nothing of cudnn_doctor."""
