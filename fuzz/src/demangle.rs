//! Any string as a kernel name: `kernel_name`, `demangle` and
//! `rewrite_for_cpp_demangle` never panic; a rewriting stays within the name
//! limit and removes every declaration (rewriting it again removes none).
//!
//! Random bytes rarely look like a mangled name, so the input is prefixed
//! with `_Z` unless it starts with it, and the first byte may instead pick one
//! of a few real ROCm kernel names to splice the rest into.

use softgpu_hsa::code_object::{MAX_NAME_LEN, demangle, kernel_name, rewrite_for_cpp_demangle};

const SEEDS: &[&str] = &[
    "_ZN12rocrand_impl6system6detail14kernel_wrapperITnDaXadL_ZNS_4host20init_lfsr113_enginesE4dim3S4_S4_S4_PN14rocrand_device14lfsr113_engineEjj15HIP_vector_typeIjLj4EEjEENS3_33static_block_size_config_providerILj256EEEjLb0EJS7_jjS9_yEEEvDpT3_",
    "_ZN9rocsolver6v32802L11scalar_caseIdPKPdTnNSt9enable_ifIXnt18rocblas_is_complexIT_EEiE4typeELi0EEEv14rocblas_evect_T0_lPS6_li",
    "_ZN7rocprim6detail16transform_kernelINS0_24wrapped_transform_configINS_14default_configE12hip_bfloat16EES4_NS_18transform_iteratorINS_17counting_iteratorImlEEZNS0_24adjacent_difference_implIS3_Lb1ELb0EPS4_PfNS_5minusIvEEEE10hipError_tPvRmT2_T3_mT4_P12ihipStream_tbEUlmE_S4_EESA_NS_8identityIvEEEEvT1_mSH_SI_",
];

/// The target's body.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let name = match data.first() {
        Some(&b) if b < 3 && text.len() > 1 => {
            // Splice the rest into a real name at a position it chooses.
            let seed = SEEDS[b as usize];
            let rest = &text[1..];
            let at = rest.len() % seed.len();
            let at = (0..=at)
                .rev()
                .find(|&i| seed.is_char_boundary(i))
                .unwrap_or(0);
            format!("{}{rest}{}", &seed[..at], &seed[at..])
        }
        _ if text.starts_with("_Z") => text.to_owned(),
        _ => format!("_Z{text}"),
    };
    if let Some(r) = rewrite_for_cpp_demangle(&name) {
        assert!(r.name.len() <= MAX_NAME_LEN);
        assert!(r.declarations + r.workarounds > 0);
        assert_eq!(
            rewrite_for_cpp_demangle(&r.name).map_or(0, |r| r.declarations),
            0
        );
    }
    let _ = demangle(&name);
    let _ = kernel_name(&name);
}
