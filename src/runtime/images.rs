//! The HSA image extension over host memory (`hsa_ext_image_*`, samplers and
//! `hsa_amd_image_*`), with ROCr's semantics where they are observable.
//!
//! What it models:
//! - **Formats.** Which (channel order, channel type) pairs an image may have,
//!   per geometry, with their capability mask and element size: ROCr's image
//!   format table (identical in ROCr 5.2.3 and 6.4, and for every GPU family).
//! - **Sizes.** `hsa_ext_image_data_get_info(_with_layout)` computes sizes and
//!   alignments the way ROCr's address library does for a linear surface on
//!   GFX9-11: rows padded to 256 bytes, 256-byte base alignment, the pitch
//!   checks of the linear layout. The *opaque* layout is linear too: SoftGPU
//!   policy. ROCr picks a tiled swizzle mode for opaque images on a discrete
//!   GPU, so its opaque sizes can be larger; a program cannot tell the
//!   difference, because opaque data is only reached through these functions.
//! - **Handles.** An image handle is the address of its 48-byte resource
//!   descriptor (12 dwords, 16-byte aligned), a sampler handle the address of
//!   its 32-byte descriptor, as in ROCr: HIP copies both into its texture and
//!   surface objects. The descriptors follow the public AMD ISA documentation
//!   of the image (T#), buffer (V#) and sampler (S#) resources; see
//!   [`encode_image_srd`]. Every handle is looked up in a registry before use,
//!   so a forged or destroyed one is an error, never a dereference.
//! - **Data movement.** Import, export, copy and clear move the bytes on the
//!   calling thread, synchronously (ROCr runs blit kernels and waits for them).
//!   Regions are checked against the image's extents (ROCr does not check):
//!   an out-of-bounds region is `HSA_STATUS_ERROR_INVALID_ARGUMENT`, never a
//!   write outside the image.
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.

pub mod texel;

use std::collections::HashMap;
use std::sync::Mutex;

use crate::abi::HsaStatus;
use crate::isa::Arch;

/// `HSA_EXT_STATUS_ERROR_*` of the image extension.
pub mod status {
    use crate::abi::HsaStatus;
    pub const FORMAT_UNSUPPORTED: HsaStatus = HsaStatus(0x3000);
    pub const SIZE_UNSUPPORTED: HsaStatus = HsaStatus(0x3001);
    pub const PITCH_UNSUPPORTED: HsaStatus = HsaStatus(0x3002);
    pub const SAMPLER_DESCRIPTOR_UNSUPPORTED: HsaStatus = HsaStatus(0x3003);
}

/// `hsa_ext_image_geometry_t`.
pub mod geometry {
    pub const G1D: u32 = 0;
    pub const G2D: u32 = 1;
    pub const G3D: u32 = 2;
    pub const G1DA: u32 = 3;
    pub const G2DA: u32 = 4;
    pub const G1DB: u32 = 5;
    pub const G2DDEPTH: u32 = 6;
    pub const G2DADEPTH: u32 = 7;
    pub const COUNT: u32 = 8;
}

/// `hsa_ext_image_channel_order_t`.
pub mod order {
    pub const A: u32 = 0;
    pub const R: u32 = 1;
    pub const RX: u32 = 2;
    pub const RG: u32 = 3;
    pub const RGX: u32 = 4;
    pub const RA: u32 = 5;
    pub const RGB: u32 = 6;
    pub const RGBX: u32 = 7;
    pub const RGBA: u32 = 8;
    pub const BGRA: u32 = 9;
    pub const ARGB: u32 = 10;
    pub const ABGR: u32 = 11;
    pub const SRGB: u32 = 12;
    pub const SRGBX: u32 = 13;
    pub const SRGBA: u32 = 14;
    pub const SBGRA: u32 = 15;
    pub const INTENSITY: u32 = 16;
    pub const LUMINANCE: u32 = 17;
    pub const DEPTH: u32 = 18;
    pub const DEPTH_STENCIL: u32 = 19;
    pub const COUNT: u32 = 20;
}

/// `hsa_ext_image_channel_type_t`.
pub mod ty {
    pub const SNORM_INT8: u32 = 0;
    pub const SNORM_INT16: u32 = 1;
    pub const UNORM_INT8: u32 = 2;
    pub const UNORM_INT16: u32 = 3;
    pub const UNORM_INT24: u32 = 4;
    pub const UNORM_SHORT_555: u32 = 5;
    pub const UNORM_SHORT_565: u32 = 6;
    pub const UNORM_SHORT_101010: u32 = 7;
    pub const SIGNED_INT8: u32 = 8;
    pub const SIGNED_INT16: u32 = 9;
    pub const SIGNED_INT32: u32 = 10;
    pub const UNSIGNED_INT8: u32 = 11;
    pub const UNSIGNED_INT16: u32 = 12;
    pub const UNSIGNED_INT32: u32 = 13;
    pub const HALF_FLOAT: u32 = 14;
    pub const FLOAT: u32 = 15;
    pub const COUNT: u32 = 16;
}

/// `hsa_ext_image_capability_t` bits.
pub mod cap {
    pub const READ_ONLY: u32 = 0x1;
    pub const WRITE_ONLY: u32 = 0x2;
    pub const READ_WRITE: u32 = 0x4;
    /// ROCr's `RW`: read-only, write-only and read-write.
    pub const RW: u32 = READ_ONLY | WRITE_ONLY | READ_WRITE;
    /// ROCr's `ROWO`.
    pub const ROWO: u32 = READ_ONLY | WRITE_ONLY;
}

/// The image data layouts (`hsa_ext_image_data_layout_t`).
pub const LAYOUT_OPAQUE: u32 = 0;
pub const LAYOUT_LINEAR: u32 = 1;

/// The GPU family, which decides the resource descriptor layout.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Family {
    /// GFX9 (Vega, CDNA 1-4): gfx900 to gfx950.
    Gfx9,
    /// RDNA 2-4: gfx1030, gfx11, gfx12.
    Rdna,
}

impl Family {
    pub fn of(arch: Arch) -> Family {
        match arch {
            Arch::Gfx900
            | Arch::Gfx906
            | Arch::Gfx908
            | Arch::Gfx90a
            | Arch::Gfx940
            | Arch::Gfx941
            | Arch::Gfx942
            | Arch::Gfx950 => Family::Gfx9,
            Arch::Gfx1030
            | Arch::Gfx1100
            | Arch::Gfx1101
            | Arch::Gfx1102
            | Arch::Gfx1200
            | Arch::Gfx1201 => Family::Rdna,
        }
    }
}

/// A copy of `hsa_ext_image_descriptor_t` (read once from the caller).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Desc {
    pub geometry: u32,
    pub width: u64,
    pub height: u64,
    pub depth: u64,
    pub array_size: u64,
    pub channel_type: u32,
    pub channel_order: u32,
}

/// What the format table says about one (order, type, geometry).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Prop {
    /// `hsa_ext_image_capability_t` mask; 0 = not supported.
    pub cap: u32,
    /// Bytes per element.
    pub element_size: u32,
    /// GFX9 `DATA_FORMAT` (`IMG_DATA_FORMAT_*`).
    pub data_format: u32,
    /// GFX9 `NUM_FORMAT` (`IMG_NUM_FORMAT_*`).
    pub num_format: u32,
}

const NONE: Prop = Prop {
    cap: 0,
    element_size: 0,
    data_format: 0,
    num_format: 0,
};

