// HIP arrays, textures and surfaces on the image extension: hipMallocArray, hipMalloc3DArray,
// every array copy HIP offers on both versions, texture objects over an array, linear memory
// and pitched memory, a surface object, and kernels that read and write them.
//
// What moves and what does not: HIP (ROCclr) copies between arrays and memory with its own
// blit kernels (__amd_rocclr_copyBufferToImage, __amd_rocclr_copyImageToBuffer,
// __amd_rocclr_copyImage), by default and on a real MI210 too (its image DMA setting is off on
// ROCm), never with hsa_ext_image_import/export. SoftGPU does not run those kernels, so an
// array round trip brings back what the destination held before: the program reports it
// (`sg: ..._result=unchanged`) and the harness checks the blits were captured and flagged.
//
// What must be exact: the descriptors. HIP copies the image descriptor behind the image
// handle, and the sampler descriptor behind the sampler handle, into each texture and surface
// object. The program reads those objects back with hipMemcpy (a copy HIP performs itself) and
// checks every field SoftGPU documents: base address (for memory it knows), dimensions,
// pitch, format, the channel words, and the sampler modes.
#include "sg_hip.h"

#include <vector>

__global__ void tex_read(hipTextureObject_t t, float *out, int w) {
    int x = threadIdx.x, y = blockIdx.x;
    out[y * w + x] = tex2D<float>(t, x + 0.5f, y + 0.5f);
}

__global__ void surf_write(hipSurfaceObject_t s, int w) {
    int x = threadIdx.x, y = blockIdx.x;
    surf2Dwrite((float)(y * w + x), s, x * (int)sizeof(float), y);
}

__global__ void tex_fetch(hipTextureObject_t t, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = tex1Dfetch<float>(t, i);
}

__global__ void tex_read_3d(hipTextureObject_t t, float *out) {
    int x = threadIdx.x, y = threadIdx.y, z = blockIdx.x;
    out[(z * blockDim.y + y) * blockDim.x + x] = tex3D<float>(t, x, y, z);
}

static const int W = 64, H = 16;     // 2D array: 64 floats = one 256-byte row
static const int VX = 8, VY = 8, VZ = 4;  // 3D array
static const int N_LINEAR = 1024;    // texture over linear memory
static const unsigned SENTINEL = 0xEE;

// The fields of SoftGPU's GFX9 image descriptor (docs/DESIGN.md, "Images").
struct Srd {
    uint32_t w[12];
    uint64_t base() const { return ((uint64_t)w[0] << 8) | ((uint64_t)(w[1] & 0xff) << 40); }
    uint32_t data_format() const { return (w[1] >> 20) & 0x3f; }
    uint32_t num_format() const { return (w[1] >> 26) & 0xf; }
    uint32_t width() const { return (w[2] & 0x3fff) + 1; }
    uint32_t height() const { return ((w[2] >> 14) & 0x3fff) + 1; }
    uint32_t type() const { return w[3] >> 28; }
    uint32_t depth() const { return (w[4] & 0x1fff) + 1; }
    uint32_t pitch() const { return ((w[4] >> 13) & 0xffff) + 1; }
};

static const uint32_t FMT_32 = 4, NUM_FLOAT = 7, TYPE_2D = 9, TYPE_3D = 10;
static const uint32_t HSA_FLOAT = 15, HSA_ORDER_R = 1;

static Srd read_srd(const void *object) {
    Srd s;
    SG_HIP(hipMemcpy(&s, object, sizeof s, hipMemcpyDefault));
    return s;
}

