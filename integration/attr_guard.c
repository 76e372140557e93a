/*
 * Every attribute the ROCr runtime answers, asked of the runtime under test with
 * guard bytes on both sides of an output buffer sized at the width ROCr writes.
 *
 * The widths below come from the stores in ROCr's own source, not from the
 * header comments: ROCr 5.2.3 (tag rocm-5.2.3, core/runtime/runtime.cpp,
 * amd_gpu_agent.cpp, amd_cpu_agent.cpp, amd_memory_region.cpp, isa.cpp,
 * cache.cpp, image/image_runtime.cpp, loader/executable.cpp) and ROCr 6.4
 * (the same files; the 6.x attributes). Example: the image limits are size_t
 * in hsa_ext_image.h's comments, but ROCr stores uint32_t, one, two or three
 * of them, and HIP reads them into uint32_t arrays.
 *
 * For every object kind (the system, the CPU agent, every GPU agent, every pool
 * and every agent/pool pair, every region an agent sees, every ISA, every
 * cache, a loaded executable and each of its symbols, each ISA's wavefront),
 * every attribute ROCr answers must be answered (HSA_STATUS_SUCCESS) and no
 * byte outside [0, width) may change. A few attributes ROCr does not answer are
 * checked the other way: INVALID_ARGUMENT and no byte written.
 *
 * Usage: attr_guard CODE_OBJECT (an HSA code object for the first GPU agent,
 * holding at least one kernel and one global variable).
 * Prints "sg: checked=N" (attribute queries checked) and one line per object;
 * every violation is printed as "GUARD ..." or "ANSWER ..." and the program
 * exits 1 after reporting all of them.
 */
#include "common.h"

#include <hsa/hsa_ext_image.h>

#define GUARD 64
#define PATTERN 0xA5

typedef struct {
    uint32_t attr;
    size_t width; /* bytes ROCr stores; 0: take it from `width_from` */
    const char *name;
} attr_t;

#define A(id, w) {(uint32_t)(id), (w), #id}

static unsigned problems;
static unsigned checked;