// GFX9 data formats (the ISA's IMG_DATA_FORMAT / BUF_DATA_FORMAT values).
const FMT_8: u32 = 1;
const FMT_16: u32 = 2;
const FMT_8_8: u32 = 3;
const FMT_32: u32 = 4;
const FMT_16_16: u32 = 5;
const FMT_2_10_10_10: u32 = 9;
const FMT_8_8_8_8: u32 = 10;
const FMT_32_32: u32 = 11;
const FMT_16_16_16_16: u32 = 12;
const FMT_32_32_32_32: u32 = 14;
const FMT_5_6_5: u32 = 16;
const FMT_1_5_5_5: u32 = 17;
// GFX9 numeric formats.
const NUM_UNORM: u32 = 0;
const NUM_SNORM: u32 = 1;
const NUM_UINT: u32 = 4;
const NUM_SINT: u32 = 5;
const NUM_FLOAT: u32 = 7;
const NUM_SRGB: u32 = 9;
// Destination selects.
const SEL_0: u32 = 0;
const SEL_1: u32 = 1;
const SEL_X: u32 = 4;
const SEL_Y: u32 = 5;
const SEL_Z: u32 = 6;
const SEL_W: u32 = 7;

fn p(cap: u32, element_size: u32, data_format: u32, num_format: u32) -> Prop {
    Prop {
        cap,
        element_size,
        data_format,
        num_format,
    }
}

/// The format table, before the per-geometry filter: ROCr's
/// `ImageLutKv::kPropLut_` (and `kPropLutGfx11_`, which has the same
/// capabilities and element sizes).
fn lut(channel_order: u32, channel_type: u32) -> Prop {
    use cap::{READ_ONLY, ROWO, RW};
    // (element bytes per channel, data format) for 1, 2 and 4 channels.
    let by_width = |channels: u32, bits: u32| -> (u32, u32) {
        match (channels, bits) {
            (1, 8) => (1, FMT_8),
            (1, 16) => (2, FMT_16),
            (1, 32) => (4, FMT_32),
            (2, 8) => (2, FMT_8_8),
            (2, 16) => (4, FMT_16_16),
            (2, 32) => (8, FMT_32_32),
            (4, 8) => (4, FMT_8_8_8_8),
            (4, 16) => (8, FMT_16_16_16_16),
            _ => (16, FMT_32_32_32_32),
        }
    };
    // (bits per channel, numeric format) of a channel type, for the plain types.
    let plain = |t: u32| -> Option<(u32, u32)> {
        Some(match t {
            ty::SNORM_INT8 => (8, NUM_SNORM),
            ty::SNORM_INT16 => (16, NUM_SNORM),
            ty::UNORM_INT8 => (8, NUM_UNORM),
            ty::UNORM_INT16 => (16, NUM_UNORM),
            ty::SIGNED_INT8 => (8, NUM_SINT),
            ty::SIGNED_INT16 => (16, NUM_SINT),
            ty::SIGNED_INT32 => (32, NUM_SINT),
            ty::UNSIGNED_INT8 => (8, NUM_UINT),
            ty::UNSIGNED_INT16 => (16, NUM_UINT),
            ty::UNSIGNED_INT32 => (32, NUM_UINT),
            ty::HALF_FLOAT => (16, NUM_FLOAT),
            ty::FLOAT => (32, NUM_FLOAT),
            _ => return None,
        })
    };
    let full = |channels: u32| -> Prop {
        match plain(channel_type) {
            Some((bits, num)) => {
                let (size, fmt) = by_width(channels, bits);
                p(RW, size, fmt, num)
            }
            None => NONE,
        }
    };
    match channel_order {
        order::A | order::R => full(1),
        order::RG | order::RA => full(2),
        order::RGBA => full(4),
        order::BGRA | order::ARGB => match channel_type {
            ty::SNORM_INT8 => p(RW, 4, FMT_8_8_8_8, NUM_SNORM),
            ty::UNORM_INT8 => p(RW, 4, FMT_8_8_8_8, NUM_UNORM),
            ty::SIGNED_INT8 => p(RW, 4, FMT_8_8_8_8, NUM_SINT),
            ty::UNSIGNED_INT8 => p(RW, 4, FMT_8_8_8_8, NUM_UINT),
            _ => NONE,
        },
        order::RGB => match channel_type {
            ty::UNORM_SHORT_555 => p(RW, 2, FMT_1_5_5_5, NUM_UNORM),
            ty::UNORM_SHORT_565 => p(RW, 2, FMT_5_6_5, NUM_UNORM),
            ty::UNORM_SHORT_101010 => p(RW, 4, FMT_2_10_10_10, NUM_UNORM),
            _ => NONE,
        },
        order::SRGBA => match channel_type {
            ty::UNORM_INT8 => p(READ_ONLY, 4, FMT_8_8_8_8, NUM_SRGB),
            _ => NONE,
        },
        order::INTENSITY | order::LUMINANCE => match channel_type {
            ty::SNORM_INT8
            | ty::SNORM_INT16
            | ty::UNORM_INT8
            | ty::UNORM_INT16
            | ty::HALF_FLOAT
            | ty::FLOAT => full(1),
            _ => NONE,
        },
        order::DEPTH => match channel_type {
            ty::UNORM_INT16 => p(ROWO, 2, FMT_16, NUM_UNORM),
            // ROCr lists UNORM_INT24 with a 3-byte element but no capability.
            ty::UNORM_INT24 => p(0, 3, FMT_32, NUM_UNORM),
            ty::FLOAT => p(ROWO, 4, FMT_32, NUM_FLOAT),
            _ => NONE,
        },
        _ => NONE,
    }
}

