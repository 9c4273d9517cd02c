"""The few CUDA driver virtual-memory types the VMM probes need, through
ctypes (the probes run where only PyTorch is installed: no CUDA Python
bindings). Layouts follow cuda.h (CUmemAllocationProp, CUmemAccessDesc)."""
import ctypes

cuda = ctypes.CDLL("libcuda.so.1")


class AllocProp(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int),
                ("loc_type", ctypes.c_int), ("loc_id", ctypes.c_int),
                ("win32HandleMetaData", ctypes.c_void_p),
                ("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class AccessDesc(ctypes.Structure):
    _fields_ = [("loc_type", ctypes.c_int), ("loc_id", ctypes.c_int), ("flags", ctypes.c_int)]


def check(r, what):
    if r != 0:
        raise RuntimeError(f"{what} failed: CUresult {r}")


def emit(result, out):
    """Prints a probe's result as JSON and writes it to `out` when given."""
    import json
    print(json.dumps(result, indent=1))
    if out:
        with open(out, "w") as f:
            json.dump(result, f, indent=1)