/* A call that must succeed; a failure is reported and counted, and the checks go on. */
#define SOFT(call)                                                                       \
    soft_((call), #call)
static bool soft_(hsa_status_t st, const char *what) {
    if (st == HSA_STATUS_SUCCESS) return true;
    fprintf(stderr, "ANSWER %s: status 0x%x, but ROCr answers it\n", what, (unsigned)st);
    problems++;
    return false;
}

typedef hsa_status_t (*query_fn)(const void *obj, uint32_t attr, void *out);

/* Ask `attr` of `obj` with `width` bytes of room and GUARD guard bytes on each
 * side; `out` (if not NULL) receives the answer's bytes. */
static bool guarded(const char *what, query_fn q, const void *obj, uint32_t attr, const char *name,
                    size_t width, void *out) {
    unsigned char *buf = malloc(GUARD + width + GUARD);
    if (!buf) SG_FAIL("out of memory");
    memset(buf, PATTERN, GUARD + width + GUARD);
    hsa_status_t st = q(obj, attr, buf + GUARD);
    checked++;
    bool ok = true;
    if (st != HSA_STATUS_SUCCESS) {
        fprintf(stderr, "ANSWER %s %s (0x%x): status 0x%x, but ROCr answers it (%zu bytes)\n", what,
                name, attr, (unsigned)st, width);
        problems++;
        ok = false;
    }
    size_t before = 0, after = 0, first_after = 0;
    for (size_t i = 0; i < GUARD; i++)
        if (buf[i] != PATTERN) before++;
    for (size_t i = 0; i < GUARD; i++)
        if (buf[GUARD + width + i] != PATTERN) {
            if (!after) first_after = i;
            after++;
        }
    if (before || after) {
        fprintf(stderr,
                "GUARD %s %s (0x%x): ROCr writes %zu bytes; %zu guard bytes before and %zu after "
                "the buffer were overwritten (first at +%zu past the end)\n",
                what, name, attr, width, before, after, first_after);
        problems++;
        ok = false;
    }
    if (ok && out) memcpy(out, buf + GUARD, width);
    free(buf);
    return ok;
}

/* An attribute ROCr does not answer: INVALID_ARGUMENT and nothing written. */
static void unanswered(const char *what, query_fn q, const void *obj, uint32_t attr, const char *name) {
    unsigned char buf[GUARD * 2];
    memset(buf, PATTERN, sizeof buf);
    hsa_status_t st = q(obj, attr, buf + GUARD);
    checked++;
    if (st != HSA_STATUS_ERROR_INVALID_ARGUMENT) {
        fprintf(stderr, "ANSWER %s %s (0x%x): status 0x%x, ROCr returns INVALID_ARGUMENT\n", what, name,
                attr, (unsigned)st);
        problems++;
    }
    for (size_t i = 0; i < sizeof buf; i++)
        if (buf[i] != PATTERN) {
            fprintf(stderr, "GUARD %s %s (0x%x): unanswered, yet byte %ld was written\n", what, name, attr,
                    (long)i - GUARD);
            problems++;
            break;
        }
}

static void table(const char *what, query_fn q, const void *obj, const attr_t *t, size_t n) {
    for (size_t i = 0; i < n; i++) guarded(what, q, obj, t[i].attr, t[i].name, t[i].width, NULL);
}

#define TABLE(what, q, obj, t) table(what, q, obj, t, sizeof(t) / sizeof(t[0]))

/* ---- the system ----------------------------------------------------------- */

/* 6.x ids the pinned 5.2.3 headers do not name. */
#define SYS_MWAITX_ENABLED 0x203
#define SYS_DMABUF_SUPPORTED 0x204
#define SYS_VIRTUAL_MEM_API_SUPPORTED 0x205
#define SYS_XNACK_ENABLED 0x206
#define SYS_EXT_VERSION_MAJOR 0x207
#define SYS_EXT_VERSION_MINOR 0x208

static const attr_t system_attrs[] = {
    A(HSA_SYSTEM_INFO_VERSION_MAJOR, 2),
    A(HSA_SYSTEM_INFO_VERSION_MINOR, 2),
    A(HSA_SYSTEM_INFO_TIMESTAMP, 8),
    A(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, 8),
    A(HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT, 8),
    A(HSA_SYSTEM_INFO_ENDIANNESS, 4),
    A(HSA_SYSTEM_INFO_MACHINE_MODEL, 4),
    A(HSA_SYSTEM_INFO_EXTENSIONS, 128),
    A(HSA_AMD_SYSTEM_INFO_BUILD_VERSION, 8), /* const char* */
    A(HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED, 1),
    A(HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT, 1),
    A(SYS_MWAITX_ENABLED, 1),
    A(SYS_DMABUF_SUPPORTED, 1),
    A(SYS_VIRTUAL_MEM_API_SUPPORTED, 1),
    A(SYS_XNACK_ENABLED, 1),
    A(SYS_EXT_VERSION_MAJOR, 2),
    A(SYS_EXT_VERSION_MINOR, 2),
};

static hsa_status_t q_system(const void *obj, uint32_t attr, void *out) {
    (void)obj;
    return hsa_system_get_info((hsa_system_info_t)attr, out);
}

/* ---- agents ---------------------------------------------------------------- */

#define AG_MEMORY_AVAIL 0xA015
#define AG_TIMESTAMP_FREQUENCY 0xA016
#define AG_ASIC_FAMILY_ID 0xA107
#define AG_UCODE_VERSION 0xA108
#define AG_SDMA_UCODE_VERSION 0xA109
#define AG_NUM_SDMA_ENG 0xA10A
#define AG_NUM_SDMA_XGMI_ENG 0xA10B
#define AG_IOMMU_SUPPORT 0xA110
#define AG_NUM_XCC 0xA111
#define AG_DRIVER_UID 0xA112
#define AG_NEAREST_CPU 0xA113
#define AG_MEMORY_PROPERTIES 0xA114
#define AG_AQL_EXTENSIONS 0xA115
#define AG_SCRATCH_LIMIT_MAX 0xA116
#define AG_SCRATCH_LIMIT_CURRENT 0xA117

/* Stored the same way by ROCr's CPU and GPU agents. */
static const attr_t agent_common[] = {
    A(HSA_AGENT_INFO_FEATURE, 4),
    A(HSA_AGENT_INFO_MACHINE_MODEL, 4),
    A(HSA_AGENT_INFO_PROFILE, 4),
    A(HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE, 4),
    A(HSA_AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES, 4),
    A(HSA_AGENT_INFO_FAST_F16_OPERATION, 1),
    A(HSA_AGENT_INFO_WAVEFRONT_SIZE, 4),
    A(HSA_AGENT_INFO_WORKGROUP_MAX_DIM, 6),
    A(HSA_AGENT_INFO_WORKGROUP_MAX_SIZE, 4),
    A(HSA_AGENT_INFO_GRID_MAX_DIM, 12),
    A(HSA_AGENT_INFO_GRID_MAX_SIZE, 4),
    A(HSA_AGENT_INFO_FBARRIER_MAX_SIZE, 4),
    A(HSA_AGENT_INFO_QUEUES_MAX, 4),
    A(HSA_AGENT_INFO_QUEUE_MIN_SIZE, 4),
    A(HSA_AGENT_INFO_QUEUE_MAX_SIZE, 4),
    A(HSA_AGENT_INFO_QUEUE_TYPE, 4),
    A(HSA_AGENT_INFO_NODE, 4),
    A(HSA_AGENT_INFO_DEVICE, 4),
    A(HSA_AGENT_INFO_CACHE_SIZE, 16),
    A(HSA_AGENT_INFO_ISA, 8),
    A(HSA_AGENT_INFO_EXTENSIONS, 128),
    A(HSA_AGENT_INFO_VERSION_MAJOR, 2),
    A(HSA_AGENT_INFO_VERSION_MINOR, 2),
    A(HSA_AMD_AGENT_INFO_CHIP_ID, 4),
    A(HSA_AMD_AGENT_INFO_CACHELINE_SIZE, 4),
    A(HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, 4),
    A(HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY, 4),
    A(HSA_AMD_AGENT_INFO_DRIVER_NODE_ID, 4),
    A(HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS, 4),
    A(HSA_AMD_AGENT_INFO_BDFID, 4),
    A(HSA_AMD_AGENT_INFO_PRODUCT_NAME, 64),
    A(HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU, 4),
    A(HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU, 4),
    A(HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES, 4),
    A(HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE, 4),
    A(HSA_AMD_AGENT_INFO_HDP_FLUSH, 16),
    A(HSA_AMD_AGENT_INFO_DOMAIN, 4),
    A(HSA_AMD_AGENT_INFO_ASIC_REVISION, 4),
    A(HSA_AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS, 1),
    A(AG_TIMESTAMP_FREQUENCY, 8),
    A(AG_ASIC_FAMILY_ID, 4),
    A(AG_UCODE_VERSION, 4),
    A(AG_SDMA_UCODE_VERSION, 4),
    A(AG_NUM_SDMA_ENG, 4),
    A(AG_NUM_SDMA_XGMI_ENG, 4),
    A(AG_IOMMU_SUPPORT, 4),
    A(AG_NUM_XCC, 4),
    A(AG_DRIVER_UID, 4),
    A(AG_NEAREST_CPU, 8),
    A(AG_MEMORY_PROPERTIES, 8),
    A(AG_AQL_EXTENSIONS, 8),
    A(AG_SCRATCH_LIMIT_MAX, 8),
    A(AG_SCRATCH_LIMIT_CURRENT, 8),
};

/* CPU agent: names cleared to HSA_PUBLIC_NAME_SIZE, UUID "CPU-XX" by snprintf. */
static const attr_t agent_cpu[] = {
    A(HSA_AGENT_INFO_NAME, 64),
    A(HSA_AGENT_INFO_VENDOR_NAME, 64),
    A(HSA_AMD_AGENT_INFO_UUID, 7),
};

/* GPU agent: names cleared to 63 bytes, UUID "GPU-" + 16 hex digits + NUL. */
static const attr_t agent_gpu[] = {
    A(HSA_AGENT_INFO_NAME, 63),
    A(HSA_AGENT_INFO_VENDOR_NAME, 63),
    A(HSA_AMD_AGENT_INFO_UUID, 21),
    A(HSA_AMD_AGENT_INFO_MEMORY_WIDTH, 4),
    A(HSA_AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY, 4),
    A(HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES, 1),
    A(HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT, 4),
    A(AG_MEMORY_AVAIL, 8),
};

/* Image limits: uint32_t stores (ImageRuntime::GetImageInfoMaxDimension and the
 * agents' GetInfo). A GPU without images (GFX9.4/9.5 in ROCr 6.4) stores one
 * uint32_t zero for each. The CPU agent stores zeros of these widths. */
static const attr_t agent_images[] = {
    A(HSA_EXT_AGENT_INFO_IMAGE_1D_MAX_ELEMENTS, 4),
    A(HSA_EXT_AGENT_INFO_IMAGE_1DA_MAX_ELEMENTS, 4),
    A(HSA_EXT_AGENT_INFO_IMAGE_1DB_MAX_ELEMENTS, 4),
    A(HSA_EXT_AGENT_INFO_IMAGE_2D_MAX_ELEMENTS, 8),
    A(HSA_EXT_AGENT_INFO_IMAGE_2DA_MAX_ELEMENTS, 8),
    A(HSA_EXT_AGENT_INFO_IMAGE_2DDEPTH_MAX_ELEMENTS, 8),
    A(HSA_EXT_AGENT_INFO_IMAGE_2DADEPTH_MAX_ELEMENTS, 8),
    A(HSA_EXT_AGENT_INFO_IMAGE_3D_MAX_ELEMENTS, 12),
    A(HSA_EXT_AGENT_INFO_IMAGE_ARRAY_MAX_LAYERS, 4),
    A(HSA_EXT_AGENT_INFO_MAX_IMAGE_RD_HANDLES, 4),
    A(HSA_EXT_AGENT_INFO_MAX_IMAGE_RORW_HANDLES, 4),
    A(HSA_EXT_AGENT_INFO_MAX_SAMPLER_HANDLERS, 4),
};

static hsa_status_t q_agent(const void *obj, uint32_t attr, void *out) {
    return hsa_agent_get_info(*(const hsa_agent_t *)obj, (hsa_agent_info_t)attr, out);
}

/* ---- pools, agent/pool pairs, regions ------------------------------------- */

#define POOL_LOCATION 17
#define POOL_REC_GRANULE 18

static const attr_t pool_attrs[] = {
    A(HSA_AMD_MEMORY_POOL_INFO_SEGMENT, 4),
    A(HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, 4),
    A(HSA_AMD_MEMORY_POOL_INFO_SIZE, 8),
    A(HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, 1),
    A(HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE, 8),
    A(HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT, 8),
    A(HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL, 1),
    A(HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE, 8),
    A(POOL_REC_GRANULE, 8),
};

static hsa_status_t q_pool(const void *obj, uint32_t attr, void *out) {
    return hsa_amd_memory_pool_get_info(*(const hsa_amd_memory_pool_t *)obj,
                                        (hsa_amd_memory_pool_info_t)attr, out);
}

typedef struct {
    hsa_agent_t agent;
    hsa_amd_memory_pool_t pool;
} agent_pool_t;

static const attr_t agent_pool_attrs[] = {
    A(HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, 4),
    A(HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS, 4),
    A(HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO, sizeof(hsa_amd_memory_pool_link_info_t)),
};

static hsa_status_t q_agent_pool(const void *obj, uint32_t attr, void *out) {
    const agent_pool_t *ap = obj;
    return hsa_amd_agent_memory_pool_get_info(ap->agent, ap->pool, (hsa_amd_agent_memory_pool_info_t)attr,
                                              out);
}

static const attr_t region_attrs[] = {
    A(HSA_REGION_INFO_SEGMENT, 4),
    A(HSA_REGION_INFO_GLOBAL_FLAGS, 4),
    A(HSA_REGION_INFO_SIZE, 8),
    A(HSA_REGION_INFO_ALLOC_MAX_SIZE, 8),
    A(HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED, 1),
    A(HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE, 8),
    A(HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT, 8),
    A(HSA_AMD_REGION_INFO_HOST_ACCESSIBLE, 1),
    A(HSA_AMD_REGION_INFO_BASE, 8),
    A(HSA_AMD_REGION_INFO_BUS_WIDTH, 4),
    A(HSA_AMD_REGION_INFO_MAX_CLOCK_FREQUENCY, 4),
};

static hsa_status_t q_region(const void *obj, uint32_t attr, void *out) {
    return hsa_region_get_info(*(const hsa_region_t *)obj, (hsa_region_info_t)attr, out);
}

/* ---- ISAs, wavefronts, caches ---------------------------------------------- */

static const attr_t isa_attrs[] = {
    A(HSA_ISA_INFO_NAME_LENGTH, 4),
    A(HSA_ISA_INFO_CALL_CONVENTION_COUNT, 4),
    A(HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONT_SIZE, 4),
    A(HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT, 4),
    A(HSA_ISA_INFO_MACHINE_MODELS, 2),
    A(HSA_ISA_INFO_PROFILES, 2),
    A(HSA_ISA_INFO_DEFAULT_FLOAT_ROUNDING_MODES, 3),
    A(HSA_ISA_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES, 3),
    A(HSA_ISA_INFO_FAST_F16_OPERATION, 1),
    A(HSA_ISA_INFO_WORKGROUP_MAX_DIM, 6),
    A(HSA_ISA_INFO_WORKGROUP_MAX_SIZE, 4),
    A(HSA_ISA_INFO_GRID_MAX_DIM, 12),
    A(HSA_ISA_INFO_GRID_MAX_SIZE, 8), /* ROCr stores a uint64_t */
    A(HSA_ISA_INFO_FBARRIER_MAX_SIZE, 4),
};

static hsa_status_t q_isa_alt(const void *obj, uint32_t attr, void *out) {
    return hsa_isa_get_info_alt(*(const hsa_isa_t *)obj, (hsa_isa_info_t)attr, out);
}

static hsa_status_t q_isa(const void *obj, uint32_t attr, void *out) {
    return hsa_isa_get_info(*(const hsa_isa_t *)obj, (hsa_isa_info_t)attr, 0, out);
}

static hsa_status_t q_wavefront(const void *obj, uint32_t attr, void *out) {
    return hsa_wavefront_get_info(*(const hsa_wavefront_t *)obj, (hsa_wavefront_info_t)attr, out);
}

/* cache.cpp: NAME is a `const char*` store (8 bytes), not the header's array;
 * NAME_LENGTH leaves the NUL out; LEVEL is a uint8_t. */
static const attr_t cache_attrs[] = {
    A(HSA_CACHE_INFO_NAME_LENGTH, 4),
    A(HSA_CACHE_INFO_NAME, 8),
    A(HSA_CACHE_INFO_LEVEL, 1),
    A(HSA_CACHE_INFO_SIZE, 4),
};

static hsa_status_t q_cache(const void *obj, uint32_t attr, void *out) {
    return hsa_cache_get_info(*(const hsa_cache_t *)obj, (hsa_cache_info_t)attr, out);
}

/* ---- executables and symbols ----------------------------------------------- */

static const attr_t executable_attrs[] = {
    A(HSA_EXECUTABLE_INFO_PROFILE, 4),
    A(HSA_EXECUTABLE_INFO_STATE, 4),
    A(HSA_EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE, 4),
};

static hsa_status_t q_executable(const void *obj, uint32_t attr, void *out) {
    return hsa_executable_get_info(*(const hsa_executable_t *)obj, (hsa_executable_info_t)attr, out);
}

/* SymbolImpl::GetInfo: every symbol. */
static const attr_t symbol_common[] = {
    A(HSA_EXECUTABLE_SYMBOL_INFO_TYPE, 4),
    A(HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, 4),
    A(HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME_LENGTH, 4),
    A(HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE, 4),
    A(HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION, 1),
    A(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_CALL_CONVENTION, 4),
    A(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, 8),
    A(HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, 8),
    A(HSA_EXECUTABLE_SYMBOL_INFO_AGENT, 8),
};

#define SYM_KERNEL_WAVEFRONT_SIZE 19 /* HSA_CODE_SYMBOL_INFO_KERNEL_WAVEFRONT_SIZE, 6.x */
#define SYM_EXT_KERNEL_OBJECT_SIZE 100 /* ROCr core/inc/amd_hsa_loader.hpp */
#define SYM_EXT_KERNEL_OBJECT_ALIGN 101

/* KernelSymbol::GetInfo. */
static const attr_t symbol_kernel[] = {
    A(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, 4),
    A(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT, 4),
    A(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, 4),
    A(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, 4),
    A(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK, 1),
    A(SYM_KERNEL_WAVEFRONT_SIZE, 4),
    A(SYM_EXT_KERNEL_OBJECT_SIZE, 4),
    A(SYM_EXT_KERNEL_OBJECT_ALIGN, 4),
};

/* VariableSymbol::GetInfo. */
static const attr_t symbol_variable[] = {
    A(HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALLOCATION, 4),
    A(HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SEGMENT, 4),
    A(HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALIGNMENT, 4),
    A(HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE, 4),
    A(HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST, 1),
};

static hsa_status_t q_symbol(const void *obj, uint32_t attr, void *out) {
    return hsa_executable_symbol_get_info(*(const hsa_executable_symbol_t *)obj,
                                          (hsa_executable_symbol_info_t)attr, out);
}

/* ---- walking the objects ---------------------------------------------------- */

typedef struct {
    hsa_agent_t agents[16];
    size_t n;
} agents_t;

static hsa_status_t collect_agent(hsa_agent_t a, void *data) {
    agents_t *v = data;
    if (v->n < 16) v->agents[v->n++] = a;
    return HSA_STATUS_SUCCESS;
}

typedef struct {
    uint64_t h[64];
    size_t n;
} handles_t;

static hsa_status_t collect_handle(uint64_t h, void *data) {
    handles_t *v = data;
    if (v->n < 64) v->h[v->n++] = h;
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t collect_pool(hsa_amd_memory_pool_t p, void *data) { return collect_handle(p.handle, data); }
static hsa_status_t collect_region(hsa_region_t r, void *data) { return collect_handle(r.handle, data); }
static hsa_status_t collect_isa(hsa_isa_t i, void *data) { return collect_handle(i.handle, data); }
static hsa_status_t collect_cache(hsa_cache_t c, void *data) { return collect_handle(c.handle, data); }
static hsa_status_t collect_wavefront(hsa_wavefront_t w, void *data) { return collect_handle(w.handle, data); }
static hsa_status_t collect_symbol(hsa_executable_t e, hsa_agent_t a, hsa_executable_symbol_t s, void *data) {
    (void)e;
    (void)a;
    return collect_handle(s.handle, data);
}

static void check_agent(hsa_agent_t agent, unsigned index) {
    char what[64];
    uint32_t device = 0;
    snprintf(what, sizeof what, "agent%u", index);
    guarded(what, q_agent, &agent, HSA_AGENT_INFO_DEVICE, "HSA_AGENT_INFO_DEVICE", 4, &device);
    bool gpu = device == HSA_DEVICE_TYPE_GPU;
    char name[64] = {0};
    guarded(what, q_agent, &agent, HSA_AGENT_INFO_NAME, "HSA_AGENT_INFO_NAME", gpu ? 63 : 64, name);
    snprintf(what, sizeof what, "agent%u(%s)", index, gpu ? name : "cpu");
    TABLE(what, q_agent, &agent, agent_common);
    if (gpu) {
        TABLE(what, q_agent, &agent, agent_gpu);
        /* ROCr 6.4: GFX9.4 and 9.5 have no images and store one uint32_t zero each. */
        bool images = strncmp(name, "gfx94", 5) != 0 && strncmp(name, "gfx95", 5) != 0;
        for (size_t i = 0; i < sizeof agent_images / sizeof agent_images[0]; i++)
            guarded(what, q_agent, &agent, agent_images[i].attr, agent_images[i].name,
                    images ? agent_images[i].width : 4, NULL);
    } else {
        TABLE(what, q_agent, &agent, agent_cpu);
        TABLE(what, q_agent, &agent, agent_images);
    }
    /* Declared, never answered by ROCr. */
    unanswered(what, q_agent, &agent, HSA_EXT_AGENT_INFO_IMAGE_LINEAR_ROW_PITCH_ALIGNMENT,
               "HSA_EXT_AGENT_INFO_IMAGE_LINEAR_ROW_PITCH_ALIGNMENT");
    if (!gpu) {
        unanswered(what, q_agent, &agent, HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES,
                   "HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES");
    }
    uint16_t mask = 0xffff;
    unsigned char guard[GUARD * 2 + 2];
    memset(guard, PATTERN, sizeof guard);
    checked++;
    if (SOFT(hsa_agent_get_exception_policies(agent, HSA_PROFILE_BASE, (uint16_t *)(guard + GUARD)))) {
        for (size_t i = 0; i < sizeof guard; i++)
            if ((i < GUARD || i >= GUARD + 2) && guard[i] != PATTERN) {
                fprintf(stderr, "GUARD %s hsa_agent_get_exception_policies wrote byte %ld\n", what,
                        (long)i - GUARD);
                problems++;
                break;
            }
        memcpy(&mask, guard + GUARD, 2);
        SG_EXPECT(mask == 0, "%s: exception policy mask 0x%x, ROCr answers 0", what, mask);
    }

    /* Caches. */
    handles_t caches = {0};
    if (SOFT(hsa_agent_iterate_caches(agent, collect_cache, &caches)) && gpu)
        SG_EXPECT(caches.n > 0, "%s: no caches", what);
    for (size_t c = 0; c < caches.n; c++) {
        char cw[96];
        snprintf(cw, sizeof cw, "%s/cache%zu", what, c);
        hsa_cache_t cache = {caches.h[c]};
        TABLE(cw, q_cache, &cache, cache_attrs);
        uint32_t len = 0;
        const char *cname = NULL;
        SG_CHECK(hsa_cache_get_info(cache, HSA_CACHE_INFO_NAME_LENGTH, &len));
        SG_CHECK(hsa_cache_get_info(cache, HSA_CACHE_INFO_NAME, (void *)&cname));
        SG_EXPECT(cname && strlen(cname) == len, "%s: the name pointer does not hold NAME_LENGTH (%u) chars",
                  cw, len);
        printf("%s: %s\n", cw, cname);
    }

    /* Pools, and every agent's view of them (below, in main). */
    handles_t pools = {0};
    SG_CHECK(hsa_amd_agent_iterate_memory_pools(agent, collect_pool, &pools));
    for (size_t p = 0; p < pools.n; p++) {
        char pw[96];
        snprintf(pw, sizeof pw, "%s/pool%zu", what, p);
        hsa_amd_memory_pool_t pool = {pools.h[p]};
        TABLE(pw, q_pool, &pool, pool_attrs);
        uint32_t segment = 0;
        SG_CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
        /* ROCr answers a location for system and device memory, not for LDS. */
        if (segment == HSA_AMD_SEGMENT_GROUP)
            unanswered(pw, q_pool, &pool, POOL_LOCATION, "HSA_AMD_MEMORY_POOL_INFO_LOCATION");
        else
            guarded(pw, q_pool, &pool, POOL_LOCATION, "HSA_AMD_MEMORY_POOL_INFO_LOCATION", 4, NULL);
    }
    printf("%s: %zu pools, %zu caches\n", what, pools.n, caches.n);

    /* Regions this agent sees. */
    handles_t regions = {0};
    SG_CHECK(hsa_agent_iterate_regions(agent, collect_region, &regions));
    SG_EXPECT(regions.n > 0, "%s: no regions", what);
    for (size_t r = 0; r < regions.n; r++) {
        char rw[96];
        snprintf(rw, sizeof rw, "%s/region%zu", what, r);
        hsa_region_t region = {regions.h[r]};
        TABLE(rw, q_region, &region, region_attrs);
        unanswered(rw, q_region, &region, HSA_REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE,
                   "HSA_REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE");
    }

    /* ISAs and their wavefronts. */
    handles_t isas = {0};
    SG_CHECK(hsa_agent_iterate_isas(agent, collect_isa, &isas));
    if (gpu) SG_EXPECT(isas.n == 1, "%s: %zu ISAs", what, isas.n);
    for (size_t i = 0; i < isas.n; i++) {
        char iw[96];
        snprintf(iw, sizeof iw, "%s/isa%zu", what, i);
        hsa_isa_t isa = {isas.h[i]};
        TABLE(iw, q_isa_alt, &isa, isa_attrs);
        TABLE(iw, q_isa, &isa, isa_attrs);
        uint32_t len = 0;
        SG_CHECK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME_LENGTH, &len));
        guarded(iw, q_isa_alt, &isa, HSA_ISA_INFO_NAME, "HSA_ISA_INFO_NAME", len, NULL);
        guarded(iw, q_isa, &isa, HSA_ISA_INFO_NAME, "HSA_ISA_INFO_NAME", len, NULL);
        handles_t wfs = {0};
        if (SOFT(hsa_isa_iterate_wavefronts(isa, collect_wavefront, &wfs))) {
            SG_EXPECT(wfs.n == 1, "%s: %zu wavefronts", iw, wfs.n);
            hsa_wavefront_t wf = {wfs.h[0]};
            guarded(iw, q_wavefront, &wf, HSA_WAVEFRONT_INFO_SIZE, "HSA_WAVEFRONT_INFO_SIZE", 4, NULL);
        }
        uint16_t m = 0;
        hsa_round_method_t rm = HSA_ROUND_METHOD_SINGLE;
        bool compatible = true;
        SOFT(hsa_isa_get_exception_policies(isa, HSA_PROFILE_BASE, &m));
        SOFT(hsa_isa_get_round_method(isa, HSA_FP_TYPE_32, HSA_FLUSH_MODE_FTZ, &rm));
        SOFT(hsa_isa_compatible(isa, isa, &compatible));
        SG_EXPECT(m == 0 && rm == HSA_ROUND_METHOD_SINGLE && compatible,
                  "%s: exception mask %u, round method %d, self-compatible %d", iw, m, (int)rm, compatible);
    }
}