/// The format table entry for an image of this geometry, as ROCr's
/// `MapFormat` filters it: 1D buffers take no sRGB order and no 555/565
/// packing; the depth geometries take only the depth orders. `Err` is an
/// argument out of the enumerations' range.
pub fn property(channel_order: u32, channel_type: u32, geom: u32) -> Result<Prop, HsaStatus> {
    if channel_order >= order::COUNT || channel_type >= ty::COUNT || geom >= geometry::COUNT {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    let entry = lut(channel_order, channel_type);
    Ok(match geom {
        geometry::G1DB => match (channel_order, channel_type) {
            (order::SRGB | order::SRGBX | order::SRGBA | order::SBGRA, _) => NONE,
            (_, ty::UNORM_SHORT_555 | ty::UNORM_SHORT_565) => NONE,
            _ => entry,
        },
        geometry::G2DDEPTH | geometry::G2DADEPTH => match channel_order {
            order::DEPTH | order::DEPTH_STENCIL => entry,
            _ => NONE,
        },
        _ => entry,
    })
}

/// The largest (width, height, depth, array size) of a geometry: ROCr's
/// `kMaxDimensionLut_`.
pub fn max_dims(geom: u32) -> [u64; 4] {
    match geom {
        geometry::G1D => [16384, 1, 1, 1],
        geometry::G2D | geometry::G2DDEPTH => [16384, 16384, 1, 1],
        geometry::G3D => [16384, 16384, 8192, 1],
        geometry::G1DA => [16384, 1, 1, 8192],
        geometry::G2DA | geometry::G2DADEPTH => [16384, 16384, 1, 8192],
        geometry::G1DB => [u32::MAX as u64, 1, 1, 1],
        _ => [0; 4],
    }
}

/// The value `hsa_amd_image_get_info_max_dim` (and ROCr's agent queries
/// `HSA_EXT_AGENT_INFO_IMAGE_*_MAX_ELEMENTS` / `IMAGE_ARRAY_MAX_LAYERS`,
/// 0x3000-0x3008, which ROCr routes there) writes for a GPU agent: 32-bit
/// words, one, two or three of them. `None` for any other attribute.
pub fn max_dim_words(attribute: u32) -> Option<Vec<u32>> {
    let d = |g: u32| max_dims(g).map(|v| v as u32);
    Some(match attribute {
        0x3000 => vec![d(geometry::G1D)[0]],
        0x3001 => vec![d(geometry::G1DA)[0]],
        0x3002 => vec![d(geometry::G1DB)[0]],
        0x3003 => d(geometry::G2D)[..2].to_vec(),
        0x3004 => d(geometry::G2DA)[..2].to_vec(),
        0x3005 => d(geometry::G2DDEPTH)[..2].to_vec(),
        0x3006 => d(geometry::G2DADEPTH)[..2].to_vec(),
        0x3007 => d(geometry::G3D)[..3].to_vec(),
        0x3008 => vec![d(geometry::G2DA)[3]],
        _ => return None,
    })
}

/// Destination selects of a channel order: ROCr's `kSwizzleLut_`.
fn swizzle(channel_order: u32) -> [u32; 4] {
    match channel_order {
        order::A => [SEL_0, SEL_0, SEL_0, SEL_X],
        order::R | order::RX => [SEL_X, SEL_0, SEL_0, SEL_1],
        order::RG | order::RGX => [SEL_X, SEL_Y, SEL_0, SEL_1],
        order::RA => [SEL_X, SEL_0, SEL_0, SEL_Y],
        order::RGB | order::RGBX => [SEL_Z, SEL_Y, SEL_X, SEL_1],
        order::RGBA | order::SRGBA => [SEL_X, SEL_Y, SEL_Z, SEL_W],
        order::BGRA | order::SBGRA => [SEL_Z, SEL_Y, SEL_X, SEL_W],
        order::ARGB => [SEL_Y, SEL_Z, SEL_W, SEL_X],
        order::ABGR => [SEL_Y, SEL_X, SEL_W, SEL_Z],
        order::SRGB | order::SRGBX => [SEL_X, SEL_Y, SEL_Z, SEL_1],
        order::INTENSITY => [SEL_X, SEL_X, SEL_X, SEL_X],
        order::LUMINANCE => [SEL_X, SEL_X, SEL_X, SEL_1],
        order::DEPTH => [SEL_X, SEL_0, SEL_0, SEL_0],
        _ => [SEL_Y, SEL_0, SEL_0, SEL_0], // DEPTH_STENCIL
    }
}

/// The border-colour swizzle (`BC_SWIZZLE`) that matches a destination
/// swizzle, by where alpha lands (the same rule ROCr applies).
fn bc_swizzle(s: [u32; 4]) -> u32 {
    const XYZW: u32 = 0;
    const XWYZ: u32 = 1;
    const WZYX: u32 = 2;
    const WXYZ: u32 = 3;
    const ZYXW: u32 = 4;
    const YXWZ: u32 = 5;
    let [r, g, b, a] = s;
    if a == SEL_X {
        if b == SEL_Y {
            WZYX
        } else if r == SEL_X && g == SEL_X && b == SEL_X {
            XYZW
        } else {
            WXYZ
        }
    } else if r == SEL_X {
        if g == SEL_Y || (g == SEL_X && b == SEL_X && a == SEL_W) {
            XYZW
        } else {
            XWYZ
        }
    } else if g == SEL_X {
        YXWZ
    } else if b == SEL_X {
        ZYXW
    } else {
        XYZW
    }
}

/// The hardware resource type of a geometry (`SQ_RSRC_IMG_*`; 0 = buffer).
fn resource_type(geom: u32) -> u32 {
    match geom {
        geometry::G1D => 8,
        geometry::G2D | geometry::G2DDEPTH => 9,
        geometry::G3D => 10,
        geometry::G1DA => 12,
        geometry::G2DA | geometry::G2DADEPTH => 13,
        _ => 0,
    }
}

/// Extents in elements along (x, y, z) as the image functions address them:
/// for 1D arrays y is the layer, for 2D arrays z is the layer. A zero
/// dimension counts as 1, as in ROCr's address library.
fn extents(d: &Desc) -> [u64; 3] {
    let w = d.width.max(1);
    let h = d.height.max(1);
    match d.geometry {
        geometry::G1D | geometry::G1DB => [w, 1, 1],
        geometry::G2D | geometry::G2DDEPTH => [w, h, 1],
        geometry::G3D => [w, h, d.depth.max(1)],
        geometry::G1DA => [w, d.array_size.max(1), 1],
        _ => [w, h, d.array_size.max(1)], // 2DA, 2DADEPTH
    }
}

/// An image's data layout in memory.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Layout {
    pub element_size: u64,
    /// Row pitch in elements (the descriptor's PITCH + 1).
    pub pitch: u64,
    pub row_pitch: u64,
    /// Bytes between slices (3D), layers (2D arrays) or layers of a 1D array
    /// (there equal to the row pitch).
    pub slice_pitch: u64,
    pub size: u64,
    pub alignment: u64,
    pub extents: [u64; 3],
}

/// Bytes the linear layout pads a row to, and the data alignment: ROCr's
/// address library for linear surfaces on GFX9, GFX10 and GFX11. (ROCr's
/// GFX12 address library can trim a linear row to 128 bytes; SoftGPU uses
/// 256 there too: policy.)
pub const LINEAR_PITCH_BYTES: u64 = 256;

/// Why a layout was refused.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LayoutError {
    /// ROCr's address library rejects the row pitch (not a multiple of 256
    /// bytes, or smaller than a padded row): ROCr returns `HSA_STATUS_ERROR`.
    /// Carries the row pitch in force (the default when the caller gave 0).
    AddrLib(u64),
    /// The pitches differ from the ones the layout needs.
    Pitch,
}

/// The layout of an image: `linear` with the caller's row and slice pitches
/// (0 = the defaults ROCr's `hsa_ext_image_*_with_layout` applies: width x
/// element size, and row pitch x height for 3D images and 2D arrays, the row
/// pitch for 1D arrays), or the opaque layout (pitches ignored). `d` must have
/// passed [`check`].
pub fn layout(
    d: &Desc,
    prop: &Prop,
    linear: bool,
    row_pitch: u64,
    slice_pitch: u64,
) -> Result<Layout, LayoutError> {
    let e = prop.element_size as u64;
    let ext = extents(d);
    let align_px = LINEAR_PITCH_BYTES / e;
    let padded = ext[0].div_ceil(align_px) * align_px;
    let (mut row, mut slice) = (row_pitch, slice_pitch);
    if linear {
        if row == 0 {
            row = d.width * e;
        }
        if slice == 0 && (d.depth != 0 || d.array_size != 0) {
            slice = match d.geometry {
                geometry::G3D | geometry::G2DA | geometry::G2DADEPTH => row * d.height,
                geometry::G1DA => row,
                _ => 0,
            };
        }
    } else {
        row = 0;
        slice = 0;
    }
    // The address library takes the row pitch in whole elements.
    let custom = row / e;
    let pitch = if custom > 0 {
        if custom % align_px != 0 || custom < padded {
            return Err(LayoutError::AddrLib(row));
        }
        custom
    } else {
        padded
    };
    let rows = match d.geometry {
        geometry::G1D | geometry::G1DA | geometry::G1DB => 1,
        _ => ext[1],
    };
    // A caller's pitch can be anything: sizes that do not fit 64 bits are refused.
    let row_bytes = pitch.checked_mul(e).ok_or(LayoutError::Pitch)?;
    let slice_bytes = row_bytes.checked_mul(rows).ok_or(LayoutError::Pitch)?;
    if linear
        && d.geometry != geometry::G1DB
        && ((row != 0 && row_bytes != row) || (slice != 0 && slice_bytes != slice))
    {
        return Err(LayoutError::Pitch);
    }
    let slices = match d.geometry {
        geometry::G1DA => ext[1],
        _ => ext[2],
    };
    let size = slice_bytes.checked_mul(slices).ok_or(LayoutError::Pitch)?;
    Ok(Layout {
        element_size: e,
        pitch,
        row_pitch: row_bytes,
        slice_pitch: slice_bytes,
        size,
        alignment: LINEAR_PITCH_BYTES,
        extents: ext,
    })
}

/// Validate a descriptor for an image on a GPU agent: enumerations in range
/// (`INVALID_ARGUMENT`), a supported format (`FORMAT_UNSUPPORTED`), every
/// dimension within the geometry's limits (`SIZE_UNSUPPORTED`), in ROCr's
/// order. Returns the format table entry.
pub fn check(d: &Desc) -> Result<Prop, HsaStatus> {
    let prop = property(d.channel_order, d.channel_type, d.geometry)?;
    if prop.cap == 0 {
        return Err(status::FORMAT_UNSUPPORTED);
    }
    let [w, h, dp, a] = max_dims(d.geometry);
    if d.width > w || d.height > h || d.depth > dp || d.array_size > a {
        return Err(status::SIZE_UNSUPPORTED);
    }
    Ok(prop)
}

