/* The image extension through the public API and the pinned headers: capabilities for every
 * format and geometry, data sizes with and without a layout, create and destroy, import,
 * export, copy and clear moving bytes in the image's linear layout (checked byte for byte,
 * padding included), samplers, the descriptors behind the handles, hsa_amd_image_*, and the
 * error for every kind of bad argument or handle. No packet is submitted.
 *
 * The expected values are ROCr's (its image format table and its address library's linear
 * layout on GFX9: rows padded to 256 bytes, 256-byte alignment); where ROCr would dereference
 * something unchecked (a forged handle, an out-of-range channel order, an out-of-bounds
 * region) SoftGPU returns HSA_STATUS_ERROR_INVALID_ARGUMENT, and so does this test expect. */
#include "common.h"

#include <hsa/hsa_ext_image.h>

static unsigned g_checked; /* byte-exact comparisons made */

static void expect_status(hsa_status_t got, hsa_status_t want, const char *what) {
    SG_EXPECT(got == want, "%s: status 0x%x, expected 0x%x", what, (unsigned)got, (unsigned)want);
}

static unsigned char pattern(unsigned seed, size_t i) {
    uint64_t x = (uint64_t)seed * 0x9E3779B97F4A7C15ull + (uint64_t)i * 0xD1B54A32D192ED03ull;
    x ^= x >> 31;
    return (unsigned char)(x * 0xBF58476D1CE4E5B9ull >> 56);
}

static void fill(void *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) ((unsigned char *)p)[i] = pattern(seed, i);
}

static void expect_bytes(const void *got, const void *want, size_t n, const char *what) {
    const unsigned char *g = got, *w = want;
    for (size_t i = 0; i < n; i++)
        SG_EXPECT(g[i] == w[i], "%s: byte %zu is 0x%02x, expected 0x%02x", what, i, g[i], w[i]);
    g_checked++;
}

static void expect_fill(const void *got, unsigned char b, size_t n, const char *what) {
    const unsigned char *g = got;
    for (size_t i = 0; i < n; i++)
        SG_EXPECT(g[i] == b, "%s: byte %zu is 0x%02x, expected it untouched (0x%02x)", what, i, g[i], b);
    g_checked++;
}

static hsa_ext_image_descriptor_t desc(hsa_ext_image_geometry_t g, size_t w, size_t h, size_t d, size_t a,
                                       hsa_ext_image_channel_order_t o, hsa_ext_image_channel_type_t t) {
    hsa_ext_image_descriptor_t x;
    memset(&x, 0, sizeof x);
    x.geometry = g;
    x.width = w;
    x.height = h;
    x.depth = d;
    x.array_size = a;
    x.format.channel_order = o;
    x.format.channel_type = t;
    return x;
}

static hsa_ext_image_region_t region(uint32_t ox, uint32_t oy, uint32_t oz, uint32_t rx, uint32_t ry, uint32_t rz) {
    hsa_ext_image_region_t r;
    r.offset.x = ox;
    r.offset.y = oy;
    r.offset.z = oz;
    r.range.x = rx;
    r.range.y = ry;
    r.range.z = rz;
    return r;
}

/* ---- the format table (ROCr's image_lut, the same for every GPU family) ---- */

#define RW (HSA_EXT_IMAGE_CAPABILITY_READ_ONLY | HSA_EXT_IMAGE_CAPABILITY_WRITE_ONLY | HSA_EXT_IMAGE_CAPABILITY_READ_WRITE)
#define ROWO (HSA_EXT_IMAGE_CAPABILITY_READ_ONLY | HSA_EXT_IMAGE_CAPABILITY_WRITE_ONLY)

static uint32_t expected_cap(unsigned o, unsigned t, unsigned g) {
    /* Types of the plain orders: every one but UNORM_INT24 and the three packed ones. */
    bool plain = t != HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT24 && t != HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_555 &&
                 t != HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_565 && t != HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_101010;
    bool byte8 = t == HSA_EXT_IMAGE_CHANNEL_TYPE_SNORM_INT8 || t == HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8 ||
                 t == HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT8 || t == HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8;
    bool normf = t == HSA_EXT_IMAGE_CHANNEL_TYPE_SNORM_INT8 || t == HSA_EXT_IMAGE_CHANNEL_TYPE_SNORM_INT16 ||
                 t == HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8 || t == HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT16 ||
                 t == HSA_EXT_IMAGE_CHANNEL_TYPE_HALF_FLOAT || t == HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT;
    uint32_t cap = 0;
    switch (o) {
    case HSA_EXT_IMAGE_CHANNEL_ORDER_A:
    case HSA_EXT_IMAGE_CHANNEL_ORDER_R:
    case HSA_EXT_IMAGE_CHANNEL_ORDER_RG:
    case HSA_EXT_IMAGE_CHANNEL_ORDER_RA:
    case HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA:
        cap = plain ? RW : 0;
        break;
    case HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA:
    case HSA_EXT_IMAGE_CHANNEL_ORDER_ARGB:
        cap = byte8 ? RW : 0;
        break;
    case HSA_EXT_IMAGE_CHANNEL_ORDER_RGB:
        cap = (t == HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_555 || t == HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_565 ||
               t == HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_101010) ? RW : 0;
        break;
    case HSA_EXT_IMAGE_CHANNEL_ORDER_SRGBA:
        cap = t == HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8 ? HSA_EXT_IMAGE_CAPABILITY_READ_ONLY : 0;
        break;
    case HSA_EXT_IMAGE_CHANNEL_ORDER_INTENSITY:
    case HSA_EXT_IMAGE_CHANNEL_ORDER_LUMINANCE:
        cap = normf ? RW : 0;
        break;
    case HSA_EXT_IMAGE_CHANNEL_ORDER_DEPTH:
        cap = (t == HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT16 || t == HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT) ? ROWO : 0;
        break;
    default:
        cap = 0;
    }
    if (g == HSA_EXT_IMAGE_GEOMETRY_1DB) {
        if (o == HSA_EXT_IMAGE_CHANNEL_ORDER_SRGBA || t == HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_555 ||
            t == HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_565)
            cap = 0;
    }
    if ((g == HSA_EXT_IMAGE_GEOMETRY_2DDEPTH || g == HSA_EXT_IMAGE_GEOMETRY_2DADEPTH) &&
        o != HSA_EXT_IMAGE_CHANNEL_ORDER_DEPTH && o != HSA_EXT_IMAGE_CHANNEL_ORDER_DEPTH_STENCIL)
        cap = 0;
    return cap;
}

