"""Fixes for what launchers and serving stacks say of the GPU they were given: a compiler or data type that needs a
newer GPU, a distributed backend the build lacks, a collective that timed out, GPUs without peer access, memory
another process holds, a kernel module the kernel refused. Each says the switch the program itself offers."""
from __future__ import annotations

from typing import Optional

from ..model import Fix
from .acting import doctor, set_variable
from .shell import advice, run, said


def compile_off_fix(need: str) -> Fix:
    """Triton (torch.compile's inductor backend) needs a newer GPU: PyTorch's own switch turns torch.compile off
    (TORCH_COMPILE_DISABLE, torch/_dynamo/config.py), or a backend that does not compile with Triton."""
    line = set_variable("TORCH_COMPILE_DISABLE", "1")
    return said("run the model without torch.compile: `%s` (PyTorch's own switch; or torch.compile(model, "
                "backend=\"aot_eager\"), which does not compile with Triton), or run it on a GPU of compute "
                "capability %s or newer" % ("%s", need), line)


def half_precision_fix(vllm: bool) -> Fix:
    """bfloat16 asked of a GPU older than it: float16 (vLLM's own flag, which its message names), or float32."""
    if vllm:
        return advice("start vLLM with --dtype=half (float16; LLM(..., dtype=\"half\") in Python), which this GPU "
                      "runs; or run it on a GPU of compute capability 8.0 or newer")
    return advice("load and run the model in float16 or float32 instead of bfloat16 (torch_dtype=torch.float16, "
                  "dtype=\"float16\", or --dtype=half where the program has it); "
                  "torch.cuda.is_bf16_supported(including_emulation=False) (PyTorch 2.4 on) says whether a GPU runs "
                  "bfloat16 natively")


def gloo_backend_fix(linux: bool) -> Fix:
    """PyTorch without NCCL: on Linux most often its CPU-only build, so its CUDA build first (`cudnn-doctor pick` says
    which this machine runs); on Windows and macOS, whose builds have none, the gloo backend every build has."""
    gloo = ("use the gloo backend, which every PyTorch build has: torch.distributed.init_process_group("
            "backend=\"gloo\") (PyTorch Lightning: Trainer(strategy=DDPStrategy(process_group_backend=\"gloo\")))")
    if linux:
        return said("install PyTorch's CUDA build, which has NCCL (`%s` names the build this machine runs; "
                    "torch.version.cuda is None in a CPU-only one), or %s" % ("%s", gloo), doctor("pick"))
    return advice("%s; NCCL is in PyTorch's CUDA builds for Linux only, so multi-GPU training with NCCL needs Linux or "
                  "WSL 2" % gloo)


def collective_timeout_fix() -> Fix:
    """A collective that timed out: find the rank that did not join before raising the timeout."""
    return said("rerun with `%s` and TORCH_DISTRIBUTED_DEBUG=DETAIL to see which rank did not join the collective "
                "(one that crashed, hung in data loading or saving, or cannot reach the others); where a step is "
                "legitimately longer, raise the timeout: init_process_group(..., timeout=datetime.timedelta(minutes="
                "60)); on GeForce cards or in virtual machines without peer access, NCCL_P2P_DISABLE=1",
                set_variable("NCCL_DEBUG", "INFO"))


def peer_access_fix(vllm: bool) -> Fix:
    """GPUs that cannot reach each other's memory: NCCL (and vLLM's own all-reduce) told to go through the host."""
    line = set_variable("NCCL_P2P_DISABLE", "1")
    return said("`%s` (NCCL then copies through host memory)%s; where the GPUs should have peer access (data-centre "
                "GPUs on one PCIe switch or NVLink), `%s` shows what the machine allows, and a virtual machine needs "
                "the GPUs passed through with ACS off" % (
                    "%s", ", and start vLLM with --disable-custom-all-reduce" if vllm else "", "%s"), line,
                "nvidia-smi topo -p2p r")


def memory_share_fix(share: Optional[str]) -> Fix:
    """vLLM reserves a share of the GPU's memory that is not free: free the GPU, or ask for a share that is (where a
    useful one is: under a tenth, only freeing the GPU helps)."""
    if share is None:
        return said("free the GPU: `%s` lists the processes holding its memory", "nvidia-smi")
    return said("free the GPU (`%s` lists the processes holding its memory) or start vLLM with a share that is "
                "free: --gpu-memory-utilization %s" % ("%s", share), "nvidia-smi")