/// Everything `hsa_ext_image_data_get_info(_with_layout)` and the create
/// functions compute for a GPU agent: validation, then the layout.
pub fn data_info(
    d: &Desc,
    linear: bool,
    row_pitch: u64,
    slice_pitch: u64,
) -> Result<(Prop, Layout), HsaStatus> {
    let prop = check(d)?;
    match layout(d, &prop, linear, row_pitch, slice_pitch) {
        Ok(l) => Ok((prop, l)),
        Err(LayoutError::Pitch) => Err(status::PITCH_UNSUPPORTED),
        Err(LayoutError::AddrLib(row)) => {
            tracing::warn!(
                "softgpu: linear image row pitch {row} bytes ({}) is not a multiple of \
                 {LINEAR_PITCH_BYTES} bytes or is smaller than a padded row of {} elements of {} \
                 bytes; returning HSA_STATUS_ERROR as ROCr does",
                if row_pitch == 0 {
                    "the default, width x element size"
                } else {
                    "as given"
                },
                d.width,
                prop.element_size
            );
            Err(HsaStatus::ERROR)
        }
    }
}

/// The 12-dword image descriptor SoftGPU stores behind an image handle.
///
/// Dwords 0-7 are the hardware resource: for a 1D buffer (`1DB`) a 128-bit
/// buffer resource (V#) in dwords 0-3, otherwise a 256-bit image resource
/// (T#). Dwords 8-10 are what ROCr puts there for the device libraries: the
/// channel type, the channel order and the width. Dword 11 is 0.
///
/// GFX9 (Vega and CDNA ISA documentation, "Image Resource" and "Buffer
/// Resource"): base address >> 8 in dword 0 and bits [7:0] of dword 1,
/// DATA_FORMAT [25:20] and NUM_FORMAT [29:26] of dword 1; WIDTH-1 [13:0] and
/// HEIGHT-1 [27:14] of dword 2; DST_SEL_X/Y/Z/W, SW_MODE [24:20] (0, linear)
/// and TYPE [31:28] of dword 3; DEPTH-1 (or last array layer) [12:0], PITCH-1
/// [28:13] and BC_SWIZZLE [31:29] of dword 4.
///
/// RDNA (gfx1030, gfx11, gfx12): the RDNA layout (base address as above,
/// WIDTH-1 split between dword 1 [31:30] and dword 2 [11:0], HEIGHT-1 in dword
/// 2 [27:14], RESOURCE_LEVEL 1, the same dword 3 fields with BC_SWIZZLE at
/// [27:25], PITCH-1 or DEPTH-1 in dword 4). The unified FORMAT field is left 0:
/// SoftGPU does not encode RDNA format codes (policy).
pub fn encode_image_srd(family: Family, d: &Desc, prop: &Prop, l: &Layout, addr: u64) -> [u32; 12] {
    let mut w = [0u32; 12];
    let sel = swizzle(d.channel_order);
    let sels = sel[0] | sel[1] << 3 | sel[2] << 6 | sel[3] << 9;
    let e = prop.element_size;
    if d.geometry == geometry::G1DB {
        w[0] = addr as u32;
        w[1] = ((addr >> 32) as u32 & 0xffff) | (e & 0x3fff) << 16;
        w[2] = (d.width as u32).wrapping_mul(e);
        w[3] = match family {
            // INDEX_STRIDE is the element size truncated to its 2 bits, as ROCr writes it.
            Family::Gfx9 => {
                sels | (prop.num_format & 7) << 12 | (prop.data_format & 0xf) << 15 | (e & 3) << 21
            }
            Family::Rdna => sels | (e & 3) << 21 | 1 << 24,
        };
    } else {
        let [ex, ey, ez] = l.extents;
        let width1 = (ex - 1) as u32;
        let height1 = match d.geometry {
            geometry::G1D | geometry::G1DA => 0,
            _ => (ey - 1) as u32,
        };
        let array = matches!(
            d.geometry,
            geometry::G1DA | geometry::G2DA | geometry::G2DADEPTH
        );
        let depth1 = match d.geometry {
            geometry::G1DA => (ey - 1) as u32,
            geometry::G2DA | geometry::G2DADEPTH | geometry::G3D => (ez - 1) as u32,
            _ => 0,
        };
        let pitch1 = (l.pitch - 1) as u32;
        w[0] = (addr >> 8) as u32;
        let ty = resource_type(d.geometry);
        match family {
            Family::Gfx9 => {
                w[1] = ((addr >> 40) as u32 & 0xff)
                    | (prop.data_format & 0x3f) << 20
                    | (prop.num_format & 0xf) << 26;
                w[2] = (width1 & 0x3fff) | (height1 & 0x3fff) << 14;
                w[3] = sels | ty << 28;
                w[4] = (depth1 & 0x1fff) | (pitch1 & 0xffff) << 13 | bc_swizzle(sel) << 29;
            }
            Family::Rdna => {
                w[1] = ((addr >> 40) as u32 & 0xff) | (width1 & 3) << 30;
                w[2] = ((width1 >> 2) & 0xfff) | (height1 & 0x3fff) << 14 | 1 << 31;
                w[3] = sels | bc_swizzle(sel) << 25 | ty << 28;
                w[4] = if array || d.geometry == geometry::G3D {
                    depth1 & 0x1fff
                } else {
                    pitch1 & 0x3fff
                };
            }
        }
    }
    w[8] = d.channel_type;
    w[9] = d.channel_order;
    w[10] = d.width as u32;
    w
}

/// A copy of `hsa_ext_sampler_descriptor_v2_t` (v1 repeats its address mode).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SamplerDesc {
    pub coordinate_mode: u32,
    pub filter_mode: u32,
    pub address_modes: [u32; 3],
}

/// The sampler resource (S#, 4 dwords of 8) for a descriptor, as ROCr fills
/// it: CLAMP_X/Y/Z [8:0] and FORCE_UNNORMALIZED [15] of dword 0, MAX_LOD
/// [23:12] = 4095 in dword 1, XY_MAG_FILTER [21:20] and XY_MIN_FILTER [23:22]
/// of dword 2, BORDER_COLOR_TYPE 0 (transparent black) in dword 3. An unknown
/// address or filter mode is `INVALID_ARGUMENT` (ROCr's descriptor code fails
/// on it too, though ROCr's create then ignores the failure). Coordinate
/// modes other than unnormalized are normalized, as in ROCr. The same layout
/// on every family (for RDNA: SoftGPU policy).
pub fn encode_sampler_srd(s: &SamplerDesc) -> Result<[u32; 8], HsaStatus> {
    let clamp = |m: u32| -> Result<u32, HsaStatus> {
        Ok(match m {
            1 => 2,     // CLAMP_TO_EDGE -> CLAMP_LAST_TEXEL
            2 => 6,     // CLAMP_TO_BORDER -> CLAMP_BORDER
            4 => 1,     // MIRRORED_REPEAT -> MIRROR
            0 | 3 => 0, // UNDEFINED, REPEAT -> WRAP
            _ => return Err(HsaStatus::ERROR_INVALID_ARGUMENT),
        })
    };
    let filter = match s.filter_mode {
        0 => 0, // NEAREST -> POINT
        1 => 1, // LINEAR -> BILINEAR
        _ => return Err(HsaStatus::ERROR_INVALID_ARGUMENT),
    };
    let mut w = [0u32; 8];
    w[0] = clamp(s.address_modes[0])?
        | clamp(s.address_modes[1])? << 3
        | clamp(s.address_modes[2])? << 6
        | ((s.coordinate_mode == 0) as u32) << 15;
    w[1] = 4095 << 12;
    w[2] = filter << 20 | filter << 22;
    Ok(w)
}