static void expect_image_srd(const char *what, const Srd &s, uint32_t w, uint32_t h,
                             uint32_t type, uint32_t pitch) {
    SG_EXPECT(s.data_format() == FMT_32 && s.num_format() == NUM_FLOAT,
              "%s: descriptor format %u/%u, expected FMT_32/FLOAT (%u/%u)", what,
              s.data_format(), s.num_format(), FMT_32, NUM_FLOAT);
    SG_EXPECT(s.width() == w && s.height() == h, "%s: descriptor %ux%u, expected %ux%u", what,
              s.width(), s.height(), w, h);
    SG_EXPECT(s.type() == type, "%s: descriptor type %u, expected %u", what, s.type(), type);
    SG_EXPECT(s.pitch() == pitch, "%s: descriptor pitch %u elements, expected %u", what,
              s.pitch(), pitch);
    SG_EXPECT(s.w[8] == HSA_FLOAT && s.w[9] == HSA_ORDER_R && s.w[10] == w && s.w[11] == 0,
              "%s: descriptor words 8-11 %u %u %u %u, expected %u %u %u 0", what, s.w[8],
              s.w[9], s.w[10], s.w[11], HSA_FLOAT, HSA_ORDER_R, w);
    SG_EXPECT(s.base() != 0 && s.base() % 256 == 0, "%s: base address 0x%llx", what,
              (unsigned long long)s.base());
}

// What a buffer holds after a copy SoftGPU cannot perform (a blit kernel did it).
static const char *verdict(const unsigned char *p, size_t n, uint32_t seed) {
    bool unchanged = true;
    for (size_t i = 0; i < n && unchanged; i++) unchanged = p[i] == SENTINEL;
    if (unchanged) return "unchanged";
    return sg_first_mismatch(p, n, seed) == n ? "copied" : "other";
}