static void capabilities(const sg_ctx *ctx) {
    unsigned supported_2d = 0;
    for (unsigned g = 0; g <= HSA_EXT_IMAGE_GEOMETRY_2DADEPTH; g++)
        for (unsigned o = 0; o <= HSA_EXT_IMAGE_CHANNEL_ORDER_DEPTH_STENCIL; o++)
            for (unsigned t = 0; t <= HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT; t++) {
                hsa_ext_image_format_t f = {t, o};
                uint32_t mask = 0xdead, lin = 0xdead, cpu = 0xdead;
                SG_CHECK(hsa_ext_image_get_capability(ctx->gpu, (hsa_ext_image_geometry_t)g, &f, &mask));
                SG_EXPECT(mask == expected_cap(o, t, g), "capability of order %u type %u geometry %u: 0x%x, expected 0x%x",
                          o, t, g, mask, expected_cap(o, t, g));
                SG_CHECK(hsa_ext_image_get_capability_with_layout(ctx->gpu, (hsa_ext_image_geometry_t)g, &f,
                                                                  HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR, &lin));
                SG_EXPECT(lin == mask, "linear capability differs: 0x%x vs 0x%x", lin, mask);
                SG_CHECK(hsa_ext_image_get_capability(ctx->cpu, (hsa_ext_image_geometry_t)g, &f, &cpu));
                SG_EXPECT(cpu == 0, "the CPU agent has image capability 0x%x", cpu);
                if (g == HSA_EXT_IMAGE_GEOMETRY_2D && mask != 0) supported_2d++;
            }
    printf("sg: formats_2d=%u\n", supported_2d);

    hsa_ext_image_format_t f = {HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA};
    uint32_t mask = 0;
    hsa_agent_t zero = {0}, forged = {0x1234};
    expect_status(hsa_ext_image_get_capability(zero, HSA_EXT_IMAGE_GEOMETRY_2D, &f, &mask), HSA_STATUS_ERROR_INVALID_AGENT,
                  "get_capability, zero agent");
    expect_status(hsa_ext_image_get_capability(forged, HSA_EXT_IMAGE_GEOMETRY_2D, &f, &mask),
                  HSA_STATUS_ERROR_INVALID_AGENT, "get_capability, forged agent");
    expect_status(hsa_ext_image_get_capability(ctx->gpu, HSA_EXT_IMAGE_GEOMETRY_2D, NULL, &mask),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "get_capability, NULL format");
    expect_status(hsa_ext_image_get_capability(ctx->gpu, HSA_EXT_IMAGE_GEOMETRY_2D, &f, NULL),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "get_capability, NULL mask");
    expect_status(hsa_ext_image_get_capability(ctx->gpu, (hsa_ext_image_geometry_t)8, &f, &mask),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "get_capability, geometry 8");
    hsa_ext_image_format_t bad_order = {HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT, 20};
    expect_status(hsa_ext_image_get_capability(ctx->gpu, HSA_EXT_IMAGE_GEOMETRY_2D, &bad_order, &mask),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "get_capability, channel order 20");
    hsa_ext_image_format_t bad_type = {16, HSA_EXT_IMAGE_CHANNEL_ORDER_R};
    expect_status(hsa_ext_image_get_capability(ctx->gpu, HSA_EXT_IMAGE_GEOMETRY_2D, &bad_type, &mask),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "get_capability, channel type 16");
    /* ROCr's _with_layout accepts only the linear layout. */
    expect_status(hsa_ext_image_get_capability_with_layout(ctx->gpu, HSA_EXT_IMAGE_GEOMETRY_2D, &f,
                                                           HSA_EXT_IMAGE_DATA_LAYOUT_OPAQUE, &mask),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "get_capability_with_layout, opaque");
}

/* ---- data sizes ---- */

static hsa_ext_image_data_info_t info(const sg_ctx *ctx, hsa_ext_image_descriptor_t d) {
    hsa_ext_image_data_info_t i = {0, 0};
    SG_CHECK(hsa_ext_image_data_get_info(ctx->gpu, &d, HSA_ACCESS_PERMISSION_RW, &i));
    return i;
}

static hsa_status_t info_linear(const sg_ctx *ctx, hsa_ext_image_descriptor_t d, size_t row, size_t slice,
                                hsa_ext_image_data_info_t *out) {
    return hsa_ext_image_data_get_info_with_layout(ctx->gpu, &d, HSA_ACCESS_PERMISSION_RW,
                                                   HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR, row, slice, out);
}

static void expect_info(hsa_ext_image_data_info_t i, size_t size, const char *what) {
    SG_EXPECT(i.size == size && i.alignment == 256, "%s: size %zu alignment %zu, expected %zu and 256", what, i.size,
              i.alignment, size);
}