/// C layouts of the image extension's structures (`hsa_ext_image.h`,
/// `hsa_ext_amd.h`), checked against the pinned headers by
/// `tests/abi_layout.rs` through [`abi::LAYOUT`] and [`abi::CONSTANTS`].
pub mod abi {
    use std::mem::{offset_of, size_of};

    /// `hsa_ext_image_format_t`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub struct ImageFormat {
        pub channel_type: u32,
        pub channel_order: u32,
    }

    /// `hsa_ext_image_descriptor_t`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub struct ImageDescriptor {
        pub geometry: u32,
        pub width: usize,
        pub height: usize,
        pub depth: usize,
        pub array_size: usize,
        pub format: ImageFormat,
    }

    /// `hsa_ext_image_data_info_t`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub struct ImageDataInfo {
        pub size: usize,
        pub alignment: usize,
    }

    /// `hsa_dim3_t` (one mirror for the crate, laid out in `crate::abi`).
    pub use crate::abi::Dim3;

    /// `hsa_ext_image_region_t`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub struct ImageRegion {
        pub offset: Dim3,
        pub range: Dim3,
    }

    /// `hsa_ext_sampler_descriptor_t`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub struct SamplerDescriptor {
        pub coordinate_mode: u32,
        pub filter_mode: u32,
        pub address_mode: u32,
    }

    /// `hsa_ext_sampler_descriptor_v2_t` (ROCr 6.x headers; not in the pinned
    /// 5.2.3 headers, so its layout is pinned here only).
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub struct SamplerDescriptorV2 {
        pub coordinate_mode: u32,
        pub filter_mode: u32,
        pub address_modes: [u32; 3],
    }

    /// The fixed head of `hsa_amd_image_descriptor_t` (its `data` runs on).
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub struct AmdImageDescriptorHead {
        pub version: u32,
        pub device_id: u32,
    }

    /// Every `sizeof`/`offsetof` of these types, keyed by C names.
    pub const LAYOUT: &[crate::abi::LayoutRow] = &[
        ("hsa_ext_image_format_t", "", size_of::<ImageFormat>()),
        (
            "hsa_ext_image_format_t",
            "channel_type",
            offset_of!(ImageFormat, channel_type),
        ),
        (
            "hsa_ext_image_format_t",
            "channel_order",
            offset_of!(ImageFormat, channel_order),
        ),
        (
            "hsa_ext_image_descriptor_t",
            "",
            size_of::<ImageDescriptor>(),
        ),
        (
            "hsa_ext_image_descriptor_t",
            "geometry",
            offset_of!(ImageDescriptor, geometry),
        ),
        (
            "hsa_ext_image_descriptor_t",
            "width",
            offset_of!(ImageDescriptor, width),
        ),
        (
            "hsa_ext_image_descriptor_t",
            "height",
            offset_of!(ImageDescriptor, height),
        ),
        (
            "hsa_ext_image_descriptor_t",
            "depth",
            offset_of!(ImageDescriptor, depth),
        ),
        (
            "hsa_ext_image_descriptor_t",
            "array_size",
            offset_of!(ImageDescriptor, array_size),
        ),
        (
            "hsa_ext_image_descriptor_t",
            "format",
            offset_of!(ImageDescriptor, format),
        ),
        ("hsa_ext_image_data_info_t", "", size_of::<ImageDataInfo>()),
        (
            "hsa_ext_image_data_info_t",
            "size",
            offset_of!(ImageDataInfo, size),
        ),
        (
            "hsa_ext_image_data_info_t",
            "alignment",
            offset_of!(ImageDataInfo, alignment),
        ),
        ("hsa_ext_image_region_t", "", size_of::<ImageRegion>()),
        (
            "hsa_ext_image_region_t",
            "offset",
            offset_of!(ImageRegion, offset),
        ),
        (
            "hsa_ext_image_region_t",
            "range",
            offset_of!(ImageRegion, range),
        ),
        (
            "hsa_ext_sampler_descriptor_t",
            "",
            size_of::<SamplerDescriptor>(),
        ),
        (
            "hsa_ext_sampler_descriptor_t",
            "coordinate_mode",
            offset_of!(SamplerDescriptor, coordinate_mode),
        ),
        (
            "hsa_ext_sampler_descriptor_t",
            "filter_mode",
            offset_of!(SamplerDescriptor, filter_mode),
        ),
        (
            "hsa_ext_sampler_descriptor_t",
            "address_mode",
            offset_of!(SamplerDescriptor, address_mode),
        ),
        (
            "hsa_amd_image_descriptor_t",
            "version",
            offset_of!(AmdImageDescriptorHead, version),
        ),
        (
            "hsa_amd_image_descriptor_t",
            "deviceID",
            offset_of!(AmdImageDescriptorHead, device_id),
        ),
        ("hsa_ext_image_t", "", size_of::<u64>()),
        ("hsa_ext_sampler_t", "", size_of::<u64>()),
    ];

    /// Enumerator values of the image extension this crate relies on.
    pub const CONSTANTS: &[(&str, i64)] = &[
        ("HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED", 0x3000),
        ("HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED", 0x3001),
        ("HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED", 0x3002),
        (
            "HSA_EXT_STATUS_ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED",
            0x3003,
        ),
        ("HSA_EXT_IMAGE_GEOMETRY_1D", super::geometry::G1D as i64),
        ("HSA_EXT_IMAGE_GEOMETRY_1DB", super::geometry::G1DB as i64),
        (
            "HSA_EXT_IMAGE_GEOMETRY_2DADEPTH",
            super::geometry::G2DADEPTH as i64,
        ),
        (
            "HSA_EXT_IMAGE_CHANNEL_ORDER_SRGBA",
            super::order::SRGBA as i64,
        ),
        (
            "HSA_EXT_IMAGE_CHANNEL_ORDER_DEPTH_STENCIL",
            super::order::DEPTH_STENCIL as i64,
        ),
        (
            "HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_101010",
            super::ty::UNORM_SHORT_101010 as i64,
        ),
        ("HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT", super::ty::FLOAT as i64),
        (
            "HSA_EXT_IMAGE_CAPABILITY_READ_WRITE",
            super::cap::READ_WRITE as i64,
        ),
        (
            "HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR",
            super::LAYOUT_LINEAR as i64,
        ),
        ("HSA_EXT_SAMPLER_ADDRESSING_MODE_MIRRORED_REPEAT", 4),
        ("HSA_EXT_SAMPLER_FILTER_MODE_LINEAR", 1),
        ("HSA_EXT_SAMPLER_COORDINATE_MODE_NORMALIZED", 1),
    ];

    // Compile-time pins (hsa_ext_image.h, libhsa-runtime-dev 5.2.3; v2 from ROCr 6.4).
    const _: () = {
        assert!(size_of::<ImageDescriptor>() == 48);
        assert!(size_of::<ImageRegion>() == 24);
        assert!(size_of::<ImageDataInfo>() == 16);
        assert!(size_of::<SamplerDescriptor>() == 12);
        assert!(size_of::<SamplerDescriptorV2>() == 20);
        assert!(offset_of!(ImageDescriptor, format) == 40);
    };
}

// ---------------------------------------------------------------- objects

/// The descriptor an image handle points at.
#[repr(C, align(16))]
struct ImageSrd([u32; 12]);

/// The descriptor a sampler handle points at.
#[repr(C, align(16))]
struct SamplerSrd([u32; 8]);

/// A live image.
struct ImageObj {
    srd: Box<ImageSrd>,
    agent: u64,
    desc: Desc,
    layout: Layout,
    /// Where the data is (as the program passed it; locked-memory agent
    /// addresses are translated when the bytes are touched).
    data: u64,
}

/// What an operation needs of an image (copied out of the registry, so no
/// lock is held while bytes move).
#[derive(Clone, Copy, Debug)]
pub struct ImageView {
    pub agent: u64,
    pub desc: Desc,
    pub layout: Layout,
    pub data: u64,
}

#[derive(Default)]
struct Registry {
    images: HashMap<u64, ImageObj>,
    samplers: HashMap<u64, Box<SamplerSrd>>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn with_registry<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    let mut g = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(Registry::default))
}