int main() {
    sg_start("images");

    // ---- what HIP reports about images (from the agent's image limits)
    hipDeviceProp_t prop;
    SG_HIP(hipGetDeviceProperties(&prop, 0));
    sg_fact("max_texture_1d", "%d", prop.maxTexture1D);
    sg_fact("max_texture_2d", "%dx%d", prop.maxTexture2D[0], prop.maxTexture2D[1]);
    sg_fact("max_texture_3d", "%dx%dx%d", prop.maxTexture3D[0], prop.maxTexture3D[1],
            prop.maxTexture3D[2]);

    hipChannelFormatDesc fdesc = hipCreateChannelDesc<float>();

    // ---- a 2D array, and a copy to it and back (blit kernels: nothing moves)
    hipArray_t a2 = nullptr;
    SG_HIP(hipMallocArray(&a2, &fdesc, W, H, 0));
    SG_EXPECT(a2 != nullptr, "hipMallocArray gave no array");
    const size_t n2 = (size_t)W * H * sizeof(float);
    std::vector<unsigned char> src(n2), dst(n2);
    sg_fill(src.data(), n2, 21);
    std::memset(dst.data(), SENTINEL, n2);
    SG_HIP(hipMemcpy2DToArray(a2, 0, 0, src.data(), W * sizeof(float), W * sizeof(float), H,
                              hipMemcpyHostToDevice));
    SG_HIP(hipMemcpy2DFromArray(dst.data(), W * sizeof(float), a2, 0, 0, W * sizeof(float), H,
                                hipMemcpyDeviceToHost));
    sg_fact("array2d_round_trip_result", "%s", verdict(dst.data(), n2, 21));
    SG_EXPECT_PATTERN("the host source of hipMemcpy2DToArray", src.data(), n2, 21);

    // The 1D-style copies into and out of the same array.
    std::memset(dst.data(), SENTINEL, n2);
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
    SG_HIP(hipMemcpyToArray(a2, 0, 0, src.data(), n2, hipMemcpyHostToDevice));
    SG_HIP(hipMemcpyFromArray(dst.data(), a2, 0, 0, n2, hipMemcpyDeviceToHost));
#pragma clang diagnostic pop
    sg_fact("array_1d_copies_result", "%s", verdict(dst.data(), n2, 21));
    SG_HIP(hipMemcpyHtoA(a2, 0, src.data(), W * sizeof(float)));
    SG_HIP(hipMemcpyAtoH(dst.data(), a2, 0, W * sizeof(float)));

    // ---- a 3D array, hipMemcpy3D to it, back, and array to array
    hipArray_t a3 = nullptr, a3b = nullptr;
    SG_HIP(hipMalloc3DArray(&a3, &fdesc, make_hipExtent(VX, VY, VZ), 0));
    SG_HIP(hipMalloc3DArray(&a3b, &fdesc, make_hipExtent(VX, VY, VZ), 0));
    const size_t n3 = (size_t)VX * VY * VZ * sizeof(float);
    std::vector<unsigned char> src3(n3), dst3(n3);
    sg_fill(src3.data(), n3, 33);
    std::memset(dst3.data(), SENTINEL, n3);
    hipMemcpy3DParms p3;
    std::memset(&p3, 0, sizeof p3);
    p3.srcPtr = make_hipPitchedPtr(src3.data(), VX * sizeof(float), VX, VY);
    p3.dstArray = a3;
    p3.extent = make_hipExtent(VX, VY, VZ);
    p3.kind = hipMemcpyHostToDevice;
    SG_HIP(hipMemcpy3D(&p3));
    std::memset(&p3, 0, sizeof p3);
    p3.srcArray = a3;
    p3.dstArray = a3b;
    p3.extent = make_hipExtent(VX, VY, VZ);
    p3.kind = hipMemcpyDeviceToDevice;
    SG_HIP(hipMemcpy3D(&p3));
    std::memset(&p3, 0, sizeof p3);
    p3.srcArray = a3b;
    p3.dstPtr = make_hipPitchedPtr(dst3.data(), VX * sizeof(float), VX, VY);
    p3.extent = make_hipExtent(VX, VY, VZ);
    p3.kind = hipMemcpyDeviceToHost;
    SG_HIP(hipMemcpy3D(&p3));
    sg_fact("array3d_round_trip_result", "%s", verdict(dst3.data(), n3, 33));

    // ---- a texture object over the 2D array: its descriptors are SoftGPU's
    hipResourceDesc res;
    std::memset(&res, 0, sizeof res);
    res.resType = hipResourceTypeArray;
    res.res.array.array = a2;
    hipTextureDesc td;
    std::memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = hipAddressModeClamp;
    td.filterMode = hipFilterModePoint;
    td.readMode = hipReadModeElementType;
    td.normalizedCoords = 0;
    hipTextureObject_t tex = 0;
    SG_HIP(hipCreateTextureObject(&tex, &res, &td, nullptr));
    struct {
        Srd image;
        uint32_t sampler[8];
    } texobj;
    SG_HIP(hipMemcpy(&texobj, (const void *)tex, sizeof texobj, hipMemcpyDefault));
    expect_image_srd("2D array texture", texobj.image, W, H, TYPE_2D, W);
    // Sampler: clamp to edge (CLAMP_LAST_TEXEL, 2) on x, y and z, unnormalized coordinates,
    // point filtering, MAX_LOD 4095.
    SG_EXPECT(texobj.sampler[0] == (2u | 2u << 3 | 2u << 6 | 1u << 15) &&
                  texobj.sampler[1] == (4095u << 12) && texobj.sampler[2] == 0,
              "sampler descriptor %08x %08x %08x", texobj.sampler[0], texobj.sampler[1],
              texobj.sampler[2]);
    sg_fact("texture_descriptors", "ok");

    float *out = nullptr;
    SG_HIP(hipMalloc(&out, 4096 * sizeof(float)));
    hipLaunchKernelGGL(tex_read, dim3(H), dim3(W), 0, 0, tex, out, W);
    SG_LAUNCHED("tex_read");

    // ---- a surface object over the same array: the same image descriptor
    hipSurfaceObject_t surf = 0;
    SG_HIP(hipCreateSurfaceObject(&surf, &res));
    Srd ss = read_srd((const void *)surf);
    expect_image_srd("2D array surface", ss, W, H, TYPE_2D, W);
    SG_EXPECT(std::memcmp(&ss, &texobj.image, sizeof ss) == 0,
              "the surface and the texture of one array carry different image descriptors");
    hipLaunchKernelGGL(surf_write, dim3(H), dim3(W), 0, 0, surf, W);
    SG_LAUNCHED("surf_write");
    sg_fact("surface_descriptor", "ok");

    // ---- a texture over the 3D array
    res.res.array.array = a3;
    hipTextureObject_t tex3 = 0;
    SG_HIP(hipCreateTextureObject(&tex3, &res, &td, nullptr));
    Srd s3 = read_srd((const void *)tex3);
    expect_image_srd("3D array texture", s3, VX, VY, TYPE_3D, 64);
    SG_EXPECT(s3.depth() == VZ, "3D descriptor depth %u, expected %d", s3.depth(), VZ);
    hipLaunchKernelGGL(tex_read_3d, dim3(VZ), dim3(VX, VY), 0, 0, tex3, out);
    SG_LAUNCHED("tex_read_3d");

    // ---- a texture over linear memory: a buffer resource at the buffer's address
    float *lin = nullptr;
    SG_HIP(hipMalloc(&lin, N_LINEAR * sizeof(float)));
    hipResourceDesc rl;
    std::memset(&rl, 0, sizeof rl);
    rl.resType = hipResourceTypeLinear;
    rl.res.linear.devPtr = lin;
    rl.res.linear.desc = fdesc;
    rl.res.linear.sizeInBytes = N_LINEAR * sizeof(float);
    hipTextureDesc tdl;
    std::memset(&tdl, 0, sizeof tdl);
    tdl.readMode = hipReadModeElementType;
    hipTextureObject_t texl = 0;
    SG_HIP(hipCreateTextureObject(&texl, &rl, &tdl, nullptr));
    Srd sl = read_srd((const void *)texl);
    uint64_t lbase = (uint64_t)sl.w[0] | ((uint64_t)(sl.w[1] & 0xffff) << 32);
    SG_EXPECT(lbase == (uint64_t)(uintptr_t)lin,
              "linear texture: buffer resource base 0x%llx, expected the buffer %p",
              (unsigned long long)lbase, (void *)lin);
    SG_EXPECT(((sl.w[1] >> 16) & 0x3fff) == sizeof(float) &&
                  sl.w[2] == N_LINEAR * sizeof(float) && sl.w[10] == (uint32_t)N_LINEAR,
              "linear texture: stride %u, records %u, width word %u", (sl.w[1] >> 16) & 0x3fff,
              sl.w[2], sl.w[10]);
    hipLaunchKernelGGL(tex_fetch, dim3(N_LINEAR / 256), dim3(256), 0, 0, texl, out);
    SG_LAUNCHED("tex_fetch");
    sg_fact("linear_texture_descriptor", "ok");

    // ---- a texture over pitched memory: an image resource at the allocation's address
    float *pitched = nullptr;
    size_t pitch = 0;
    SG_HIP(hipMallocPitch((void **)&pitched, &pitch, 100 * sizeof(float), 7));
    hipResourceDesc rp;
    std::memset(&rp, 0, sizeof rp);
    rp.resType = hipResourceTypePitch2D;
    rp.res.pitch2D.devPtr = pitched;
    rp.res.pitch2D.desc = fdesc;
    rp.res.pitch2D.width = 100;
    rp.res.pitch2D.height = 7;
    rp.res.pitch2D.pitchInBytes = pitch;
    hipTextureObject_t texp = 0;
    SG_HIP(hipCreateTextureObject(&texp, &rp, &td, nullptr));
    Srd sp = read_srd((const void *)texp);
    expect_image_srd("pitched texture", sp, 100, 7, TYPE_2D, (uint32_t)(pitch / sizeof(float)));
    SG_EXPECT(sp.base() == (uint64_t)(uintptr_t)pitched,
              "pitched texture: base 0x%llx, expected the allocation %p",
              (unsigned long long)sp.base(), (void *)pitched);
    hipLaunchKernelGGL(tex_read, dim3(7), dim3(100), 0, 0, texp, out, 100);
    SG_LAUNCHED("tex_read (pitched)");
    sg_fact("pitched_texture_descriptor", "ok");
    sg_fact("pitch", "%zu", pitch);

    SG_HIP(hipDeviceSynchronize());

    SG_HIP(hipDestroyTextureObject(tex));
    SG_HIP(hipDestroyTextureObject(tex3));
    SG_HIP(hipDestroyTextureObject(texl));
    SG_HIP(hipDestroyTextureObject(texp));
    SG_HIP(hipDestroySurfaceObject(surf));
    SG_HIP(hipFreeArray(a2));
    SG_HIP(hipFreeArray(a3));
    SG_HIP(hipFreeArray(a3b));
    SG_HIP(hipFree(out));
    SG_HIP(hipFree(lin));
    SG_HIP(hipFree(pitched));
    sg_done();
    return 0;
}
