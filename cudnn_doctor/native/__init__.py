"""Native calls (dlopen of vendor libraries, NVML), always made in a child process."""