static void data_info(const sg_ctx *ctx) {
    hsa_ext_image_data_info_t i;
    /* 100 floats pad to 128 (512 bytes) per row. */
    hsa_ext_image_descriptor_t d2 = desc(HSA_EXT_IMAGE_GEOMETRY_2D, 100, 7, 0, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_R,
                                         HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT);
    expect_info(info(ctx, d2), 512 * 7, "2D 100x7 R32F, opaque");
    SG_CHECK(info_linear(ctx, d2, 512, 0, &i));
    expect_info(i, 512 * 7, "2D 100x7 R32F, linear, pitch 512");
    SG_CHECK(info_linear(ctx, d2, 1024, 1024 * 7, &i));
    expect_info(i, 1024 * 7, "2D 100x7 R32F, linear, pitch 1024");
    /* The default linear pitch is width x element (400 bytes): ROCr's address library refuses
     * a pitch that is not a multiple of 256 bytes, with HSA_STATUS_ERROR, and so does SoftGPU. */
    expect_status(info_linear(ctx, d2, 0, 0, &i), HSA_STATUS_ERROR, "linear, default pitch 400");
    expect_status(info_linear(ctx, d2, 256, 0, &i), HSA_STATUS_ERROR, "linear, pitch below the padded row");
    expect_status(info_linear(ctx, d2, 514, 0, &i), (hsa_status_t)HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED,
                  "linear, pitch not a whole number of elements");
    expect_status(info_linear(ctx, d2, 512, 512 * 8, &i), (hsa_status_t)HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED,
                  "linear, slice pitch not row x height");
    expect_status(info_linear(ctx, d2, (size_t)1 << 62, 0, &i), (hsa_status_t)HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED,
                  "linear, a row pitch whose image size does not fit 64 bits");

    expect_info(info(ctx, desc(HSA_EXT_IMAGE_GEOMETRY_1D, 64, 0, 0, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA,
                               HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT)),
                1024, "1D 64 RGBA32F");
    expect_info(info(ctx, desc(HSA_EXT_IMAGE_GEOMETRY_3D, 64, 4, 3, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA,
                               HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8)),
                256 * 4 * 3, "3D 64x4x3 RGBA8");
    expect_info(info(ctx, desc(HSA_EXT_IMAGE_GEOMETRY_1DA, 64, 0, 0, 5, HSA_EXT_IMAGE_CHANNEL_ORDER_R,
                               HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT32)),
                256 * 5, "1DA 64 x5 R32UI");
    expect_info(info(ctx, desc(HSA_EXT_IMAGE_GEOMETRY_2DA, 16, 3, 0, 2, HSA_EXT_IMAGE_CHANNEL_ORDER_RG,
                               HSA_EXT_IMAGE_CHANNEL_TYPE_HALF_FLOAT)),
                256 * 3 * 2, "2DA 16x3 x2 RG16F");
    expect_info(info(ctx, desc(HSA_EXT_IMAGE_GEOMETRY_1DB, 1000, 0, 0, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_R,
                               HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8)),
                1024, "1DB 1000 R8UI");
    expect_info(info(ctx, desc(HSA_EXT_IMAGE_GEOMETRY_2DDEPTH, 32, 32, 0, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_DEPTH,
                               HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT16)),
                256 * 32, "2DDEPTH 32x32 D16");

    hsa_ext_image_descriptor_t wide = desc(HSA_EXT_IMAGE_GEOMETRY_2D, 16385, 1, 0, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_R,
                                           HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT);
    expect_status(hsa_ext_image_data_get_info(ctx->gpu, &wide, HSA_ACCESS_PERMISSION_RW, &i),
                  (hsa_status_t)HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED, "2D width 16385");
    hsa_ext_image_descriptor_t deep = desc(HSA_EXT_IMAGE_GEOMETRY_3D, 16, 16, 8193, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_R,
                                           HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT);
    expect_status(hsa_ext_image_data_get_info(ctx->gpu, &deep, HSA_ACCESS_PERMISSION_RW, &i),
                  (hsa_status_t)HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED, "3D depth 8193");
    hsa_ext_image_descriptor_t rgbx = desc(HSA_EXT_IMAGE_GEOMETRY_2D, 16, 16, 0, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBX,
                                           HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8);
    expect_status(hsa_ext_image_data_get_info(ctx->gpu, &rgbx, HSA_ACCESS_PERMISSION_RW, &i),
                  (hsa_status_t)HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED, "RGBX");
    expect_status(hsa_ext_image_data_get_info(ctx->cpu, &d2, HSA_ACCESS_PERMISSION_RW, &i),
                  (hsa_status_t)HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED, "on the CPU agent");
    expect_status(hsa_ext_image_data_get_info(ctx->gpu, NULL, HSA_ACCESS_PERMISSION_RW, &i),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "NULL descriptor");
    expect_status(hsa_ext_image_data_get_info(ctx->gpu, &d2, HSA_ACCESS_PERMISSION_RW, NULL),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "NULL info");
    expect_status(hsa_ext_image_data_get_info(ctx->gpu, &d2, (hsa_access_permission_t)0, &i),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "permission 0");
    expect_status(hsa_ext_image_data_get_info(ctx->gpu, &d2, (hsa_access_permission_t)4, &i),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "permission 4");
    hsa_ext_image_descriptor_t badg = d2;
    badg.geometry = (hsa_ext_image_geometry_t)9;
    expect_status(hsa_ext_image_data_get_info(ctx->gpu, &badg, HSA_ACCESS_PERMISSION_RW, &i),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "geometry 9");
    hsa_agent_t zero = {0};
    expect_status(hsa_ext_image_data_get_info(zero, &d2, HSA_ACCESS_PERMISSION_RW, &i), HSA_STATUS_ERROR_INVALID_AGENT,
                  "zero agent");
    expect_status(hsa_ext_image_data_get_info_with_layout(ctx->gpu, &d2, HSA_ACCESS_PERMISSION_RW,
                                                          HSA_EXT_IMAGE_DATA_LAYOUT_OPAQUE, 512, 0, &i),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "data_get_info_with_layout, opaque");
}

/* ---- image memory ---- */

static hsa_amd_memory_pool_t g_gpu_pool;
static bool g_have_gpu_pool;

static hsa_status_t gpu_pool_cb(hsa_amd_memory_pool_t pool, void *data) {
    (void)data;
    hsa_amd_segment_t segment;
    SG_CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
    bool alloc = false;
    SG_CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &alloc));
    if (segment == HSA_AMD_SEGMENT_GLOBAL && alloc && !g_have_gpu_pool) {
        g_gpu_pool = pool;
        g_have_gpu_pool = true;
    }
    return HSA_STATUS_SUCCESS;
}

/* Device memory for an image, every byte set to `b`. */
static unsigned char *image_memory(size_t size, unsigned char b) {
    void *p = NULL;
    SG_CHECK(hsa_amd_memory_pool_allocate(g_gpu_pool, size, 0, &p));
    SG_EXPECT(((uintptr_t)p & 255) == 0, "device allocation %p is not 256-byte aligned", p);
    memset(p, b, size);
    return p;
}

static hsa_ext_image_t create_linear(const sg_ctx *ctx, hsa_ext_image_descriptor_t d, void *data, size_t row,
                                     size_t slice) {
    hsa_ext_image_t img = {0};
    SG_CHECK(hsa_ext_image_create_with_layout(ctx->gpu, &d, data, HSA_ACCESS_PERMISSION_RW,
                                              HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR, row, slice, &img));
    SG_EXPECT(img.handle != 0, "hsa_ext_image_create_with_layout gave a zero handle");
    return img;
}

