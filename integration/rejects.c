/*
 * Every reject class of the diagnostic contract, one packet each.
 *
 * Each packet below is a valid packet with exactly one defect. Each has its own
 * completion signal at 1. For each one the read index must move past it, and
 * its completion signal must stay 1. A valid dispatch at the end shows the
 * queue still works.
 *
 * The table order is the packet order; tests/integration_raw_hsa.rs expects the
 * same order and the reason code named in each row.
 */
#include "common.h"

enum kind { DISPATCH, AGENT_DISPATCH, RAW_TYPE };

typedef struct {
    const char *reason; /* the expected JSONL reason code */
    enum kind kind;
    uint16_t header;
    sg_dispatch d; /* for DISPATCH */
} reject_case;

static void *kernarg;

static sg_dispatch good_1d(void) { return sg_dispatch_1d(64, 64, sg_kernel_object(0), kernarg, SG_NO_SIGNAL); }

int main(void) {
    sg_ctx ctx;
    sg_init(&ctx);
    sg_print_kernel_objects();
    hsa_queue_t *q = sg_queue_create(&ctx, 64);
    kernarg = sg_kernarg_alloc(&ctx, 128);

    const uint16_t H = SG_DISPATCH_HEADER;
    reject_case cases[32];
    unsigned n = 0;
    sg_dispatch d;

    /* dimensions 0 (the setup field holds 0..3; only 1..3 are valid). All sizes 1. */
    d = sg_dispatch_1d(1, 1, sg_kernel_object(0), kernarg, SG_NO_SIGNAL);
    d.setup = 0;
    cases[n++] = (reject_case){"dimensions_out_of_range", DISPATCH, H, d};

    d = good_1d();
    d.workgroup[0] = 0;
    cases[n++] = (reject_case){"workgroup_size_zero", DISPATCH, H, d};

    d = good_1d();
    d.grid[0] = 0;
    cases[n++] = (reject_case){"grid_size_zero", DISPATCH, H, d};

    d = good_1d();
    d.grid[1] = 2; /* 1D dispatch, but grid y is 2 */
    cases[n++] = (reject_case){"unused_dimension_not_one", DISPATCH, H, d};

    d = good_1d(); /* 2D, 64 x 32 = 2048 work-items per workgroup, each dimension <= 1024 */
    d.setup = 2;
    d.workgroup[0] = 64;
    d.workgroup[1] = 32;
    d.grid[0] = 64;
    d.grid[1] = 32;
    cases[n++] = (reject_case){"workgroup_size_exceeds_max", DISPATCH, H, d};

    d = good_1d();
    d.setup = 1 | (1u << 8);
    cases[n++] = (reject_case){"setup_reserved_bits_set", DISPATCH, H, d};

    d = good_1d();
    d.reserved0 = 1;
    cases[n++] = (reject_case){"reserved_field_nonzero", DISPATCH, H, d};

    d = good_1d();
    d.reserved2 = 0x5a5a;
    cases[n++] = (reject_case){"reserved_field_nonzero", DISPATCH, H, d};

    d = good_1d();
    d.kernel_object = 0;
    cases[n++] = (reject_case){"kernel_object_null", DISPATCH, H, d};

    d = good_1d();
    d.kernel_object = sg_kernel_object(1) + 8;
    cases[n++] = (reject_case){"kernel_object_misaligned", DISPATCH, H, d};

    d = good_1d();
    d.kernarg_address = (uint64_t)(uintptr_t)kernarg + 8;
    cases[n++] = (reject_case){"kernarg_address_misaligned", DISPATCH, H, d};

    d = good_1d();
    cases[n++] = (reject_case){"acquire_fence_scope_invalid", DISPATCH,
                               sg_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, 0, 3, HSA_FENCE_SCOPE_SYSTEM), d};

    d = good_1d();
    cases[n++] = (reject_case){"release_fence_scope_invalid", DISPATCH,
                               sg_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, 0, HSA_FENCE_SCOPE_SYSTEM, 3), d};

    memset(&d, 0, sizeof d);
    cases[n++] = (reject_case){"agent_dispatch_unsupported", AGENT_DISPATCH,
                               sg_header(HSA_PACKET_TYPE_AGENT_DISPATCH, 0, HSA_FENCE_SCOPE_SYSTEM,
                                         HSA_FENCE_SCOPE_SYSTEM),
                               d};
    cases[n++] = (reject_case){"vendor_specific_unsupported", RAW_TYPE,
                               sg_header(HSA_PACKET_TYPE_VENDOR_SPECIFIC, 0, HSA_FENCE_SCOPE_SYSTEM,
                                         HSA_FENCE_SCOPE_SYSTEM),
                               d};
    cases[n++] = (reject_case){"unknown_packet_type", RAW_TYPE,
                               sg_header(7, 0, HSA_FENCE_SCOPE_SYSTEM, HSA_FENCE_SCOPE_SYSTEM), d};

    hsa_signal_t sig[32];
    for (unsigned i = 0; i < n; i++) {
        sig[i] = sg_signal(1);
        uint64_t index = sg_reserve(q, 1);
        SG_EXPECT(index == i, "packet %u landed at index %llu", i, (unsigned long long)index);
        void *slot = sg_slot(q, index);
        switch (cases[i].kind) {
        case DISPATCH:
            cases[i].d.completion_signal = sig[i];
            sg_put_dispatch(q, index, cases[i].header, &cases[i].d);
            break;
        case AGENT_DISPATCH: {
            hsa_agent_dispatch_packet_t *p = (hsa_agent_dispatch_packet_t *)slot;
            sg_clear_body(slot);
            p->arg[0] = 42;
            p->completion_signal = sig[i];
            sg_publish(slot, cases[i].header, 1 /* the agent dispatch's `type` field */);
            break;
        }
        case RAW_TYPE: {
            /* Any type with a completion signal where every AQL packet keeps one (bytes 56..63). */
            sg_clear_body(slot);
            memcpy((char *)slot + 56, &sig[i], sizeof sig[i]);
            sg_publish(slot, cases[i].header, 0);
            break;
        }
        }
        sg_ring(q, index);
        sg_wait_read_index(q, index + 1, cases[i].reason);
        SG_EXPECT(hsa_signal_load_scacquire(sig[i]) == 1, "packet %u (%s): completion signal changed to %lld", i,
                  cases[i].reason, (long long)hsa_signal_load_scacquire(sig[i]));
        printf("packet %u: rejected as expected (%s); read index moved past it, completion signal still 1\n", i,
               cases[i].reason);
        printf("sg: reject_%u=%s\n", i, cases[i].reason);
    }

    /* The queue still works after all these rejections. */
    hsa_signal_t ok = sg_signal(1);
    d = good_1d();
    d.completion_signal = ok;
    uint64_t last = sg_submit_dispatch(q, SG_DISPATCH_HEADER, &d);
    sg_wait_complete(&ctx, ok, "valid dispatch after the rejects");
    printf("packet %llu: valid dispatch after %u rejects completed\n", (unsigned long long)last, n);

    /* And nothing touched the rejected packets' signals later. */
    sg_sleep_us(SG_HOLD_MS * 1000u);
    for (unsigned i = 0; i < n; i++)
        SG_EXPECT(hsa_signal_load_scacquire(sig[i]) == 1, "packet %u (%s): completion signal changed later to %lld",
                  i, cases[i].reason, (long long)hsa_signal_load_scacquire(sig[i]));

    printf("sg: rejects=%u\n", n);
    printf("sg: packets=%u\n", n + 1);

    for (unsigned i = 0; i < n; i++)
        SG_CHECK(hsa_signal_destroy(sig[i]));
    SG_CHECK(hsa_signal_destroy(ok));
    sg_kernarg_free(kernarg);
    sg_shutdown(q);
    return 0;
}
