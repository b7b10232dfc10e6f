"""Hold GPU memory through the CUDA driver API alone (ctypes, no framework),
so that a process starts and ends in a fraction of a second: the device
check's jobs of several processes one after another, or side by side.
Each phase frees the one before it and holds its own amount.

    python3 hold.py --gib 30 --seconds 1.5
    python3 hold.py --phases 1:1.2,30:0.15   # 1 GiB for 1.2 s, then 30 GiB for 0.15 s
"""
import argparse
import ctypes
import os
import sys
import time


def check(r, what):
    if r != 0:
        sys.exit(f"hold.py: {what} failed with CUDA error {r}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gib", type=float)
    p.add_argument("--seconds", type=float)
    p.add_argument("--phases", help="GIB:SECONDS,... held one after another")
    a = p.parse_args()
    if a.phases:
        phases = [tuple(float(x) for x in ph.split(":")) for ph in a.phases.split(",")]
    elif a.gib is not None and a.seconds is not None:
        phases = [(a.gib, a.seconds)]
    else:
        sys.exit("hold.py: give --gib and --seconds, or --phases GIB:SECONDS,...")
    cuda = ctypes.CDLL("libcuda.so.1")
    check(cuda.cuInit(0), "cuInit")
    dev, ctx, ptr = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
    check(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    for gib, seconds in phases:
        if ptr.value:
            check(cuda.cuMemFree_v2(ptr), "cuMemFree")
        n = int(gib * (1 << 30))
        t0 = time.time()
        check(cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(n)), "cuMemAlloc")
        check(cuda.cuMemsetD8_v2(ptr, ctypes.c_ubyte(1), ctypes.c_size_t(n)), "cuMemsetD8")
        check(cuda.cuCtxSynchronize(), "cuCtxSynchronize")
        time.sleep(seconds)
        print(f"pid {os.getpid()} held {gib:g} GiB from {t0:.3f} to {time.time():.3f}", flush=True)


if __name__ == "__main__":
    main()
