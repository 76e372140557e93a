/*
 * An OpenCL program of our own, run under the shim by tests/opencl.rs through ROCm's OpenCL
 * runtime (Debian's rocm-opencl-icd, behind the ocl-icd loader).
 *
 * On every GPU device of the first platform that has one, in one context over all of them, it
 * builds one program from source and enqueues three kernels on the device's own queue:
 *   vadd    (global const float *a, global const float *b, global float *c, uint n)
 *           over 1024 work-items in groups of 64
 *   scale   (global float *x, local float *tile, float factor, int4 shift)
 *           over 256 work-items in groups of 128, with 512 bytes of local memory set through
 *           clSetKernelArg(size, NULL), and a global work offset of 32
 *   fill2d  (global int *out, int width, int value)
 *           over 16 x 8 work-items in groups of 8 x 4
 * then a fourth with an offset pointer: vadd on sub-buffers of a, b and c (origin 256 floats).
 *
 * Kernels never run under SoftGPU: the program does not check what it reads back; it prints
 * what it enqueued, one line each, for the test to compare with the capture:
 *   sg: device=D name=NAME
 *   sg: enqueue device=D kernel=K grid=X,Y,Z block=X,Y,Z status=S
 *   sg: done=1
 */
#define CL_TARGET_OPENCL_VERSION 200
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *SOURCE =
    "kernel void vadd(global const float *a, global const float *b, global float *c, uint n) {\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
    "}\n"
    "kernel void scale(global float *x, local float *tile, float factor, int4 shift) {\n"
    "    size_t l = get_local_id(0);\n"
    "    tile[l] = x[get_global_id(0)] * factor + (float)shift.y;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    x[get_global_id(0)] = tile[get_local_size(0) - 1 - l];\n"
    "}\n"
    "kernel void fill2d(global int *out, int width, int value) {\n"
    "    out[get_global_id(1) * width + get_global_id(0)] = value;\n"
    "}\n";

#define N 1024

#define CHECK(what, call)                                                                    \
    do {                                                                                     \
        cl_int e_ = (call);                                                                  \
        if (e_ != CL_SUCCESS) {                                                              \
            fprintf(stderr, "sg: error %s: %d\n", what, (int)e_);                            \
            return 1;                                                                        \
        }                                                                                    \
    } while (0)

static int enqueue(cl_command_queue q, cl_kernel k, unsigned dev, const char *name, cl_uint dims,
                   const size_t *offset, const size_t *global, const size_t *local) {
    cl_int e = clEnqueueNDRangeKernel(q, k, dims, offset, global, local, 0, NULL, NULL);
    size_t g[3] = {1, 1, 1}, l[3] = {1, 1, 1};
    for (cl_uint i = 0; i < dims; i++) {
        g[i] = global[i];
        l[i] = local[i];
    }
    printf("sg: enqueue device=%u kernel=%s grid=%zu,%zu,%zu block=%zu,%zu,%zu status=%d\n", dev,
           name, g[0], g[1], g[2], l[0], l[1], l[2], (int)e);
    fflush(stdout);
    return e == CL_SUCCESS ? 0 : 1;
}

