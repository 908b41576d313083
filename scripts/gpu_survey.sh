#!/usr/bin/env bash
# Survey of a GPU machine's NVIDIA stack, run through the device tool; raw material for tests and fixtures.
set -u
out=${OUT:-/tmp/gpu-survey}; mkdir -p "$out"
{
echo "== nvidia-smi"; nvidia-smi --query-gpu=index,name,uuid,compute_cap,memory.total,driver_version --format=csv
nvidia-smi | head -5
echo "== proc version"; cat /proc/driver/nvidia/version; cat /proc/sys/kernel/osrelease
echo "== ld.so.conf.d"; ls -la /etc/ld.so.conf.d; head -50 /etc/ld.so.conf.d/*
echo "== driver libs"; ldconfig -p | grep -E 'libcuda\.|libnvidia-ml|libcudnn|libcudart' 
echo "== cudnn system"; ls -la /usr/lib/x86_64-linux-gnu/libcudnn* 2>&1 | head -60
ls -la /usr/include/x86_64-linux-gnu/cudnn* /usr/include/cudnn* 2>&1 | head -40
echo "== cuda"; ls -la /usr/local/ | grep -i cuda; ls -la /usr/local/cuda/ /usr/local/cuda/lib64 2>&1 | head -40
ls /usr/local/cuda/targets/*/lib | head -80
echo "== alternatives"; ls -la /etc/alternatives | grep -iE 'cuda|cudnn'
echo "== dpkg"; dpkg -l | grep -iE 'cudnn|cuda-(cudart|toolkit|compat|runtime|libraries)|nvidia' | head -60
ls /var/lib/dpkg/info | grep -i cudnn
echo "== pip"; which python3; python3 -c 'import sys; print(sys.path)'
ls /opt; ls /opt/torch/.venv/lib/python3.12/site-packages/nvidia/ 2>&1; ls -la /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib 2>&1 | head -60
ls /opt/torch/.venv/lib/python3.12/site-packages | grep -iE 'dist-info' | grep -iE 'nvidia|torch|jax|cupy|onnx|tensorflow' 
cat /opt/torch/.venv/lib/python3.12/site-packages/torch/version.py
grep -i '^Requires-Dist: nvidia' /opt/torch/.venv/lib/python3.12/site-packages/torch-*.dist-info/METADATA
echo "== readelf torch"; readelf -d /opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so | grep -E 'NEEDED|RUNPATH|RPATH'
readelf -d /opt/torch/.venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so 2>&1 | grep -E 'NEEDED|RUNPATH|RPATH' | head
ls /opt/torch/.venv/lib/python3.12/site-packages/jax_plugins/ 2>&1
echo "== torch cudnn"; LD_DEBUG=libs python3 -c 'import torch; print(torch.backends.cudnn.version())' 2>&1 | grep -E 'libcudnn(_graph)?\.so\.9' | grep -i 'calling init' | head
echo "== onnxruntime"; ls /opt/torch/.venv/lib/python3.12/site-packages/onnxruntime/capi/ 2>&1 | head
echo "== versions"; python3 -m pip list 2>/dev/null | grep -iE 'typer|rich|requests|packaging|nvidia-ml-py|pytest|click|setuptools'
echo "== nvcc"; nvcc --version; which nvcc
echo "== cudnn check"; PYTHONPATH=. python3 -m cudnn_doctor check -v; echo "exit=$?"
PYTHONPATH=. python3 -m cudnn_doctor check --json > "$out/check.json"; echo "exit=$?"
for i in 1 2 3; do /usr/bin/time -f "check wall %e s" env PYTHONPATH=. python3 -m cudnn_doctor check --json >/dev/null; done
} 2>&1 | tee "$out/survey.txt"