def kernel_module_refused_fix() -> Fix:
    """The driver's installer built nvidia.ko and the kernel refused it: dmesg says why, each cause its own fix."""
    return run("sudo dmesg | grep -i -E 'nvidia|nouveau|lockdown|secure boot'",
               text="`sudo dmesg | grep -i -E 'nvidia|nouveau|lockdown|secure boot'` says which: 'Key was rejected "
                    "by service' or 'Lockdown': Secure Boot, so enrol the key DKMS signs the module with (MOK "
                    "enrolment) or disable Secure Boot; nouveau holding the GPU: blacklist nouveau, rebuild the "
                    "initramfs and reboot; 'NVRM: ... not supported': install the driver branch for this GPU")


def gpu_off_the_bus_fix(bus_id: Optional[str]) -> Fix:
    """Xid 79: the GPU stopped answering on PCIe; software cannot bring it back without a reset (of that GPU: the
    bus id the kernel's line names, never another GPU's index)."""
    reset = "sudo nvidia-smi --gpu-reset -i %s" % (bus_id or "<its bus id>")
    return said("reboot the machine (or reset that GPU: `%s`, with nothing using it); if it happens again, it is the "
                "hardware's side: check the GPU's power cables and the power supply, temperatures (`%s`), reseat the "
                "card, update the system BIOS, and report it to the vendor", reset, "nvidia-smi -q -d TEMPERATURE") \
        if bus_id else advice("reboot the machine (or reset that GPU with nvidia-smi --gpu-reset -i and "
                              "the bus id the kernel's NVRM line names, with nothing using it); if it happens again, "
                              "check the GPU's power cables and supply, temperatures, reseat the card, update the "
                              "system BIOS, and report it to the vendor")


def device_plugin_fix() -> Fix:
    """Kubernetes finds no node with a free nvidia.com/gpu: the device plugin's view first."""
    return said("see what the GPU node advertises: `%s` (Capacity and Allocatable nvidia.com/gpu); none there: the "
                "NVIDIA device plugin is not running on it or finds no GPU (its pod's logs say which; `%s` finds it, "
                "wherever Helm or the GPU Operator put it), usually because the node's container runtime does not run "
                "it with the NVIDIA runtime (make it the default on the node: `%s`, then `%s`; or runtimeClassName: "
                "nvidia); all taken: free a GPU or ask for fewer",
                "kubectl describe nodes | grep -A8 -i 'nvidia.com/gpu'", "kubectl get pods -A | grep -i device-plugin",
                "sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default",
                "sudo systemctl restart containerd")


def nvml_permission_fix() -> Fix:
    """NVML said no for lack of permission: root for settings; a MIG instance's own handle for its queries."""
    return advice("run it as root where it changes a setting (clocks, power limit, persistence, ECC); on a GPU split "
                  "into MIG instances a process sees only its own instance, so query that instance "
                  "(pynvml.nvmlDeviceGetMigDeviceHandleByIndex(gpu, 0)) or ask nvidia-smi on the host; a program "
                  "that reads whole-GPU memory there needs a release that knows MIG")


def mpi_world_fix() -> Fix:
    """TensorRT-LLM's engine asks for tp * pp ranks: started with that many MPI processes."""
    return advice("start it with as many MPI processes as the engine was built for, tensor parallel times pipeline "
                  "parallel: mpirun -n with tp*pp before the program (Triton's launch_triton_server.py: --world_size "
                  "tp*pp), or rebuild the engine for the GPUs you start it on")


def cpu_instructions_fix() -> Fix:
    """SIGILL: a build for a CPU with more instruction sets than this one."""
    return run("grep -o -w -E 'avx|avx2|avx512f|fma' /proc/cpuinfo | sort -u",
               text="`grep -o -w -E 'avx|avx2|avx512f|fma' /proc/cpuinfo | sort -u` lists what this CPU has: use a "
                    "build of the program for it (an image or wheel without AVX-512 or AVX2, or one built here from "
                    "source), or a virtual machine that passes the host's CPU flags through (host CPU model)")


def trt_parser_op_fix() -> Fix:
    """An ONNX op TensorRT's parser does not import: a TensorRT that does, the op rewritten, or a plugin for it."""
    return advice("install a newer TensorRT whose ONNX parser imports the op (its release notes' supported-operators "
                  "list), or export the model without it (another opset, or the op rewritten with supported ones, "
                  "e.g. onnx-graphsurgeon), or write a TensorRT plugin of that name and load it before parsing")


def trt_workspace_fix() -> Fix:
    """No tactic for a layer: a larger builder workspace, else a newer TensorRT."""
    return advice("give the builder more workspace: trtexec --memPoolSize=workspace:8192 (MiB; older releases "
                  "--workspace=8192), or config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 8 << 30) in "
                  "Python; where no workspace helps, the layer needs a newer TensorRT release on this GPU")


