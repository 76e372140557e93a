__kernel __attribute__((reqd_work_group_size(32, 1, 1))) void k_reqd32(__global int *out) { out[0] = 3; }