/* The handle is the address of a 12-dword descriptor (ROCr's layout, which HIP copies). */
static void descriptors(const sg_ctx *ctx) {
    hsa_ext_image_descriptor_t d = desc(HSA_EXT_IMAGE_GEOMETRY_2D, 100, 7, 0, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA,
                                        HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8);
    hsa_ext_image_data_info_t i = info(ctx, d);
    unsigned char *mem = image_memory(i.size, 0);
    hsa_ext_image_t img = {0};
    SG_CHECK(hsa_ext_image_create(ctx->gpu, &d, mem, HSA_ACCESS_PERMISSION_RO, &img));
    SG_EXPECT(img.handle % 16 == 0, "image handle 0x%llx is not 16-byte aligned", (unsigned long long)img.handle);
    const uint32_t *w = (const uint32_t *)(uintptr_t)img.handle;
    uint64_t base = ((uint64_t)w[0] << 8) | ((uint64_t)(w[1] & 0xff) << 40);
    SG_EXPECT(base == (uint64_t)(uintptr_t)mem, "descriptor base 0x%llx, image data %p", (unsigned long long)base,
              (void *)mem);
    SG_EXPECT(((w[1] >> 20) & 0x3f) == 10 && ((w[1] >> 26) & 0xf) == 0, "BGRA8 descriptor format %u/%u",
              (w[1] >> 20) & 0x3f, (w[1] >> 26) & 0xf);
    SG_EXPECT((w[2] & 0x3fff) == 99 && ((w[2] >> 14) & 0x3fff) == 6, "descriptor width/height fields %u/%u",
              w[2] & 0x3fff, (w[2] >> 14) & 0x3fff);
    /* BGRA: x <- Z, y <- Y, z <- X, w <- W; TYPE 2D (9). */
    SG_EXPECT((w[3] & 0xfff) == (6u | 5u << 3 | 4u << 6 | 7u << 9) && (w[3] >> 28) == 9, "descriptor word 3 0x%08x",
              w[3]);
    SG_EXPECT(((w[4] >> 13) & 0xffff) == 127, "descriptor pitch field %u, expected 127", (w[4] >> 13) & 0xffff);
    SG_EXPECT(w[8] == HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8 && w[9] == HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA &&
                  w[10] == 100 && w[11] == 0,
              "descriptor words 8-11: %u %u %u %u", w[8], w[9], w[10], w[11]);
    SG_CHECK(hsa_ext_image_destroy(ctx->gpu, img));

    /* Bad create arguments. */
    hsa_agent_t zero = {0};
    expect_status(hsa_ext_image_create(ctx->gpu, &d, mem + 16, HSA_ACCESS_PERMISSION_RW, &img),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "create, data not 256-byte aligned");
    expect_status(hsa_ext_image_create(ctx->gpu, &d, NULL, HSA_ACCESS_PERMISSION_RW, &img),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "create, NULL data");
    expect_status(hsa_ext_image_create(ctx->gpu, NULL, mem, HSA_ACCESS_PERMISSION_RW, &img),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "create, NULL descriptor");
    expect_status(hsa_ext_image_create(ctx->gpu, &d, mem, HSA_ACCESS_PERMISSION_RW, NULL),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "create, NULL out");
    expect_status(hsa_ext_image_create(zero, &d, mem, HSA_ACCESS_PERMISSION_RW, &img), HSA_STATUS_ERROR_INVALID_AGENT,
                  "create, zero agent");
    expect_status(hsa_ext_image_create(ctx->cpu, &d, mem, HSA_ACCESS_PERMISSION_RW, &img),
                  (hsa_status_t)HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED, "create on the CPU agent");
    expect_status(hsa_ext_image_create_with_layout(ctx->gpu, &d, mem, HSA_ACCESS_PERMISSION_RW,
                                                   HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR, 514, 0, &img),
                  (hsa_status_t)HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED, "create_with_layout, pitch 514");
    expect_status(hsa_ext_image_create_with_layout(ctx->gpu, &d, mem, HSA_ACCESS_PERMISSION_RW,
                                                   HSA_EXT_IMAGE_DATA_LAYOUT_OPAQUE, 0, 0, &img),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "create_with_layout, opaque");

    /* Destroy: twice, forged, zero agent. */
    SG_CHECK(hsa_ext_image_create(ctx->gpu, &d, mem, HSA_ACCESS_PERMISSION_RW, &img));
    expect_status(hsa_ext_image_destroy(zero, img), HSA_STATUS_ERROR_INVALID_AGENT, "destroy, zero agent");
    SG_CHECK(hsa_ext_image_destroy(ctx->gpu, img));
    expect_status(hsa_ext_image_destroy(ctx->gpu, img), HSA_STATUS_ERROR_INVALID_ARGUMENT, "destroy twice");
    hsa_ext_image_t forged = {0x1234560};
    expect_status(hsa_ext_image_destroy(ctx->gpu, forged), HSA_STATUS_ERROR_INVALID_ARGUMENT, "destroy, forged handle");
    hsa_ext_image_t zero_img = {0};
    expect_status(hsa_ext_image_destroy(ctx->gpu, zero_img), HSA_STATUS_ERROR_INVALID_ARGUMENT, "destroy, zero handle");
    SG_CHECK(hsa_amd_memory_pool_free(mem));
}

/* ---- import / export ---- */