static void *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) SG_FAIL("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *b = malloc((size_t)n);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) SG_FAIL("cannot read %s", path);
    fclose(f);
    *size = (size_t)n;
    return b;
}

static void check_executable(hsa_agent_t gpu, const char *path) {
    size_t size = 0;
    void *bytes = read_file(path, &size);
    hsa_code_object_reader_t reader;
    SG_CHECK(hsa_code_object_reader_create_from_memory(bytes, size, &reader));
    hsa_executable_t exec;
    SG_CHECK(hsa_executable_create_alt(HSA_PROFILE_BASE, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exec));
    SG_CHECK(hsa_executable_load_agent_code_object(exec, gpu, reader, NULL, NULL));
    SG_CHECK(hsa_executable_freeze(exec, NULL));
    TABLE("executable", q_executable, &exec, executable_attrs);

    handles_t syms = {0};
    SG_CHECK(hsa_executable_iterate_agent_symbols(exec, gpu, collect_symbol, &syms));
    unsigned kernels = 0, variables = 0;
    for (size_t i = 0; i < syms.n; i++) {
        hsa_executable_symbol_t sym = {syms.h[i]};
        char sw[64];
        snprintf(sw, sizeof sw, "symbol%zu", i);
        TABLE(sw, q_symbol, &sym, symbol_common);
        uint32_t len = 0, mlen = 0, type = 0;
        SG_CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &len));
        SG_CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME_LENGTH, &mlen));
        SG_CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &type));
        char name[256] = {0};
        if (len >= sizeof name) SG_FAIL("%s: name length %u", sw, len);
        /* NAME: exactly NAME_LENGTH bytes, no NUL (loader/executable.cpp). */
        guarded(sw, q_symbol, &sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME, "HSA_EXECUTABLE_SYMBOL_INFO_NAME", len, name);
        guarded(sw, q_symbol, &sym, HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME,
                "HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME", mlen, NULL);
        if (type == HSA_SYMBOL_KIND_KERNEL) {
            kernels++;
            TABLE(sw, q_symbol, &sym, symbol_kernel);
            unanswered(sw, q_symbol, &sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE,
                       "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE");
        } else {
            variables++;
            TABLE(sw, q_symbol, &sym, symbol_variable);
            unanswered(sw, q_symbol, &sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                       "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE");
        }
        printf("%s: %s %s\n", sw, type == HSA_SYMBOL_KIND_KERNEL ? "kernel" : "variable", name);
    }
    SG_EXPECT(kernels > 0 && variables > 0, "the code object has %u kernels and %u variables; need both",
              kernels, variables);
    /* A handle that names no symbol (another object's handle, a symbol's index far past the
       table, zero) is HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL, and nothing is written. */
    const uint64_t bogus[] = {exec.handle, syms.h[0] + (1ull << 20), 0};
    for (size_t i = 0; i < sizeof bogus / sizeof bogus[0]; i++) {
        uint32_t len = 0xa5a5a5a5u;
        hsa_status_t st = hsa_executable_symbol_get_info((hsa_executable_symbol_t){bogus[i]},
                                                         HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &len);
        SG_EXPECT(st == HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL && len == 0xa5a5a5a5u,
                  "symbol_get_info(%#llx): status %#x, wrote %#x", (unsigned long long)bogus[i], st, len);
    }
    printf("bogus symbol handles: refused\n");
    printf("sg: kernels=%u\nsg: variables=%u\n", kernels, variables);
    SG_CHECK(hsa_executable_destroy(exec));
    SG_CHECK(hsa_code_object_reader_destroy(reader));
    free(bytes);
}

