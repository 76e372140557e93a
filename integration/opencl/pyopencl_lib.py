"""pyopencl's own library kernels (Debian's python3-pyopencl): arrays, elementwise, reduction,
scan and random numbers, on every GPU device of the first platform that has one. Not its radix
sort: pyopencl discovers the layout of the sort's struct by running a kernel and reading back
offsetof() results, which under SoftGPU are whatever the buffer held ("offsetof() past sizeof()
... Refusing to discover struct layout").

Run under the shim by tests/opencl.rs. Kernels never run there: nothing read back is checked.
Prints "sg: devices=N", "sg: step=NAME device=D" before each step and "sg: done=1".
"""
import sys
import warnings

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.clrandom as clrandom
from pyopencl.elementwise import ElementwiseKernel
from pyopencl.reduction import ReductionKernel
from pyopencl.scan import InclusiveScanKernel


def main():
    # pytools warns each time pyopencl regenerates an invoker of the same name; noise here.
    warnings.simplefilter("ignore")
    platform = next(p for p in cl.get_platforms() if p.get_devices(cl.device_type.GPU))
    devices = platform.get_devices(cl.device_type.GPU)
    print(f"sg: devices={len(devices)}", flush=True)
    ctx = cl.Context(devices)
    for d, dev in enumerate(devices):
        q = cl.CommandQueue(ctx, dev)

        def step(name):
            print(f"sg: step={name} device={d}", flush=True)

        n = 4096
        step("arrays")
        a = cla.to_device(q, np.arange(n, dtype=np.float32))
        b = cla.to_device(q, np.ones(n, dtype=np.float32))
        c = 2 * a + b
        step("elementwise")
        lin = ElementwiseKernel(ctx, "float k, float *x, float *y, float *z",
                                "z[i] = k * x[i] + y[i]", "saxpy")
        lin(np.float32(3.0), a, b, c)
        step("reduction")
        dot = ReductionKernel(ctx, np.float32, neutral="0", reduce_expr="a+b",
                              map_expr="x[i]*y[i]", arguments="const float *x, const float *y")
        dot(a, b).get()
        step("scan")
        InclusiveScanKernel(ctx, np.int32, "a+b", neutral="0")(cla.to_device(q, np.ones(n, dtype=np.int32)))
        step("random")
        clrandom.rand(q, (n,), np.float32)
        q.finish()
    print("sg: done=1", flush=True)


if __name__ == "__main__":
    sys.exit(main())
