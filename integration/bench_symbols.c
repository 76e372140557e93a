/* Symbol queries the way HIP 6.4 makes them at start-up, for scripts/bench-launch (a
 * measurement) and tests/integration_raw_hsa.rs (that its answers are right).
 *
 *   bench_symbols CODE_OBJECT PASSES
 *
 * Loads CODE_OBJECT for the first GPU agent, then makes PASSES passes of
 * hsa_executable_iterate_symbols over it, asking each symbol visited its type, name length
 * and name, as HIP does once per kernel it registers (the rocBLAS client: 23,757 passes and
 * 11.8 million hsa_executable_symbol_get_info calls). An untimed pass before and after the
 * timed ones checks every answer: a kernel or variable type, a name of exactly the length
 * answered (nothing written past it, no NUL in it), the same answers both times. Prints
 * sg: symbols=, sg: kernels=, sg: get_info_calls= (of the timed passes) and
 * sg: ns_per_get_info= (their wall time over their calls, the callback included).
 */
#include "common.h"

#include <hsa/hsa.h>

#define NAME_MAX_BYTES 4096

typedef struct {
    bool check; /* check every answer (the untimed first and last passes) */
    long calls;
    long symbols;
    long kernels;
    unsigned long long sum; /* the pass's names, summed byte by byte (checked passes) */
} visit_state;

static hsa_status_t find_gpu(hsa_agent_t agent, void *data) {
    hsa_device_type_t type;
    SG_CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
    if (type == HSA_DEVICE_TYPE_GPU) {
        *(hsa_agent_t *)data = agent;
        return HSA_STATUS_INFO_BREAK;
    }
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t visit(hsa_executable_t exec, hsa_executable_symbol_t sym, void *data) {
    (void)exec;
    visit_state *st = (visit_state *)data;
    hsa_symbol_kind_t type;
    uint32_t len = 0;
    char name[NAME_MAX_BYTES + 64];
    SG_CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &type));
    SG_CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &len));
    SG_EXPECT(type == HSA_SYMBOL_KIND_KERNEL || type == HSA_SYMBOL_KIND_VARIABLE, "symbol type %d", type);
    SG_EXPECT(len > 0 && len <= NAME_MAX_BYTES, "name length %u", len);
    st->calls += 3;
    st->symbols++;
    st->kernels += type == HSA_SYMBOL_KIND_KERNEL;
    if (!st->check) {
        SG_CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME, name));
        return HSA_STATUS_SUCCESS;
    }
    memset(name + len, 0x5a, 64);
    SG_CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME, name));
    for (unsigned i = 0; i < 64; i++)
        SG_EXPECT((unsigned char)name[len + i] == 0x5a, "NAME wrote past its %u bytes", len);
    for (uint32_t i = 0; i < len; i++) {
        SG_EXPECT(name[i] != 0, "a NUL inside a name of %u bytes", len);
        st->sum += (unsigned char)name[i];
    }
    return HSA_STATUS_SUCCESS;
}

int main(int argc, char **argv) {
    if (argc != 3) SG_FAIL("usage: bench_symbols CODE_OBJECT PASSES");
    const int passes = atoi(argv[2]);
    SG_EXPECT(passes >= 1, "PASSES must be at least 1");
    SG_CHECK(hsa_init());
    hsa_agent_t gpu = {0};
    hsa_status_t found = hsa_iterate_agents(find_gpu, &gpu);
    SG_EXPECT(found == HSA_STATUS_INFO_BREAK, "no GPU agent");

    FILE *f = fopen(argv[1], "rb");
    if (!f) SG_FAIL("cannot open %s", argv[1]);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *bytes = malloc((size_t)n);
    if (!bytes || fread(bytes, 1, (size_t)n, f) != (size_t)n) SG_FAIL("cannot read %s", argv[1]);
    fclose(f);
    hsa_code_object_reader_t reader;
    SG_CHECK(hsa_code_object_reader_create_from_memory(bytes, (size_t)n, &reader));
    hsa_executable_t exec;
    SG_CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                                       NULL, &exec));
    SG_CHECK(hsa_executable_load_agent_code_object(exec, gpu, reader, NULL, NULL));
    SG_CHECK(hsa_executable_freeze(exec, NULL));

    /* A checked pass first, then the timed ones, then a checked pass again: the same symbols,
       kinds and names. */
    visit_state first = {.check = true};
    SG_CHECK(hsa_executable_iterate_symbols(exec, visit, &first));
    SG_EXPECT(first.symbols > 0, "the code object has no symbols");
    visit_state st = {.check = false};
    uint64_t t0 = sg_now_ns();
    for (int p = 0; p < passes; p++)
        SG_CHECK(hsa_executable_iterate_symbols(exec, visit, &st));
    uint64_t t1 = sg_now_ns();
    SG_EXPECT(st.symbols == first.symbols * passes && st.kernels == first.kernels * passes,
              "%ld symbols over %d passes, %ld in the first", st.symbols, passes, first.symbols);
    visit_state last = {.check = true};
    SG_CHECK(hsa_executable_iterate_symbols(exec, visit, &last));
    SG_EXPECT(last.symbols == first.symbols && last.kernels == first.kernels && last.sum == first.sum,
              "the last pass's answers differ from the first's");
    printf("sg: symbols=%ld\n", first.symbols);
    printf("sg: kernels=%ld\n", first.kernels);
    printf("sg: get_info_calls=%ld\n", st.calls);
    printf("sg: ns_per_get_info=%.1f\n", (double)(t1 - t0) / (double)st.calls);
    SG_CHECK(hsa_executable_destroy(exec));
    SG_CHECK(hsa_code_object_reader_destroy(reader));
    free(bytes);
    SG_CHECK(hsa_shut_down());
    return 0;
}