def vgpu_licence_fix() -> Fix:
    """An unlicensed vGPU guest: the licence client configured and its service restarted."""
    return said("license the guest: copy the client configuration token from the NVIDIA License System into "
                "/etc/nvidia/ClientConfigToken/, set FeatureType=1 in /etc/nvidia/gridd.conf, then `%s`; "
                "`%s` shows the status (Kubernetes: the GPU Operator's licensingConfig)",
                "sudo systemctl restart nvidia-gridd", "nvidia-smi -q | grep -i -A2 license")


def singularity_nv_fix() -> Fix:
    """--nv found no driver libraries here: a GPU node's driver, or nvidia-container-cli to find them."""
    return advice("run it on a node with the NVIDIA driver installed (nvidia-smi works there; login nodes often "
                  "have none), or let nvidia-container-cli find the libraries: `--nvccli` instead of `--nv`")


def slurm_gres_fix(mig: bool) -> Fix:
    """Slurm's NVML detection: MIG instances to describe, or a slurmd built with NVML."""
    if mig:
        return said("create the MIG instances Slurm should schedule (nvidia-smi's mig subcommand, -cgi with their "
                    "profiles and -C, as root), or disable MIG mode (`%s`, then reset the GPU), or drop AutoDetect=nvml "
                    "from gres.conf and list the GPUs by hand; then restart slurmd", "sudo nvidia-smi -mig 0")
    return advice("build slurmd with NVML (configure --with-nvml=<CUDA folder with nvml.h and libnvidia-ml>, or the "
                  "distribution's slurm package built with it), or drop AutoDetect=nvml from gres.conf and list the "
                  "GPUs by hand (Name=gpu File=/dev/nvidia0 ...); then restart slurmd")


def cudagraph_outputs_fix() -> Fix:
    """An output of a CUDA-graph replay kept past the next one: cloned, or a step marked."""
    return advice("clone the outputs you keep past the next call (out = model(x).clone()), or call "
                  "torch.compiler.cudagraph_mark_step_begin() before each step; or compile without "
                  "mode=\"reduce-overhead\", which is what uses CUDA graphs")


def dkms_build_fix() -> Fix:
    """DKMS could not build the module: make.log names why; headers and compiler of the running kernel."""
    return run("sudo apt install linux-headers-$(uname -r)", "sudo dkms autoinstall",
               alternatives=["sudo dnf install kernel-devel-$(uname -r)"],
               text="read why in /var/lib/dkms/<module>/<version>/build/make.log; most often the running kernel's "
                    "headers are missing (`sudo apt install linux-headers-$(uname -r)`; Fedora/RHEL: `sudo dnf "
                    "install kernel-devel-$(uname -r)`) or the compiler differs from the kernel's (install the gcc "
                    "release the kernel was built with, or use the distribution's own kernel); a kernel newer than "
                    "the driver branch supports needs a newer driver; then `sudo dkms autoinstall` and reboot")


def fabric_manager_off_fix() -> Fix:
    """Fabric Manager on a machine without NVSwitch: its service off."""
    return run("sudo systemctl disable --now nvidia-fabricmanager",
               text="turn its service off: `sudo systemctl disable --now nvidia-fabricmanager` (only NVSwitch systems, "
                    "HGX and DGX, need it; an NVLink bridge between two cards does not)")


def cooling_fix() -> Fix:
    """A GPU throttling for heat: its cooling."""
    return run("nvidia-smi -q -d TEMPERATURE,PERFORMANCE",
               text="check the cooling: `nvidia-smi -q -d TEMPERATURE,PERFORMANCE` shows its temperature and why the "
                    "clocks drop; see that its fans spin (or, for a passive card, that the chassis moves enough air "
                    "through it), nothing blocks the airflow, and the room is cool enough; a card that still runs hot "
                    "needs its thermal material renewed by the vendor")


def nccl_ib_fix() -> Fix:
    """NCCL's IB/RoCE connection: NCCL's own report of the network, then the usual settings."""
    return said("rerun with `%s` and NCCL_DEBUG_SUBSYS=INIT,NET to see which device and GID it uses; on RoCE set "
                "NCCL_IB_GID_INDEX to the RoCE v2 GID (show_gids lists them; often 3), pick the right ports with "
                "NCCL_IB_HCA and the interface with NCCL_SOCKET_IFNAME; see that the nodes reach each other there (no "
                "firewall between them); try NCCL_NET_GDR_LEVEL=0 to leave GPUDirect RDMA out, and NCCL_IB_DISABLE=1 "
                "to see whether TCP works at all", set_variable("NCCL_DEBUG", "INFO"))


def mig_device_fix() -> Fix:
    """A process sees one MIG instance: the one it should use named."""
    return run("nvidia-smi -L",
               text="on a GPU split into MIG instances each process sees one: list them with `nvidia-smi -L` and set "
                    "CUDA_VISIBLE_DEVICES to one instance's MIG-... UUID per process, using device 0 in it; without "
                    "MIG, use an index below the number of GPUs (torch.cuda.device_count())")