int main(int argc, char **argv) {
    if (argc != 2) SG_FAIL("usage: attr_guard CODE_OBJECT");
    SG_CHECK(hsa_init());
    TABLE("system", q_system, NULL, system_attrs);

    agents_t agents = {0};
    SG_CHECK(hsa_iterate_agents(collect_agent, &agents));
    SG_EXPECT(agents.n >= 2, "%zu agents", agents.n);
    bool have_gpu = false;
    hsa_agent_t first_gpu = {0};
    for (size_t i = 0; i < agents.n; i++) {
        check_agent(agents.agents[i], (unsigned)i);
        uint32_t device = 0;
        SG_CHECK(hsa_agent_get_info(agents.agents[i], HSA_AGENT_INFO_DEVICE, &device));
        if (device == HSA_DEVICE_TYPE_GPU && !have_gpu) {
            have_gpu = true;
            first_gpu = agents.agents[i];
        }
    }
    SG_EXPECT(have_gpu, "no GPU agent");

    /* Every agent's view of every pool. */
    for (size_t owner = 0; owner < agents.n; owner++) {
        handles_t pools = {0};
        SG_CHECK(hsa_amd_agent_iterate_memory_pools(agents.agents[owner], collect_pool, &pools));
        for (size_t p = 0; p < pools.n; p++)
            for (size_t a = 0; a < agents.n; a++) {
                char w[64];
                snprintf(w, sizeof w, "agent%zu/view-of-agent%zu-pool%zu", a, owner, p);
                agent_pool_t ap = {agents.agents[a], {pools.h[p]}};
                TABLE(w, q_agent_pool, &ap, agent_pool_attrs);
            }
    }

    check_executable(first_gpu, argv[1]);

    printf("sg: agents=%zu\nsg: checked=%u\nsg: problems=%u\n", agents.n, checked, problems);
    SG_CHECK(hsa_shut_down());
    if (problems) {
        fprintf(stderr, "FAIL %u of %u attribute checks failed (see the GUARD/ANSWER lines)\n", problems,
                checked);
        return 1;
    }
    printf("sg: done=1\n");
    return 0;
}