/// Register an image whose data is at `data`; returns its handle (the
/// address of its descriptor).
pub fn create_image(
    family: Family,
    agent: u64,
    desc: Desc,
    prop: &Prop,
    layout: Layout,
    data: u64,
) -> u64 {
    let srd = Box::new(ImageSrd(encode_image_srd(
        family, &desc, prop, &layout, data,
    )));
    let handle = &*srd as *const ImageSrd as u64;
    with_registry(|r| {
        r.images.insert(
            handle,
            ImageObj {
                srd,
                agent,
                desc,
                layout,
                data,
            },
        )
    });
    handle
}

/// Forget an image; false when the handle is not a live image.
pub fn destroy_image(handle: u64) -> bool {
    with_registry(|r| r.images.remove(&handle)).is_some()
}

/// A live image's description, or `None` for an unknown handle.
pub fn image(handle: u64) -> Option<ImageView> {
    with_registry(|r| {
        r.images.get(&handle).map(|o| ImageView {
            agent: o.agent,
            desc: o.desc,
            layout: o.layout,
            data: o.data,
        })
    })
}

/// The descriptor words behind a live image handle.
pub fn image_srd(handle: u64) -> Option<[u32; 12]> {
    with_registry(|r| r.images.get(&handle).map(|o| o.srd.0))
}

/// Register a sampler; returns its handle (the address of its descriptor).
pub fn create_sampler(words: [u32; 8]) -> u64 {
    let srd = Box::new(SamplerSrd(words));
    let handle = &*srd as *const SamplerSrd as u64;
    with_registry(|r| r.samplers.insert(handle, srd));
    handle
}

/// Forget a sampler; false when the handle is not a live sampler.
pub fn destroy_sampler(handle: u64) -> bool {
    with_registry(|r| r.samplers.remove(&handle)).is_some()
}

/// The descriptor words behind a live sampler handle.
pub fn sampler_srd(handle: u64) -> Option<[u32; 8]> {
    with_registry(|r| r.samplers.get(&handle).map(|s| s.0))
}

// ---------------------------------------------------------------- regions and bytes

/// A region in elements: offset and range along (x, y, z).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Region {
    pub offset: [u64; 3],
    pub range: [u64; 3],
}

impl Region {
    fn is_empty(&self) -> bool {
        self.range.contains(&0)
    }

    /// Within the image's extents (an empty region always is).
    pub fn fits(&self, ext: [u64; 3]) -> bool {
        self.is_empty()
            || (0..3).all(|i| {
                self.offset[i]
                    .checked_add(self.range[i])
                    .is_some_and(|end| end <= ext[i])
            })
    }
}

impl ImageView {
    /// Byte offset of element (x, y, z) from the image's data.
    fn offset(&self, x: u64, y: u64, z: u64) -> u64 {
        let l = &self.layout;
        if self.desc.geometry == geometry::G1DA {
            // y is the layer; layers are a slice pitch apart (= the row pitch).
            y * l.slice_pitch + x * l.element_size
        } else {
            z * l.slice_pitch + y * l.row_pitch + x * l.element_size
        }
    }
}

/// Element pitches of a linear buffer as ROCr's blit kernels address it: a row
/// is at least `range.x` elements, a slice at least a row times `range.y`; in
/// a 1D array the layers (y) are a row apart.
/// `None` when the buffer the region spans at these pitches would not fit the
/// address space (no buffer can satisfy the contract then).
fn buffer_pitches(
    geom: u32,
    e: u64,
    r: &Region,
    row_pitch: u64,
    slice_pitch: u64,
    buffer: u64,
) -> Option<(u64, u64)> {
    let row = r.range[0].max(row_pitch / e);
    let slice = if geom == geometry::G1DA {
        row
    } else {
        row.checked_mul(r.range[1])?.max(slice_pitch / e)
    };
    let (brow, bslice) = (row.checked_mul(e)?, slice.checked_mul(e)?);
    // The last byte the region touches in the buffer.
    let end = (r.range[2] - 1)
        .checked_mul(bslice)?
        .checked_add((r.range[1] - 1).checked_mul(brow)?)?
        .checked_add(r.range[0].checked_mul(e)?)?;
    buffer.checked_add(end)?;
    Some((brow, bslice))
}

/// Copy between a linear buffer and an image region (`to_image`: import).
///
/// # Safety
/// `buffer` must be valid (readable for import, writable for export) for
/// every byte the region addresses at the given pitches, and the image's data
/// for its whole layout size, as the HSA contract of `hsa_ext_image_create`,
/// `import` and `export` requires; the two must not overlap.
pub unsafe fn transfer(
    img: &ImageView,
    buffer: u64,
    row_pitch: u64,
    slice_pitch: u64,
    r: &Region,
    to_image: bool,
) -> Result<(), HsaStatus> {
    if !r.fits(img.layout.extents) {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    if r.is_empty() {
        return Ok(());
    }
    let e = img.layout.element_size;
    let (brow, bslice) = buffer_pitches(img.desc.geometry, e, r, row_pitch, slice_pitch, buffer)
        .ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
    let width = r.range[0] * e;
    for z in 0..r.range[2] {
        for y in 0..r.range[1] {
            let i = img.data + img.offset(r.offset[0], r.offset[1] + y, r.offset[2] + z);
            let b = buffer + z * bslice + y * brow;
            let (src, dst) = if to_image { (b, i) } else { (i, b) };
            // SAFETY: both ranges lie inside memory the caller vouches for
            // (this function's contract); the region was checked against the
            // image's extents, so the image side stays inside its layout.
            unsafe { copy_bytes(src, dst, width) };
        }
    }
    Ok(())
}

/// Copy `n` bytes, translating locked-memory agent addresses to host ones.
///
/// # Safety
/// Both ranges valid for `n` bytes; they may overlap.
unsafe fn copy_bytes(src: u64, dst: u64, n: u64) {
    let s = super::memory::to_host(src);
    let d = super::memory::to_host(dst);
    // SAFETY: the caller's contract; `ptr::copy` tolerates overlap.
    unsafe { std::ptr::copy(s as *const u8, d as *mut u8, n as usize) };
}

/// How `hsa_ext_image_copy` converts between two formats.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Conversion {
    None,
    SrgbToLinear,
    LinearToSrgb,
}