int main(void) {
    cl_uint nplat = 0;
    CHECK("clGetPlatformIDs", clGetPlatformIDs(0, NULL, &nplat));
    cl_platform_id plats[8];
    if (nplat > 8) nplat = 8;
    CHECK("clGetPlatformIDs", clGetPlatformIDs(nplat, plats, NULL));
    cl_platform_id plat = NULL;
    cl_uint ndev = 0;
    for (cl_uint p = 0; p < nplat && !ndev; p++) {
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_GPU, 0, NULL, &ndev) == CL_SUCCESS && ndev)
            plat = plats[p];
    }
    if (!ndev) {
        fprintf(stderr, "sg: error: no OpenCL GPU device\n");
        return 1;
    }
    cl_device_id devs[8];
    if (ndev > 8) ndev = 8;
    CHECK("clGetDeviceIDs", clGetDeviceIDs(plat, CL_DEVICE_TYPE_GPU, ndev, devs, NULL));
    printf("sg: devices=%u\n", ndev);
    for (cl_uint d = 0; d < ndev; d++) {
        char name[256] = {0};
        CHECK("clGetDeviceInfo", clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof name - 1, name,
                                                 NULL));
        printf("sg: device=%u name=%s\n", d, name);
    }
    cl_int e = CL_SUCCESS;
    cl_context ctx = clCreateContext(NULL, ndev, devs, NULL, NULL, &e);
    CHECK("clCreateContext", e);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &SOURCE, NULL, &e);
    CHECK("clCreateProgramWithSource", e);
    e = clBuildProgram(prog, ndev, devs, "", NULL, NULL);
    if (e != CL_SUCCESS) {
        char log[4096] = {0};
        clGetProgramBuildInfo(prog, devs[0], CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "sg: error clBuildProgram: %d\n%s\n", (int)e, log);
        return 1;
    }
    printf("sg: built\n");
    fflush(stdout);

    static float host_a[N], host_b[N], host_c[N];
    for (int i = 0; i < N; i++) {
        host_a[i] = (float)i;
        host_b[i] = 2.0f * (float)i;
    }
    for (cl_uint d = 0; d < ndev; d++) {
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, devs[d], NULL, &e);
        CHECK("clCreateCommandQueueWithProperties", e);
        cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof host_a,
                                  host_a, &e);
        CHECK("clCreateBuffer a", e);
        cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_ONLY, sizeof host_b, NULL, &e);
        CHECK("clCreateBuffer b", e);
        cl_mem c = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host_c, NULL, &e);
        CHECK("clCreateBuffer c", e);
        CHECK("clEnqueueWriteBuffer",
              clEnqueueWriteBuffer(q, b, CL_TRUE, 0, sizeof host_b, host_b, 0, NULL, NULL));

        cl_kernel vadd = clCreateKernel(prog, "vadd", &e);
        CHECK("clCreateKernel vadd", e);
        cl_uint n = N;
        CHECK("arg", clSetKernelArg(vadd, 0, sizeof a, &a));
        CHECK("arg", clSetKernelArg(vadd, 1, sizeof b, &b));
        CHECK("arg", clSetKernelArg(vadd, 2, sizeof c, &c));
        CHECK("arg", clSetKernelArg(vadd, 3, sizeof n, &n));
        size_t g1[1] = {N}, l1[1] = {64};
        if (enqueue(q, vadd, d, "vadd", 1, NULL, g1, l1)) return 1;

        cl_kernel scale = clCreateKernel(prog, "scale", &e);
        CHECK("clCreateKernel scale", e);
        float factor = 2.5f;
        cl_int4 shift = {{1, -2, 3, -4}};
        CHECK("arg", clSetKernelArg(scale, 0, sizeof c, &c));
        CHECK("arg", clSetKernelArg(scale, 1, 128 * sizeof(float), NULL));
        CHECK("arg", clSetKernelArg(scale, 2, sizeof factor, &factor));
        CHECK("arg", clSetKernelArg(scale, 3, sizeof shift, &shift));
        size_t o2[1] = {32}, g2[1] = {256}, l2[1] = {128};
        if (enqueue(q, scale, d, "scale", 1, o2, g2, l2)) return 1;

        cl_kernel fill = clCreateKernel(prog, "fill2d", &e);
        CHECK("clCreateKernel fill2d", e);
        cl_int width = 16, value = 7;
        CHECK("arg", clSetKernelArg(fill, 0, sizeof c, &c));
        CHECK("arg", clSetKernelArg(fill, 1, sizeof width, &width));
        CHECK("arg", clSetKernelArg(fill, 2, sizeof value, &value));
        size_t g3[2] = {16, 8}, l3[2] = {8, 4};
        if (enqueue(q, fill, d, "fill2d", 2, NULL, g3, l3)) return 1;

        /* Sub-buffers: pointers 1 KiB into the parents. */
        cl_buffer_region region = {256 * sizeof(float), 256 * sizeof(float)};
        cl_mem sa = clCreateSubBuffer(a, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &e);
        CHECK("clCreateSubBuffer a", e);
        cl_mem sb = clCreateSubBuffer(b, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &e);
        CHECK("clCreateSubBuffer b", e);
        cl_mem sc = clCreateSubBuffer(c, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &e);
        CHECK("clCreateSubBuffer c", e);
        cl_uint m = 256;
        CHECK("arg", clSetKernelArg(vadd, 0, sizeof sa, &sa));
        CHECK("arg", clSetKernelArg(vadd, 1, sizeof sb, &sb));
        CHECK("arg", clSetKernelArg(vadd, 2, sizeof sc, &sc));
        CHECK("arg", clSetKernelArg(vadd, 3, sizeof m, &m));
        size_t g4[1] = {256};
        if (enqueue(q, vadd, d, "vadd", 1, NULL, g4, l1)) return 1;

        CHECK("clEnqueueReadBuffer",
              clEnqueueReadBuffer(q, c, CL_TRUE, 0, sizeof host_c, host_c, 0, NULL, NULL));
        CHECK("clFinish", clFinish(q));
        clReleaseMemObject(sa);
        clReleaseMemObject(sb);
        clReleaseMemObject(sc);
        clReleaseKernel(vadd);
        clReleaseKernel(scale);
        clReleaseKernel(fill);
        clReleaseMemObject(a);
        clReleaseMemObject(b);
        clReleaseMemObject(c);
        clReleaseCommandQueue(q);
    }
    clReleaseProgram(prog);
    clReleaseContext(ctx);
    printf("sg: done=1\n");
    return 0;
}
