//! The 64-byte kernel descriptor of code object v3+ (LLVM AMDGPUUsage,
//! "Kernel Descriptor"): what a dispatch packet's `kernel_object` points at.

/// Size of a kernel descriptor in bytes.
pub const KERNEL_DESCRIPTOR_SIZE: usize = 64;

/// A decoded kernel descriptor. Every field is kept as stored; reserved bytes
/// are not checked (the CP ignores them, and so does the virtual runtime).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct KernelDescriptor {
    /// Bytes 0..4: fixed LDS per work-group.
    pub group_segment_fixed_size: u32,
    /// Bytes 4..8: fixed scratch per work-item.
    pub private_segment_fixed_size: u32,
    /// Bytes 8..12: size of the kernarg segment.
    pub kernarg_size: u32,
    /// Bytes 16..24: entry point relative to the descriptor's own address.
    pub kernel_code_entry_byte_offset: i64,
    /// Bytes 44..48 (GFX10+ and GFX90A+).
    pub compute_pgm_rsrc3: u32,
    /// Bytes 48..52.
    pub compute_pgm_rsrc1: u32,
    /// Bytes 52..56.
    pub compute_pgm_rsrc2: u32,
    /// Bytes 56..58.
    pub kernel_code_properties: u16,
    /// Bytes 58..60 (code object v5, GFX940+; zero elsewhere).
    pub kernarg_preload: u16,
}

impl KernelDescriptor {
    pub const ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER: u16 = 1 << 0;
    pub const ENABLE_SGPR_DISPATCH_PTR: u16 = 1 << 1;
    pub const ENABLE_SGPR_QUEUE_PTR: u16 = 1 << 2;
    pub const ENABLE_SGPR_KERNARG_SEGMENT_PTR: u16 = 1 << 3;
    pub const ENABLE_SGPR_DISPATCH_ID: u16 = 1 << 4;
    pub const ENABLE_SGPR_FLAT_SCRATCH_INIT: u16 = 1 << 5;
    pub const ENABLE_SGPR_PRIVATE_SEGMENT_SIZE: u16 = 1 << 6;
    pub const ENABLE_WAVEFRONT_SIZE32: u16 = 1 << 10;
    pub const USES_DYNAMIC_STACK: u16 = 1 << 11;

    /// Decodes the fixed layout; every 64-byte input is a descriptor.
    pub fn parse(bytes: &[u8; KERNEL_DESCRIPTOR_SIZE]) -> KernelDescriptor {
        let mut f = Fields::new(bytes);
        let group_segment_fixed_size = f.u32();
        let private_segment_fixed_size = f.u32();
        let kernarg_size = f.u32();
        f.skip::<4>();
        let kernel_code_entry_byte_offset = f.i64();
        f.skip::<20>();
        let compute_pgm_rsrc3 = f.u32();
        let compute_pgm_rsrc1 = f.u32();
        let compute_pgm_rsrc2 = f.u32();
        let kernel_code_properties = f.u16();
        let kernarg_preload = f.u16();
        KernelDescriptor {
            group_segment_fixed_size,
            private_segment_fixed_size,
            kernarg_size,
            kernel_code_entry_byte_offset,
            compute_pgm_rsrc3,
            compute_pgm_rsrc1,
            compute_pgm_rsrc2,
            kernel_code_properties,
            kernarg_preload,
        }
    }

    /// Wave32 (GFX10+ with `ENABLE_WAVEFRONT_SIZE32`) or wave64.
    pub fn wavefront_size(&self) -> u32 {
        if self.kernel_code_properties & Self::ENABLE_WAVEFRONT_SIZE32 != 0 {
            32
        } else {
            64
        }
    }

    /// Whether the code needs a dynamically sized stack (private size is a minimum).
    pub fn uses_dynamic_stack(&self) -> bool {
        self.kernel_code_properties & Self::USES_DYNAMIC_STACK != 0
    }
}

/// Sequential little-endian field reader over the descriptor's 64 bytes.
///
/// The caller passes exactly the descriptor's 64 bytes, so running out is a
/// bug in this module, not in the input; it yields zeros rather than panic.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Fields(bytes)
    }

    fn take<const N: usize>(&mut self) -> [u8; N] {
        match self.0.split_first_chunk::<N>() {
            Some((head, rest)) => {
                self.0 = rest;
                *head
            }
            None => {
                self.0 = &[];
                [0; N]
            }
        }
    }

    fn skip<const N: usize>(&mut self) {
        let _ = self.take::<N>();
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.take())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_is_read_from_its_documented_offset() {
        let mut b = [0u8; 64];
        b[0..4].copy_from_slice(&0x0102_0304u32.to_le_bytes());
        b[4..8].copy_from_slice(&0x1112_1314u32.to_le_bytes());
        b[8..12].copy_from_slice(&0x2122_2324u32.to_le_bytes());
        b[12..16].fill(0xee);
        b[16..24].copy_from_slice(&(-0x1234i64).to_le_bytes());
        b[24..44].fill(0xee);
        b[44..48].copy_from_slice(&0x3132_3334u32.to_le_bytes());
        b[48..52].copy_from_slice(&0x4142_4344u32.to_le_bytes());
        b[52..56].copy_from_slice(&0x5152_5354u32.to_le_bytes());
        b[56..58].copy_from_slice(&0x0c08u16.to_le_bytes());
        b[58..60].copy_from_slice(&0x6162u16.to_le_bytes());
        b[60..64].fill(0xee);
        let kd = KernelDescriptor::parse(&b);
        assert_eq!(
            kd,
            KernelDescriptor {
                group_segment_fixed_size: 0x0102_0304,
                private_segment_fixed_size: 0x1112_1314,
                kernarg_size: 0x2122_2324,
                kernel_code_entry_byte_offset: -0x1234,
                compute_pgm_rsrc3: 0x3132_3334,
                compute_pgm_rsrc1: 0x4142_4344,
                compute_pgm_rsrc2: 0x5152_5354,
                kernel_code_properties: 0x0c08,
                kernarg_preload: 0x6162,
            }
        );
        assert_eq!(kd.wavefront_size(), 32);
        assert!(kd.uses_dynamic_stack());
    }
}
