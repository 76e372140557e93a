//! AMDGPU code objects: a bounded ELF reader, symbols, kernel descriptors and
//! load images. (Skeleton; the implementation lands with the HIP issue.)