/// Copy a region between two images (ROCr: same agent, same format, or
/// `SRGBA` <-> `RGBA` with `UNORM_INT8`, converting the colour channels).
///
/// # Safety
/// Both images' data must be valid for their whole layout sizes.
pub unsafe fn copy(
    src: &ImageView,
    src_offset: [u64; 3],
    dst: &ImageView,
    dst_offset: [u64; 3],
    range: [u64; 3],
) -> Result<(), HsaStatus> {
    if src.agent != dst.agent {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    let (so, st) = (src.desc.channel_order, src.desc.channel_type);
    let (d_o, dt) = (dst.desc.channel_order, dst.desc.channel_type);
    let conv = if (so, st) == (d_o, dt) {
        Conversion::None
    } else if st == ty::UNORM_INT8 && dt == ty::UNORM_INT8 {
        match (so, d_o) {
            (order::SRGBA, order::RGBA) => Conversion::SrgbToLinear,
            (order::RGBA, order::SRGBA) => Conversion::LinearToSrgb,
            _ => return Err(HsaStatus::ERROR_INVALID_ARGUMENT),
        }
    } else {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    };
    let sr = Region {
        offset: src_offset,
        range,
    };
    let dr = Region {
        offset: dst_offset,
        range,
    };
    if !sr.fits(src.layout.extents) || !dr.fits(dst.layout.extents) {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    if sr.is_empty() {
        return Ok(());
    }
    let e = src.layout.element_size;
    for z in 0..range[2] {
        for y in 0..range[1] {
            let s = src.data + src.offset(src_offset[0], src_offset[1] + y, src_offset[2] + z);
            let d = dst.data + dst.offset(dst_offset[0], dst_offset[1] + y, dst_offset[2] + z);
            if conv == Conversion::None {
                // SAFETY: both rows lie inside the images' data (regions checked).
                unsafe { copy_bytes(s, d, range[0] * e) };
                continue;
            }
            for x in 0..range[0] {
                let mut px = [0u8; 4];
                // SAFETY: one 4-byte element inside each image (regions checked).
                unsafe { copy_bytes(s + x * 4, px.as_mut_ptr() as u64, 4) };
                let out = texel::convert_srgb_element(px, conv == Conversion::SrgbToLinear);
                // SAFETY: as above.
                unsafe { copy_bytes(out.as_ptr() as u64, d + x * 4, 4) };
            }
        }
    }
    Ok(())
}

/// Set every element of a region to the colour `words` (four 32-bit
/// components in the channel type's access type, as ROCr reads them).
///
/// # Safety
/// The image's data must be valid for its whole layout size.
pub unsafe fn clear(img: &ImageView, words: [u32; 4], r: &Region) -> Result<(), HsaStatus> {
    let el = texel::encode_clear(img.desc.channel_order, img.desc.channel_type, words)
        .ok_or(status::FORMAT_UNSUPPORTED)?;
    if !r.fits(img.layout.extents) {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    if r.is_empty() {
        return Ok(());
    }
    let row: Vec<u8> = el.as_slice().repeat(r.range[0] as usize);
    for z in 0..r.range[2] {
        for y in 0..r.range[1] {
            let d = img.data + img.offset(r.offset[0], r.offset[1] + y, r.offset[2] + z);
            // SAFETY: the row lies inside the image's data (region checked);
            // the source is our own buffer.
            unsafe { copy_bytes(row.as_ptr() as u64, d, row.len() as u64) };
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(geometry: u32, w: u64, h: u64, d: u64, a: u64, o: u32, t: u32) -> Desc {
        Desc {
            geometry,
            width: w,
            height: h,
            depth: d,
            array_size: a,
            channel_order: o,
            channel_type: t,
        }
    }

    #[test]
    fn the_format_table_matches_rocr_for_every_order_type_and_geometry() {
        let mut supported = 0;
        for o in 0..order::COUNT {
            for t in 0..ty::COUNT {
                let e = lut(o, t);
                if e.cap != 0 {
                    supported += 1;
                    assert!(matches!(e.element_size, 1 | 2 | 4 | 8 | 16), "{o} {t}");
                }
            }
        }
        // ROCr's table: A, R, RG, RA, RGBA 12 each; BGRA, ARGB 4 each; RGB 3;
        // SRGBA 1; INTENSITY, LUMINANCE 6 each; DEPTH 2.
        assert_eq!(supported, 5 * 12 + 2 * 4 + 3 + 1 + 2 * 6 + 2);
        let f = property(order::RGBA, ty::FLOAT, geometry::G2D).unwrap();
        assert_eq!((f.cap, f.element_size), (cap::RW, 16));
        let s = property(order::SRGBA, ty::UNORM_INT8, geometry::G2D).unwrap();
        assert_eq!(s.cap, cap::READ_ONLY);
        assert_eq!(
            property(order::SRGBA, ty::UNORM_INT8, geometry::G1DB)
                .unwrap()
                .cap,
            0
        );
        assert_eq!(
            property(order::RGB, ty::UNORM_SHORT_565, geometry::G1DB)
                .unwrap()
                .cap,
            0
        );
        assert_eq!(
            property(order::R, ty::FLOAT, geometry::G2DDEPTH)
                .unwrap()
                .cap,
            0
        );
        let dp = property(order::DEPTH, ty::FLOAT, geometry::G2DDEPTH).unwrap();
        assert_eq!(dp.cap, cap::ROWO);
        assert_eq!(
            property(order::DEPTH, ty::UNORM_INT24, geometry::G2D)
                .unwrap()
                .cap,
            0
        );
        assert_eq!(
            property(order::COUNT, 0, 0),
            Err(HsaStatus::ERROR_INVALID_ARGUMENT)
        );
        assert_eq!(
            property(0, ty::COUNT, 0),
            Err(HsaStatus::ERROR_INVALID_ARGUMENT)
        );
        assert_eq!(
            property(0, 0, geometry::COUNT),
            Err(HsaStatus::ERROR_INVALID_ARGUMENT)
        );
    }

    #[test]
    fn opaque_and_linear_layouts_pad_rows_to_256_bytes() {
        let d = desc(geometry::G2D, 100, 7, 0, 0, order::R, ty::FLOAT);
        let (_, l) = data_info(&d, false, 0, 0).unwrap();
        assert_eq!((l.pitch, l.row_pitch, l.slice_pitch), (128, 512, 512 * 7));
        assert_eq!((l.size, l.alignment), (512 * 7, 256));
        // Linear with the default pitch (width x element = 400 bytes): ROCr's
        // address library refuses a row pitch that is not a multiple of 256.
        assert_eq!(data_info(&d, true, 0, 0), Err(HsaStatus::ERROR));
        // A padded pitch is accepted, and so is a larger multiple of 256.
        assert_eq!(data_info(&d, true, 512, 0).unwrap().1, l);
        let (_, big) = data_info(&d, true, 1024, 0).unwrap();
        assert_eq!((big.row_pitch, big.size), (1024, 1024 * 7));
        // Smaller than the padded width, or not a multiple of 256: refused.
        assert_eq!(data_info(&d, true, 256, 0), Err(HsaStatus::ERROR));
        assert_eq!(data_info(&d, true, 768 + 4, 0), Err(HsaStatus::ERROR));
        // Not a whole number of elements: the address library rounds down to a
        // valid pitch, which then differs from the one asked for.
        assert_eq!(
            data_info(&d, true, 512 + 2, 0),
            Err(status::PITCH_UNSUPPORTED)
        );
        // A slice pitch that differs from row pitch x height.
        assert_eq!(
            data_info(&d, true, 512, 512 * 8),
            Err(status::PITCH_UNSUPPORTED)
        );
        assert!(data_info(&d, true, 512, 512 * 7).is_ok());
        // Pitches whose sizes do not fit 64 bits are refused, not wrapped.
        assert_eq!(
            data_info(&d, true, 1 << 62, 0),
            Err(status::PITCH_UNSUPPORTED)
        );
    }

    #[test]
    fn arrays_and_volumes_stack_slices() {
        let d3 = desc(geometry::G3D, 64, 4, 3, 0, order::RGBA, ty::UNORM_INT8);
        let (_, l) = data_info(&d3, true, 0, 0).unwrap();
        assert_eq!((l.row_pitch, l.slice_pitch, l.size), (256, 1024, 3072));
        let d1a = desc(geometry::G1DA, 64, 0, 0, 5, order::R, ty::UNSIGNED_INT32);
        let (_, l) = data_info(&d1a, true, 0, 0).unwrap();
        assert_eq!((l.row_pitch, l.slice_pitch, l.size), (256, 256, 5 * 256));
        assert_eq!(l.extents, [64, 5, 1]);
        let d2a = desc(geometry::G2DA, 16, 3, 0, 2, order::RG, ty::HALF_FLOAT);
        let (_, l) = data_info(&d2a, false, 0, 0).unwrap();
        assert_eq!((l.pitch, l.slice_pitch, l.size), (64, 768, 1536));
        let db = desc(geometry::G1DB, 1000, 0, 0, 0, order::R, ty::UNSIGNED_INT8);
        let (_, l) = data_info(&db, false, 0, 0).unwrap();
        assert_eq!(l.size, 1024);
    }

    #[test]
    fn sizes_beyond_the_geometry_limits_are_refused() {
        let too_wide = desc(geometry::G2D, 16385, 1, 0, 0, order::R, ty::FLOAT);
        assert_eq!(check(&too_wide), Err(status::SIZE_UNSUPPORTED));
        let tall_1d = desc(geometry::G1D, 16, 2, 0, 0, order::R, ty::FLOAT);
        assert_eq!(check(&tall_1d), Err(status::SIZE_UNSUPPORTED));
        let layers = desc(geometry::G2DA, 16, 16, 0, 8193, order::R, ty::FLOAT);
        assert_eq!(check(&layers), Err(status::SIZE_UNSUPPORTED));
        let bad = desc(geometry::G2D, 16, 16, 0, 0, order::RGBX, ty::FLOAT);
        assert_eq!(check(&bad), Err(status::FORMAT_UNSUPPORTED));
        assert_eq!(max_dim_words(0x3003), Some(vec![16384, 16384]));
        assert_eq!(max_dim_words(0x3007), Some(vec![16384, 16384, 8192]));
        assert_eq!(max_dim_words(0x3008), Some(vec![8192]));
        assert_eq!(max_dim_words(0x3002), Some(vec![u32::MAX]));
        assert_eq!(max_dim_words(0x3009), None);
    }

    #[test]
    fn the_agent_limits_and_hsa_amd_image_get_info_max_dim_give_the_same_words() {
        use crate::runtime::agents::{AgentKind, Topology};
        let t = Topology::new(vec![crate::isa::find("gfx90a").unwrap()]);
        for attr in 0x3000..=0x3008u32 {
            let words = max_dim_words(attr).unwrap();
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let agent = t
                .agent_info(AgentKind::Gpu(0), crate::abi::AgentInfo(attr))
                .unwrap();
            assert_eq!(agent.to_bytes(), bytes, "attribute {attr:#x}");
        }
    }

    #[test]
    fn gfx9_descriptors_carry_address_format_dimensions_and_pitch() {
        let d = desc(geometry::G2D, 100, 7, 0, 0, order::BGRA, ty::UNORM_INT8);
        let (prop, l) = data_info(&d, false, 0, 0).unwrap();
        let addr = 0x7f12_3456_7800u64;
        let w = encode_image_srd(Family::Gfx9, &d, &prop, &l, addr);
        assert_eq!(w[0], (addr >> 8) as u32);
        assert_eq!(w[1] & 0xff, (addr >> 40) as u32 & 0xff);
        assert_eq!((w[1] >> 20) & 0x3f, FMT_8_8_8_8);
        assert_eq!((w[1] >> 26) & 0xf, NUM_UNORM);
        assert_eq!(w[2] & 0x3fff, 99);
        assert_eq!((w[2] >> 14) & 0x3fff, 6);
        assert_eq!(w[3] & 0xfff, SEL_Z | SEL_Y << 3 | SEL_X << 6 | SEL_W << 9);
        assert_eq!(w[3] >> 28, 9);
        assert_eq!((w[4] >> 13) & 0xffff, 127); // 100 elements padded to 128 (512 bytes)
        assert_eq!(w[4] >> 29, 4); // ZYXW
        assert_eq!(&w[8..], &[ty::UNORM_INT8, order::BGRA, 100, 0]);
        let b = desc(geometry::G1DB, 64, 0, 0, 0, order::R, ty::FLOAT);
        let (prop, l) = data_info(&b, false, 0, 0).unwrap();
        let w = encode_image_srd(Family::Gfx9, &b, &prop, &l, addr);
        assert_eq!(w[0], addr as u32);
        assert_eq!(w[1] & 0xffff, (addr >> 32) as u32 & 0xffff);
        assert_eq!((w[1] >> 16) & 0x3fff, 4);
        assert_eq!(w[2], 256);
        assert_eq!((w[3] >> 15) & 0xf, FMT_32);
        assert_eq!((w[3] >> 12) & 7, NUM_FLOAT);
        let (dprop, dl) = data_info(&d, false, 0, 0).unwrap();
        let r = encode_image_srd(Family::Rdna, &d, &dprop, &dl, addr);
        assert_eq!(r[0], (addr >> 8) as u32);
        assert_eq!((r[1] >> 30) | (r[2] & 0xfff) << 2, 99);
        assert_eq!(r[2] >> 31, 1);
    }

    #[test]
    fn sampler_descriptors_follow_the_modes_and_refuse_unknown_ones() {
        let s = SamplerDesc {
            coordinate_mode: 0,
            filter_mode: 1,
            address_modes: [1, 1, 1],
        };
        let w = encode_sampler_srd(&s).unwrap();
        assert_eq!(w[0], 2 | 2 << 3 | 2 << 6 | 1 << 15);
        assert_eq!(w[1], 4095 << 12);
        assert_eq!(w[2], 1 << 20 | 1 << 22);
        let bad = SamplerDesc {
            address_modes: [5, 0, 0],
            ..s
        };
        assert_eq!(
            encode_sampler_srd(&bad),
            Err(HsaStatus::ERROR_INVALID_ARGUMENT)
        );
        let bad = SamplerDesc {
            filter_mode: 2,
            ..s
        };
        assert_eq!(
            encode_sampler_srd(&bad),
            Err(HsaStatus::ERROR_INVALID_ARGUMENT)
        );
    }

    #[test]
    fn import_export_copy_and_clear_move_bytes_in_the_layout() {
        let d = desc(geometry::G2D, 70, 3, 0, 0, order::RGBA, ty::UNSIGNED_INT8);
        let (prop, l) = data_info(&d, false, 0, 0).unwrap();
        let mut data = vec![0u8; l.size as usize];
        let h = create_image(Family::Gfx9, 1, d, &prop, l, data.as_mut_ptr() as u64);
        let img = image(h).unwrap();
        let src: Vec<u8> = (0..70 * 3 * 4).map(|i| (i * 7 % 251) as u8).collect();
        let full = Region {
            offset: [0; 3],
            range: [70, 3, 1],
        };
        // SAFETY: `src` and `data` are live buffers of the sizes the region addresses.
        unsafe { transfer(&img, src.as_ptr() as u64, 0, 0, &full, true) }.unwrap();
        // 70 elements of 4 bytes, rows padded to 128 elements (512 bytes).
        for y in 0..3 {
            let row = &data[y * 512..y * 512 + 280];
            assert_eq!(row, &src[y * 280..(y + 1) * 280]);
        }
        let mut out = vec![0u8; src.len()];
        // SAFETY: as above.
        unsafe { transfer(&img, out.as_mut_ptr() as u64, 0, 0, &full, false) }.unwrap();
        assert_eq!(out, src);
        // Out of bounds: refused, nothing written.
        let oob = Region {
            offset: [1, 0, 0],
            range: [70, 1, 1],
        };
        // SAFETY: refused before any access.
        let r = unsafe { transfer(&img, out.as_mut_ptr() as u64, 0, 0, &oob, false) };
        assert_eq!(r, Err(HsaStatus::ERROR_INVALID_ARGUMENT));
        // A buffer pitch whose rows would wrap around the address space.
        // SAFETY: refused before any access.
        let r = unsafe { transfer(&img, out.as_mut_ptr() as u64, 1 << 63, 0, &full, false) };
        assert_eq!(r, Err(HsaStatus::ERROR_INVALID_ARGUMENT));
        // Clear one element, then copy a 2x2 block into a second image.
        let one = Region {
            offset: [5, 1, 0],
            range: [1, 1, 1],
        };
        // SAFETY: `data` backs the image.
        unsafe { clear(&img, [9, 8, 7, 6], &one) }.unwrap();
        assert_eq!(&data[512 + 20..512 + 24], &[9, 8, 7, 6]);
        let mut data2 = vec![0u8; l.size as usize];
        let h2 = create_image(Family::Gfx9, 1, d, &prop, l, data2.as_mut_ptr() as u64);
        let img2 = image(h2).unwrap();
        // SAFETY: both images' data are live.
        unsafe { copy(&img, [4, 0, 0], &img2, [0, 1, 0], [2, 2, 1]) }.unwrap();
        assert_eq!(&data2[512..512 + 8], &data[16..24]);
        assert_eq!(&data2[1024..1024 + 8], &data[512 + 16..512 + 24]);
        assert!(destroy_image(h) && destroy_image(h2));
        assert!(!destroy_image(h));
        assert!(image(h).is_none());
    }
}
