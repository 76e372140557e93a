// The image limits as HIP's device set-up reads them: after HIP has started the runtime, every
// GPU agent's HSA_EXT_AGENT_INFO_IMAGE_* attribute is asked of the runtime's own
// hsa_agent_get_info (found with dlsym, as HIP links it) into a buffer of exactly the type ROCr
// stores, on this program's stack: uint32_t for the 1D kinds and the counts, uint32_t[2] for
// the 2D kinds, uint32_t[3] for 3D (HIP's `uint32_t image_max_dim[3]`).
//
// The harness also builds this program with -fsanitize=address: a runtime that writes more
// than ROCr does (a 64-bit value per element, 24 bytes into the 12-byte 3D array) is then a
// stack-buffer-overflow that AddressSanitizer reports.
//
// Facts: image_1d, image_1da, image_1db, image_2d (w,h), image_3d (w,h,d), image_layers,
// image_handles (read, read-write, samplers), and hipDeviceProp_t's maxTexture1D/2D/3D, which
// must agree with them.
#include "sg_hip.h"

#include <dlfcn.h>

typedef uint32_t (*agent_get_info_fn)(uint64_t agent, uint32_t attribute, void *value);
typedef uint32_t (*iterate_agents_fn)(uint32_t (*cb)(uint64_t agent, void *data), void *data);

static agent_get_info_fn agent_get_info;

enum : uint32_t {
    DEVICE = 17,  // HSA_AGENT_INFO_DEVICE
    IMAGE_1D = 0x3000,
    IMAGE_1DA = 0x3001,
    IMAGE_1DB = 0x3002,
    IMAGE_2D = 0x3003,
    IMAGE_2DA = 0x3004,
    IMAGE_2DDEPTH = 0x3005,
    IMAGE_2DADEPTH = 0x3006,
    IMAGE_3D = 0x3007,
    ARRAY_LAYERS = 0x3008,
    RD_HANDLES = 0x3009,
    RORW_HANDLES = 0x300A,
    SAMPLERS = 0x300B,
};

static uint64_t first_gpu;

static uint32_t find_gpu(uint64_t agent, void *) {
    uint32_t device = 0;
    if (agent_get_info(agent, DEVICE, &device) == 0 && device == 1 && first_gpu == 0)
        first_gpu = agent;
    return 0;
}

template <typename T>
static void ask(uint32_t attribute, T *out, const char *what) {
    uint32_t st = agent_get_info(first_gpu, attribute, out);
    SG_EXPECT(st == 0, "hsa_agent_get_info(%s) returned 0x%x", what, st);
}

int main() {
    sg_start("image_limits");
    SG_HIP(hipInit(0));
    hipDeviceProp_t prop;
    SG_HIP(hipGetDeviceProperties(&prop, 0));

    agent_get_info = reinterpret_cast<agent_get_info_fn>(dlsym(RTLD_DEFAULT, "hsa_agent_get_info"));
    auto iterate = reinterpret_cast<iterate_agents_fn>(dlsym(RTLD_DEFAULT, "hsa_iterate_agents"));
    SG_EXPECT(agent_get_info && iterate, "the HSA runtime's functions are not in the process");
    SG_EXPECT(iterate(find_gpu, nullptr) == 0 && first_gpu != 0, "no GPU agent");

    uint32_t one_d = 0, one_da = 0, one_db = 0, layers = 0, rd = 0, rorw = 0, samplers = 0;
    uint32_t two_d[2] = {0, 0}, two_da[2] = {0, 0}, depth[2] = {0, 0}, adepth[2] = {0, 0};
    uint32_t three_d[3] = {0, 0, 0};
    // 3D first: HIP's own uint32_t[3], the buffer the AddressSanitizer report names.
    ask(IMAGE_3D, &three_d, "IMAGE_3D_MAX_ELEMENTS");
    ask(IMAGE_1D, &one_d, "IMAGE_1D_MAX_ELEMENTS");
    ask(IMAGE_1DA, &one_da, "IMAGE_1DA_MAX_ELEMENTS");
    ask(IMAGE_1DB, &one_db, "IMAGE_1DB_MAX_ELEMENTS");
    ask(IMAGE_2D, &two_d, "IMAGE_2D_MAX_ELEMENTS");
    ask(IMAGE_2DA, &two_da, "IMAGE_2DA_MAX_ELEMENTS");
    ask(IMAGE_2DDEPTH, &depth, "IMAGE_2DDEPTH_MAX_ELEMENTS");
    ask(IMAGE_2DADEPTH, &adepth, "IMAGE_2DADEPTH_MAX_ELEMENTS");
    ask(ARRAY_LAYERS, &layers, "IMAGE_ARRAY_MAX_LAYERS");
    ask(RD_HANDLES, &rd, "MAX_IMAGE_RD_HANDLES");
    ask(RORW_HANDLES, &rorw, "MAX_IMAGE_RORW_HANDLES");
    ask(SAMPLERS, &samplers, "MAX_SAMPLER_HANDLERS");

    sg_fact("image_1d", "%u", one_d);
    sg_fact("image_1da", "%u", one_da);
    sg_fact("image_1db", "%u", one_db);
    sg_fact("image_2d", "%u,%u", two_d[0], two_d[1]);
    sg_fact("image_2da", "%u,%u", two_da[0], two_da[1]);
    sg_fact("image_2ddepth", "%u,%u", depth[0], depth[1]);
    sg_fact("image_2dadepth", "%u,%u", adepth[0], adepth[1]);
    sg_fact("image_3d", "%u,%u,%u", three_d[0], three_d[1], three_d[2]);
    sg_fact("image_layers", "%u", layers);
    sg_fact("image_handles", "%u,%u,%u", rd, rorw, samplers);

    // HIP read the same attributes into the same types.
    SG_EXPECT(prop.maxTexture1D == (int)one_d && prop.maxTexture2D[0] == (int)two_d[0] &&
                  prop.maxTexture2D[1] == (int)two_d[1] && prop.maxTexture3D[0] == (int)three_d[0] &&
                  prop.maxTexture3D[1] == (int)three_d[1] && prop.maxTexture3D[2] == (int)three_d[2],
              "hipDeviceProp_t says 1D %d, 2D %d,%d, 3D %d,%d,%d; the agent %u, %u,%u, %u,%u,%u",
              prop.maxTexture1D, prop.maxTexture2D[0], prop.maxTexture2D[1], prop.maxTexture3D[0],
              prop.maxTexture3D[1], prop.maxTexture3D[2], one_d, two_d[0], two_d[1], three_d[0],
              three_d[1], three_d[2]);
    sg_done();
    return 0;
}