static void transfers(const sg_ctx *ctx) {
    /* A 2D RGBA8 image, 70 x 3, linear with a 512-byte pitch: rows 0, 512, 1024. */
    const size_t row = 512, e = 4, w = 70, h = 3;
    hsa_ext_image_descriptor_t d = desc(HSA_EXT_IMAGE_GEOMETRY_2D, w, h, 0, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA,
                                        HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8);
    hsa_ext_image_data_info_t i;
    SG_CHECK(info_linear(ctx, d, row, 0, &i));
    expect_info(i, row * h, "2D 70x3 RGBA8UI, pitch 512");
    unsigned char *mem = image_memory(i.size, 0xEE);
    hsa_ext_image_t img = create_linear(ctx, d, mem, row, 0);

    unsigned char src[70 * 3 * 4], out[3 * 300];
    fill(src, sizeof src, 1);
    hsa_ext_image_region_t all = region(0, 0, 0, (uint32_t)w, (uint32_t)h, 1);
    SG_CHECK(hsa_ext_image_import(ctx->gpu, src, 0, 0, img, &all)); /* pitch 0: packed rows */
    for (size_t y = 0; y < h; y++) {
        expect_bytes(mem + y * row, src + y * w * e, w * e, "imported row");
        expect_fill(mem + y * row + w * e, 0xEE, row - w * e, "row padding after import");
    }
    /* Export with a 300-byte destination pitch: the gaps stay as they were. */
    memset(out, 0xAB, sizeof out);
    SG_CHECK(hsa_ext_image_export(ctx->gpu, img, out, 300, 0, &all));
    for (size_t y = 0; y < h; y++) {
        expect_bytes(out + y * 300, src + y * w * e, w * e, "exported row");
        expect_fill(out + y * 300 + w * e, 0xAB, 300 - w * e, "destination gap after export");
    }
    /* A sub-region: 10 x 2 elements at (5, 1), from a source with a 64-byte pitch. */
    unsigned char sub[2 * 64];
    fill(sub, sizeof sub, 2);
    hsa_ext_image_region_t part = region(5, 1, 0, 10, 2, 1);
    SG_CHECK(hsa_ext_image_import(ctx->gpu, sub, 64, 0, img, &part));
    for (size_t y = 0; y < 2; y++) {
        expect_bytes(mem + (1 + y) * row + 5 * e, sub + y * 64, 10 * e, "sub-region row");
        expect_bytes(mem + (1 + y) * row, src + (1 + y) * w * e, 5 * e, "left of the sub-region");
        expect_bytes(mem + (1 + y) * row + 15 * e, src + (1 + y) * w * e + 15 * e, (w - 15) * e,
                     "right of the sub-region");
    }
    expect_bytes(mem, src, w * e, "row 0 untouched by the sub-region import");

    /* Out-of-bounds regions and bad arguments: refused, nothing written. */
    unsigned char before[512 * 3];
    memcpy(before, mem, sizeof before);
    hsa_ext_image_region_t oob = region(61, 0, 0, 10, 1, 1);
    expect_status(hsa_ext_image_import(ctx->gpu, src, 0, 0, img, &oob), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "import past the right edge");
    oob = region(0, 2, 0, 1, 2, 1);
    expect_status(hsa_ext_image_export(ctx->gpu, img, out, 0, 0, &oob), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "export past the last row");
    oob = region(0, 0, 1, 1, 1, 1);
    expect_status(hsa_ext_image_import(ctx->gpu, src, 0, 0, img, &oob), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "import into slice 1 of a 2D image");
    oob = region(0xffffffffu, 0, 0, 2, 1, 1);
    expect_status(hsa_ext_image_import(ctx->gpu, src, 0, 0, img, &oob), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "import at an offset that wraps");
    /* Buffer pitches whose rows would wrap around the address space. */
    expect_status(hsa_ext_image_export(ctx->gpu, img, out, (size_t)1 << 63, 0, &all), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "export with a row pitch of 2^63");
    expect_bytes(mem, before, sizeof before, "image after refused transfers");
    hsa_ext_image_t forged = {0x7000};
    hsa_agent_t zero = {0};
    expect_status(hsa_ext_image_import(ctx->gpu, src, 0, 0, forged, &all), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "import into a forged handle");
    expect_status(hsa_ext_image_export(ctx->gpu, forged, out, 0, 0, &all), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "export from a forged handle");
    expect_status(hsa_ext_image_import(ctx->gpu, NULL, 0, 0, img, &all), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "import from NULL");
    expect_status(hsa_ext_image_import(ctx->gpu, src, 0, 0, img, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "import, NULL region");
    expect_status(hsa_ext_image_export(ctx->gpu, img, NULL, 0, 0, &all), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "export to NULL");
    expect_status(hsa_ext_image_import(zero, src, 0, 0, img, &all), HSA_STATUS_ERROR_INVALID_AGENT,
                  "import, zero agent");
    /* An empty region moves nothing and succeeds. */
    hsa_ext_image_region_t empty = region(0, 0, 0, 0, 1, 1);
    SG_CHECK(hsa_ext_image_import(ctx->gpu, src, 0, 0, img, &empty));
    SG_CHECK(hsa_ext_image_destroy(ctx->gpu, img));
    expect_status(hsa_ext_image_export(ctx->gpu, img, out, 0, 0, &all), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "export from a destroyed image");
    SG_CHECK(hsa_amd_memory_pool_free(mem));

    /* A 3D image (16 x 2 x 3, R32F, linear: 256-byte rows, 512-byte slices), imported from a
     * buffer with a 96-byte row pitch and a 320-byte slice pitch, and exported packed. */
    hsa_ext_image_descriptor_t d3 = desc(HSA_EXT_IMAGE_GEOMETRY_3D, 16, 2, 3, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_R,
                                         HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT);
    SG_CHECK(info_linear(ctx, d3, 256, 0, &i));
    expect_info(i, 256 * 2 * 3, "3D 16x2x3 R32F");
    mem = image_memory(i.size, 0xEE);
    img = create_linear(ctx, d3, mem, 256, 0);
    unsigned char buf3[3 * 320];
    fill(buf3, sizeof buf3, 3);
    hsa_ext_image_region_t vol = region(0, 0, 0, 16, 2, 3);
    SG_CHECK(hsa_ext_image_import(ctx->gpu, buf3, 96, 320, img, &vol));
    for (size_t z = 0; z < 3; z++)
        for (size_t y = 0; y < 2; y++)
            expect_bytes(mem + z * 512 + y * 256, buf3 + z * 320 + y * 96, 64, "3D row");
    unsigned char packed[16 * 4 * 2 * 3];
    SG_CHECK(hsa_ext_image_export(ctx->gpu, img, packed, 0, 0, &vol));
    for (size_t z = 0; z < 3; z++)
        for (size_t y = 0; y < 2; y++)
            expect_bytes(packed + (z * 2 + y) * 64, buf3 + z * 320 + y * 96, 64, "3D exported packed");
    SG_CHECK(hsa_ext_image_destroy(ctx->gpu, img));
    SG_CHECK(hsa_amd_memory_pool_free(mem));

    /* A 1D array (32 x 4 layers of R16UI): y is the layer, layers a row (256 bytes) apart;
     * in the buffer too, layers are a row pitch apart (ROCr ignores the slice pitch there). */
    hsa_ext_image_descriptor_t da = desc(HSA_EXT_IMAGE_GEOMETRY_1DA, 32, 0, 0, 4, HSA_EXT_IMAGE_CHANNEL_ORDER_R,
                                         HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT16);
    expect_info(info(ctx, da), 256 * 4, "1DA 32 x4 R16UI");
    mem = image_memory(256 * 4, 0xEE);
    hsa_ext_image_t arr = {0};
    SG_CHECK(hsa_ext_image_create(ctx->gpu, &da, mem, HSA_ACCESS_PERMISSION_RW, &arr));
    unsigned char layers[4 * 80];
    fill(layers, sizeof layers, 4);
    hsa_ext_image_region_t lr = region(0, 1, 0, 32, 3, 1);
    SG_CHECK(hsa_ext_image_import(ctx->gpu, layers, 80, 12345, arr, &lr));
    expect_fill(mem, 0xEE, 256, "layer 0 untouched");
    for (size_t l = 0; l < 3; l++) expect_bytes(mem + (1 + l) * 256, layers + l * 80, 64, "1D array layer");
    SG_CHECK(hsa_ext_image_destroy(ctx->gpu, arr));
    SG_CHECK(hsa_amd_memory_pool_free(mem));

    /* A 1D buffer image: bytes in a line. */
    hsa_ext_image_descriptor_t db = desc(HSA_EXT_IMAGE_GEOMETRY_1DB, 300, 0, 0, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_RG,
                                         HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8);
    expect_info(info(ctx, db), 768, "1DB 300 RG8UI");
    mem = image_memory(768, 0xEE);
    hsa_ext_image_t bimg = {0};
    SG_CHECK(hsa_ext_image_create(ctx->gpu, &db, mem, HSA_ACCESS_PERMISSION_RW, &bimg));
    unsigned char lin[600];
    fill(lin, sizeof lin, 5);
    hsa_ext_image_region_t br = region(10, 0, 0, 290, 1, 1);
    SG_CHECK(hsa_ext_image_import(ctx->gpu, lin, 0, 0, bimg, &br));
    expect_fill(mem, 0xEE, 20, "1DB before the region");
    expect_bytes(mem + 20, lin, 580, "1DB region");
    const uint32_t *v = (const uint32_t *)(uintptr_t)bimg.handle;
    SG_EXPECT(v[0] == (uint32_t)(uintptr_t)mem && (v[1] & 0xffff) == (uint32_t)((uint64_t)(uintptr_t)mem >> 32) &&
                  ((v[1] >> 16) & 0x3fff) == 2 && v[2] == 600,
              "1DB buffer resource %08x %08x %08x", v[0], v[1], v[2]);
    SG_CHECK(hsa_ext_image_destroy(ctx->gpu, bimg));
    SG_CHECK(hsa_amd_memory_pool_free(mem));

    /* An opaque image round trip (its layout is SoftGPU's business, the bytes are not). */
    hsa_ext_image_descriptor_t dop = desc(HSA_EXT_IMAGE_GEOMETRY_2DA, 33, 5, 0, 3, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA,
                                          HSA_EXT_IMAGE_CHANNEL_TYPE_HALF_FLOAT);
    i = info(ctx, dop);
    mem = image_memory(i.size, 0);
    hsa_ext_image_t op = {0};
    SG_CHECK(hsa_ext_image_create(ctx->gpu, &dop, mem, HSA_ACCESS_PERMISSION_RW, &op));
    size_t n = 33 * 8 * 5 * 3;
    unsigned char *a = malloc(n), *b = malloc(n);
    SG_EXPECT(a && b, "malloc");
    fill(a, n, 6);
    memset(b, 0, n);
    hsa_ext_image_region_t whole = region(0, 0, 0, 33, 5, 3);
    SG_CHECK(hsa_ext_image_import(ctx->gpu, a, 0, 0, op, &whole));
    SG_CHECK(hsa_ext_image_export(ctx->gpu, op, b, 0, 0, &whole));
    expect_bytes(b, a, n, "opaque 2D array round trip");
    free(a);
    free(b);
    SG_CHECK(hsa_ext_image_destroy(ctx->gpu, op));
    SG_CHECK(hsa_amd_memory_pool_free(mem));
}

/* ---- copy ---- */

static void copies(const sg_ctx *ctx) {
    hsa_ext_image_descriptor_t d = desc(HSA_EXT_IMAGE_GEOMETRY_2D, 64, 4, 0, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA,
                                        HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8);
    unsigned char *m1 = image_memory(1024, 0), *m2 = image_memory(1024, 0xEE);
    hsa_ext_image_t i1 = create_linear(ctx, d, m1, 256, 0), i2 = create_linear(ctx, d, m2, 256, 0);
    fill(m1, 1024, 7);
    hsa_dim3_t so = {3, 1, 0}, dst_o = {10, 2, 0}, rg = {20, 2, 1};
    SG_CHECK(hsa_ext_image_copy(ctx->gpu, i1, &so, i2, &dst_o, &rg));
    for (size_t y = 0; y < 2; y++) {
        expect_bytes(m2 + (2 + y) * 256 + 40, m1 + (1 + y) * 256 + 12, 80, "copied row");
        expect_fill(m2 + (2 + y) * 256, 0xEE, 40, "left of the copied block");
        expect_fill(m2 + (2 + y) * 256 + 120, 0xEE, 136, "right of the copied block");
    }
    expect_fill(m2, 0xEE, 512, "rows above the copied block");

    /* 2D into a slice of a 3D image of the same format. */
    hsa_ext_image_descriptor_t d3 = desc(HSA_EXT_IMAGE_GEOMETRY_3D, 64, 4, 2, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA,
                                         HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8);
    unsigned char *m3 = image_memory(2048, 0xEE);
    hsa_ext_image_t i3 = create_linear(ctx, d3, m3, 256, 0);
    hsa_dim3_t zero3 = {0, 0, 0}, slice1 = {0, 0, 1}, full = {64, 4, 1};
    SG_CHECK(hsa_ext_image_copy(ctx->gpu, i1, &zero3, i3, &slice1, &full));
    expect_fill(m3, 0xEE, 1024, "3D slice 0");
    expect_bytes(m3 + 1024, m1, 1024, "3D slice 1 = the 2D image");

    /* sRGB to linear and back (UNORM_INT8 colour channels convert, alpha does not). */
    hsa_ext_image_descriptor_t ds = desc(HSA_EXT_IMAGE_GEOMETRY_2D, 64, 4, 0, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_SRGBA,
                                         HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8);
    unsigned char *ms = image_memory(1024, 0);
    hsa_ext_image_t is = create_linear(ctx, ds, ms, 256, 0);
    ms[0] = 188, ms[1] = 0, ms[2] = 255, ms[3] = 77;
    hsa_dim3_t one = {1, 1, 1};
    SG_CHECK(hsa_ext_image_copy(ctx->gpu, is, &zero3, i2, &zero3, &one));
    unsigned char lin_px[4] = {128, 0, 255, 77};
    expect_bytes(m2, lin_px, 4, "sRGB 188/0/255 read as linear 128/0/255, alpha 77 kept");
    SG_CHECK(hsa_ext_image_copy(ctx->gpu, i2, &zero3, is, &dst_o, &one));
    unsigned char back[4] = {188, 0, 255, 77};
    expect_bytes(ms + 2 * 256 + 40, back, 4, "linear 128 stored as sRGB 188");

    /* Refused: another format, out of bounds, forged handles, NULL arguments. */
    hsa_ext_image_descriptor_t df = desc(HSA_EXT_IMAGE_GEOMETRY_2D, 64, 4, 0, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_R,
                                         HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT);
    unsigned char *mf = image_memory(1024, 0);
    hsa_ext_image_t ifl = create_linear(ctx, df, mf, 256, 0);
    expect_status(hsa_ext_image_copy(ctx->gpu, i1, &zero3, ifl, &zero3, &one), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "copy between RGBA8 and R32F");
    hsa_dim3_t edge = {60, 0, 0};
    expect_status(hsa_ext_image_copy(ctx->gpu, i1, &edge, i2, &zero3, &rg), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "copy from past the right edge");
    hsa_ext_image_t forged = {0x99990};
    expect_status(hsa_ext_image_copy(ctx->gpu, forged, &zero3, i2, &zero3, &one), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "copy from a forged handle");
    expect_status(hsa_ext_image_copy(ctx->gpu, i1, &zero3, forged, &zero3, &one), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "copy to a forged handle");
    expect_status(hsa_ext_image_copy(ctx->gpu, i1, NULL, i2, &zero3, &one), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "copy, NULL source offset");
    expect_status(hsa_ext_image_copy(ctx->gpu, i1, &zero3, i2, &zero3, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "copy, NULL range");

    hsa_ext_image_t all[] = {i1, i2, i3, is, ifl};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) SG_CHECK(hsa_ext_image_destroy(ctx->gpu, all[k]));
    unsigned char *mems[] = {m1, m2, m3, ms, mf};
    for (size_t k = 0; k < sizeof mems / sizeof mems[0]; k++) SG_CHECK(hsa_amd_memory_pool_free(mems[k]));
}

/* ---- clear ---- */

static void clears(const sg_ctx *ctx) {
    hsa_ext_image_descriptor_t d = desc(HSA_EXT_IMAGE_GEOMETRY_2D, 64, 4, 0, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA,
                                        HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8);
    unsigned char *m = image_memory(1024, 0xEE);
    hsa_ext_image_t img = create_linear(ctx, d, m, 256, 0);
    float colour[4] = {1.0f, 0.5f, 0.0f, 2.0f}; /* clamped to 1 */
    hsa_ext_image_region_t r = region(2, 1, 0, 3, 2, 1);
    SG_CHECK(hsa_ext_image_clear(ctx->gpu, img, colour, &r));
    unsigned char px[4] = {255, 128, 0, 255};
    for (size_t y = 1; y < 3; y++)
        for (size_t x = 2; x < 5; x++) expect_bytes(m + y * 256 + x * 4, px, 4, "cleared RGBA8 element");
    expect_fill(m, 0xEE, 256, "row 0 after the clear");
    expect_fill(m + 256, 0xEE, 8, "left of the cleared block");
    expect_fill(m + 256 + 20, 0xEE, 236, "right of the cleared block");
    SG_CHECK(hsa_ext_image_destroy(ctx->gpu, img));

    /* Unsigned 16-bit channels saturate; BGRA stores blue first; 565 packs red high. */
    hsa_ext_image_descriptor_t du = desc(HSA_EXT_IMAGE_GEOMETRY_1D, 64, 0, 0, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA,
                                         HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT16);
    img = create_linear(ctx, du, m, 0, 0);
    uint32_t ucol[4] = {1, 2, 3, 70000};
    hsa_ext_image_region_t first = region(0, 0, 0, 1, 1, 1);
    SG_CHECK(hsa_ext_image_clear(ctx->gpu, img, ucol, &first));
    uint16_t want16[4] = {1, 2, 3, 65535};
    expect_bytes(m, want16, 8, "cleared RGBA16UI element");
    SG_CHECK(hsa_ext_image_destroy(ctx->gpu, img));

    hsa_ext_image_descriptor_t d565 = desc(HSA_EXT_IMAGE_GEOMETRY_2D, 128, 1, 0, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_RGB,
                                           HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_565);
    img = create_linear(ctx, d565, m, 256, 0);
    float red[4] = {1.0f, 0.0f, 0.0f, 1.0f};
    SG_CHECK(hsa_ext_image_clear(ctx->gpu, img, red, &first));
    uint16_t want565 = 0xF800;
    expect_bytes(m, &want565, 2, "cleared 565 element");
    expect_status(hsa_ext_image_clear(ctx->gpu, img, NULL, &first), HSA_STATUS_ERROR_INVALID_ARGUMENT, "clear, NULL data");
    expect_status(hsa_ext_image_clear(ctx->gpu, img, red, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT, "clear, NULL region");
    hsa_ext_image_region_t oob = region(128, 0, 0, 1, 1, 1);
    expect_status(hsa_ext_image_clear(ctx->gpu, img, red, &oob), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "clear past the right edge");
    hsa_ext_image_t forged = {0x4440};
    expect_status(hsa_ext_image_clear(ctx->gpu, forged, red, &first), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "clear a forged handle");
    SG_CHECK(hsa_ext_image_destroy(ctx->gpu, img));
    SG_CHECK(hsa_amd_memory_pool_free(m));
}

/* ---- samplers ---- */

static void samplers(const sg_ctx *ctx) {
    static const struct {
        hsa_ext_sampler_addressing_mode_t mode;
        uint32_t clamp;
    } modes[] = {
        {HSA_EXT_SAMPLER_ADDRESSING_MODE_UNDEFINED, 0},       {HSA_EXT_SAMPLER_ADDRESSING_MODE_CLAMP_TO_EDGE, 2},
        {HSA_EXT_SAMPLER_ADDRESSING_MODE_CLAMP_TO_BORDER, 6}, {HSA_EXT_SAMPLER_ADDRESSING_MODE_REPEAT, 0},
        {HSA_EXT_SAMPLER_ADDRESSING_MODE_MIRRORED_REPEAT, 1},
    };
    for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++)
        for (uint32_t filter = 0; filter < 2; filter++)
            for (uint32_t coord = 0; coord < 2; coord++) {
                hsa_ext_sampler_descriptor_t sd = {coord, filter, modes[k].mode};
                hsa_ext_sampler_t s = {0};
                SG_CHECK(hsa_ext_sampler_create(ctx->gpu, &sd, &s));
                SG_EXPECT(s.handle != 0 && s.handle % 16 == 0, "sampler handle 0x%llx", (unsigned long long)s.handle);
                const uint32_t *w = (const uint32_t *)(uintptr_t)s.handle;
                uint32_t c = modes[k].clamp;
                uint32_t want0 = c | c << 3 | c << 6 | (coord == 0 ? 1u << 15 : 0);
                SG_EXPECT(w[0] == want0 && w[1] == 4095u << 12 && w[2] == (filter << 20 | filter << 22) && w[3] == 0,
                          "sampler (coord %u filter %u mode %u): %08x %08x %08x %08x", coord, filter,
                          (unsigned)modes[k].mode, w[0], w[1], w[2], w[3]);
                SG_CHECK(hsa_ext_sampler_destroy(ctx->gpu, s));
                expect_status(hsa_ext_sampler_destroy(ctx->gpu, s), HSA_STATUS_ERROR_INVALID_ARGUMENT, "sampler destroyed twice");
            }
    hsa_ext_sampler_descriptor_t bad_mode = {0, 0, (hsa_ext_sampler_addressing_mode32_t)7};
    hsa_ext_sampler_descriptor_t bad_filter = {0, 2, HSA_EXT_SAMPLER_ADDRESSING_MODE_REPEAT};
    hsa_ext_sampler_descriptor_t ok = {0, 0, HSA_EXT_SAMPLER_ADDRESSING_MODE_REPEAT};
    hsa_ext_sampler_t s = {0};
    hsa_agent_t zero = {0};
    expect_status(hsa_ext_sampler_create(ctx->gpu, &bad_mode, &s), HSA_STATUS_ERROR_INVALID_ARGUMENT, "address mode 7");
    expect_status(hsa_ext_sampler_create(ctx->gpu, &bad_filter, &s), HSA_STATUS_ERROR_INVALID_ARGUMENT, "filter mode 2");
    expect_status(hsa_ext_sampler_create(ctx->cpu, &ok, &s), HSA_STATUS_ERROR_INVALID_AGENT, "sampler on the CPU agent");
    expect_status(hsa_ext_sampler_create(zero, &ok, &s), HSA_STATUS_ERROR_INVALID_AGENT, "sampler, zero agent");
    expect_status(hsa_ext_sampler_create(ctx->gpu, NULL, &s), HSA_STATUS_ERROR_INVALID_ARGUMENT, "sampler, NULL descriptor");
    expect_status(hsa_ext_sampler_create(ctx->gpu, &ok, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT, "sampler, NULL out");
    hsa_ext_sampler_t forged = {0x5550};
    expect_status(hsa_ext_sampler_destroy(ctx->gpu, forged), HSA_STATUS_ERROR_INVALID_ARGUMENT, "destroy a forged sampler");
}

/* ---- the AMD image functions, the extension table, status strings ---- */

static void amd_and_table(const sg_ctx *ctx) {
    uint32_t v[4] = {0xAAAAAAAAu, 0xAAAAAAAAu, 0xAAAAAAAAu, 0xAAAAAAAAu};
    SG_CHECK(hsa_amd_image_get_info_max_dim(ctx->gpu, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_IMAGE_2D_MAX_ELEMENTS, v));
    SG_EXPECT(v[0] == 16384 && v[1] == 16384 && v[2] == 0xAAAAAAAAu, "2D max dims %u %u, guard %08x", v[0], v[1], v[2]);
    SG_CHECK(hsa_amd_image_get_info_max_dim(ctx->gpu, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_IMAGE_3D_MAX_ELEMENTS, v));
    SG_EXPECT(v[0] == 16384 && v[1] == 16384 && v[2] == 8192 && v[3] == 0xAAAAAAAAu, "3D max dims %u %u %u, guard %08x",
              v[0], v[1], v[2], v[3]);
    v[1] = 0xAAAAAAAAu;
    SG_CHECK(hsa_amd_image_get_info_max_dim(ctx->gpu, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_IMAGE_ARRAY_MAX_LAYERS, v));
    SG_EXPECT(v[0] == 8192 && v[1] == 0xAAAAAAAAu, "max layers %u, guard %08x", v[0], v[1]);
    SG_CHECK(hsa_amd_image_get_info_max_dim(ctx->gpu, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_IMAGE_1DB_MAX_ELEMENTS, v));
    SG_EXPECT(v[0] == 0xFFFFFFFFu, "1DB max elements %u", v[0]);
    SG_CHECK(hsa_amd_image_get_info_max_dim(ctx->cpu, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_IMAGE_2D_MAX_ELEMENTS, v));
    SG_EXPECT(v[0] == 0 && v[1] == 0, "the CPU agent's 2D max dims %u %u", v[0], v[1]);
    expect_status(hsa_amd_image_get_info_max_dim(ctx->gpu, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_MAX_IMAGE_RD_HANDLES, v),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "max_dim of a non-dimension attribute");
    expect_status(hsa_amd_image_get_info_max_dim(ctx->gpu, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_IMAGE_2D_MAX_ELEMENTS, NULL),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "max_dim, NULL value");

    /* hsa_amd_image_create: checked as ROCr checks it, then refused (interop layouts are not modelled). */
    hsa_ext_image_descriptor_t d = desc(HSA_EXT_IMAGE_GEOMETRY_2D, 64, 4, 0, 0, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA,
                                        HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8);
    uint32_t chip = 0;
    SG_CHECK(hsa_agent_get_info(ctx->gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_CHIP_ID, &chip));
    uint32_t meta[12] = {1, 0x1002u << 16 | chip};
    unsigned char *m = image_memory(1024, 0);
    hsa_ext_image_t img = {0};
    expect_status(hsa_amd_image_create(ctx->gpu, &d, (hsa_amd_image_descriptor_t *)meta, m + 64,
                                       HSA_ACCESS_PERMISSION_RW, &img),
                  HSA_STATUS_ERROR_INVALID_ALLOCATION, "amd_image_create, data not 256-byte aligned");
    meta[0] = 2;
    expect_status(hsa_amd_image_create(ctx->gpu, &d, (hsa_amd_image_descriptor_t *)meta, m, HSA_ACCESS_PERMISSION_RW, &img),
                  (hsa_status_t)HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED, "amd_image_create, version 2");
    meta[0] = 1;
    meta[1] = 0x10de0000u;
    expect_status(hsa_amd_image_create(ctx->gpu, &d, (hsa_amd_image_descriptor_t *)meta, m, HSA_ACCESS_PERMISSION_RW, &img),
                  (hsa_status_t)HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED, "amd_image_create, another vendor");
    meta[1] = 0x1002u << 16 | chip;
    expect_status(hsa_amd_image_create(ctx->gpu, &d, (hsa_amd_image_descriptor_t *)meta, m, HSA_ACCESS_PERMISSION_RW, &img),
                  HSA_STATUS_ERROR, "amd_image_create of an interop layout (not modelled)");
    SG_EXPECT(img.handle == 0, "a refused hsa_amd_image_create wrote a handle");
    SG_CHECK(hsa_amd_memory_pool_free(m));

    /* The extension is advertised, and its table calls the same functions. */
    bool yes = false;
    SG_CHECK(hsa_system_extension_supported(HSA_EXTENSION_IMAGES, 1, 0, &yes));
    SG_EXPECT(yes, "HSA_EXTENSION_IMAGES 1.0 is not supported");
    hsa_ext_images_1_pfn_t t;
    memset(&t, 0, sizeof t);
    SG_CHECK(hsa_system_get_major_extension_table(HSA_EXTENSION_IMAGES, 1, sizeof t, &t));
    SG_EXPECT(t.hsa_ext_image_get_capability && t.hsa_ext_image_data_get_info && t.hsa_ext_image_create &&
                  t.hsa_ext_image_destroy && t.hsa_ext_image_copy && t.hsa_ext_image_import && t.hsa_ext_image_export &&
                  t.hsa_ext_image_clear && t.hsa_ext_sampler_create && t.hsa_ext_sampler_destroy &&
                  t.hsa_ext_image_get_capability_with_layout && t.hsa_ext_image_data_get_info_with_layout &&
                  t.hsa_ext_image_create_with_layout,
              "the image extension table has a NULL entry");
    hsa_ext_image_format_t f = {HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA};
    uint32_t mask = 0;
    SG_CHECK(t.hsa_ext_image_get_capability(ctx->gpu, HSA_EXT_IMAGE_GEOMETRY_3D, &f, &mask));
    SG_EXPECT(mask == RW, "capability through the table: 0x%x", mask);
    hsa_ext_image_data_info_t di;
    SG_CHECK(t.hsa_ext_image_data_get_info(ctx->gpu, &d, HSA_ACCESS_PERMISSION_RW, &di));
    expect_info(di, 1024, "data info through the table");

    static const struct {
        hsa_status_t st;
        const char *name;
    } names[] = {
        {(hsa_status_t)HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED, "HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED"},
        {(hsa_status_t)HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED, "HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED"},
        {(hsa_status_t)HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED, "HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED"},
        {(hsa_status_t)HSA_EXT_STATUS_ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED,
         "HSA_EXT_STATUS_ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED"},
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const char *s = NULL;
        SG_CHECK(hsa_status_string(names[k].st, &s));
        SG_EXPECT(s && strncmp(s, names[k].name, strlen(names[k].name)) == 0, "hsa_status_string(0x%x) = %s",
                  (unsigned)names[k].st, s ? s : "(null)");
    }
}

int main(void) {
    sg_ctx ctx;
    sg_init(&ctx);
    SG_CHECK(hsa_amd_agent_iterate_memory_pools(ctx.gpu, gpu_pool_cb, NULL));
    SG_EXPECT(g_have_gpu_pool, "the GPU agent has no allocatable GLOBAL pool");
    capabilities(&ctx);
    printf("sg: capabilities=ok\n");
    data_info(&ctx);
    printf("sg: data_info=ok\n");
    descriptors(&ctx);
    printf("sg: create_destroy=ok\n");
    transfers(&ctx);
    printf("sg: import_export=ok\n");
    copies(&ctx);
    printf("sg: copy=ok\n");
    clears(&ctx);
    printf("sg: clear=ok\n");
    samplers(&ctx);
    printf("sg: samplers=ok\n");
    amd_and_table(&ctx);
    printf("sg: amd_and_table=ok\n");
    printf("sg: byte_checks=%u\n", g_checked);
    SG_CHECK(hsa_shut_down());
    printf("sg: done=1\n");
    return 0;
}
