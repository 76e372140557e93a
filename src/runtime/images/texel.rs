//! Texel conversions the CPU does in place of ROCr's image blit kernels:
//! packing a clear colour into an element of an image format, and the
//! sRGB <-> linear conversion of `hsa_ext_image_copy` between `SRGBA` and
//! `RGBA` images.
//!
//! Pure functions over values, no memory access. The conversion rules are the
//! ones the HSA Programmer's Reference Manual (and OpenCL) give for image
//! stores: normalized types are clamped, scaled and rounded to nearest even;
//! integer types saturate; half floats round to nearest even.

use super::{order, ty};

/// How `hsa_ext_image_clear` reads its `data` argument for a channel type: four
/// 32-bit components, as floats, signed or unsigned integers (ROCr's clear
/// kernel reads four words for every format).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Access {
    Float,
    Signed,
    Unsigned,
}

/// The access type of a channel type (`None` for an unknown type).
pub fn access(channel_type: u32) -> Option<Access> {
    Some(match channel_type {
        ty::SNORM_INT8..=ty::UNORM_SHORT_101010 | ty::HALF_FLOAT | ty::FLOAT => Access::Float,
        ty::SIGNED_INT8..=ty::SIGNED_INT32 => Access::Signed,
        ty::UNSIGNED_INT8..=ty::UNSIGNED_INT32 => Access::Unsigned,
        _ => return None,
    })
}

/// Which colour component (0 = x/r, 1 = y/g, 2 = z/b, 3 = w/a) each stored
/// channel holds, in memory order, for the unpacked channel orders.
fn components(channel_order: u32) -> Option<&'static [usize]> {
    Some(match channel_order {
        order::A => &[3],
        order::R | order::INTENSITY | order::LUMINANCE | order::DEPTH => &[0],
        order::RG => &[0, 1],
        order::RA => &[0, 3],
        order::RGBA | order::SRGBA => &[0, 1, 2, 3],
        order::BGRA => &[2, 1, 0, 3],
        order::ARGB => &[3, 0, 1, 2],
        _ => return None,
    })
}

/// Round to nearest, ties to even, for values already in range.
fn rte(v: f32) -> f32 {
    let r = v.round();
    if (v - v.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - v.signum()
    } else {
        r
    }
}

fn unorm(v: f32, max: u32) -> u32 {
    if v.is_nan() {
        return 0;
    }
    rte(v.clamp(0.0, 1.0) * max as f32) as u32
}

fn snorm(v: f32, max: i32) -> i32 {
    if v.is_nan() {
        return 0;
    }
    rte(v.clamp(-1.0, 1.0) * max as f32) as i32
}

/// IEEE binary32 to binary16, round to nearest even (NaN stays NaN).
pub fn f32_to_f16(v: f32) -> u16 {
    let x = v.to_bits();
    let sign = ((x >> 16) & 0x8000) as u16;
    let exp = ((x >> 23) & 0xff) as i32;
    let man = x & 0x007f_ffff;
    if exp == 0xff {
        // Inf or NaN (keep a quiet NaN payload bit).
        return sign
            | 0x7c00
            | if man != 0 {
                0x0200 | (man >> 13) as u16
            } else {
                0
            };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00; // overflow to infinity
    }
    if e <= 0 {
        // Subnormal half (or zero): shift the mantissa with its implicit bit.
        if e < -10 {
            return sign;
        }
        let m = man | 0x0080_0000;
        let shift = (14 - e) as u32;
        let half = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let mid = 1 << (shift - 1);
        let round = rem > mid || (rem == mid && (half & 1) == 1);
        return sign | (half + round as u32) as u16;
    }
    let half = ((e as u32) << 10) | (man >> 13);
    let rem = man & 0x1fff;
    let round = rem > 0x1000 || (rem == 0x1000 && (half & 1) == 1);
    // A carry out of the mantissa correctly bumps the exponent (up to infinity).
    sign | (half + round as u32) as u16
}

/// Linear to sRGB-encoded value, as ROCr converts before storing into an
/// sRGB image (values outside [0, 1] are clamped by the unorm store).
pub fn linear_to_srgb(l: f32) -> f32 {
    if l.is_nan() {
        0.0
    } else if l <= 0.003_130_8 {
        l * 12.92
    } else {
        1.055 * l.powf(1.0 / 2.4) - 0.055
    }
}

/// sRGB-encoded to linear value (what an image read of an sRGB format returns).
pub fn srgb_to_linear(s: f32) -> f32 {
    if s <= 0.040_45 {
        s / 12.92
    } else {
        ((s + 0.055) / 1.055).powf(2.4)
    }
}

/// One image element: its bytes and how many of them there are.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Element {
    pub bytes: [u8; 16],
    pub len: usize,
}

impl Element {
    fn new() -> Self {
        Element {
            bytes: [0; 16],
            len: 0,
        }
    }

    fn push(&mut self, b: &[u8]) {
        self.bytes[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// The element `hsa_ext_image_clear` stores for the colour `words` (four
/// 32-bit components read as the channel type's access type) in an image of
/// this format. `None` for a format that has no stored representation here
/// (unsupported combinations are refused before this is called).
///
/// Unused bits of packed formats (bit 15 of 555, bits 31:30 of 101010) are
/// written as 0: SoftGPU policy (ROCr's clear forces the 101010 alpha bits to
/// 0; for 555 the bit is undefined).
pub fn encode_clear(channel_order: u32, channel_type: u32, words: [u32; 4]) -> Option<Element> {
    let f = |i: usize| f32::from_bits(words[i]);
    let mut e = Element::new();
    if channel_order == order::RGB {
        let packed = match channel_type {
            ty::UNORM_SHORT_565 => {
                (unorm(f(0), 31) << 11 | unorm(f(1), 63) << 5 | unorm(f(2), 31)) as u16 as u32
            }
            ty::UNORM_SHORT_555 => unorm(f(0), 31) << 10 | unorm(f(1), 31) << 5 | unorm(f(2), 31),
            ty::UNORM_SHORT_101010 => {
                e.push(
                    &(unorm(f(0), 1023) << 20 | unorm(f(1), 1023) << 10 | unorm(f(2), 1023))
                        .to_le_bytes(),
                );
                return Some(e);
            }
            _ => return None,
        };
        e.push(&(packed as u16).to_le_bytes());
        return Some(e);
    }
    let comps = components(channel_order)?;
    for (n, &c) in comps.iter().enumerate() {
        let v = f(c);
        // sRGB orders encode the colour channels, never alpha.
        let v = if channel_order == order::SRGBA && n < 3 {
            linear_to_srgb(v)
        } else {
            v
        };
        let w = words[c];
        match channel_type {
            ty::UNORM_INT8 => e.push(&[unorm(v, 255) as u8]),
            ty::UNORM_INT16 => e.push(&(unorm(v, 65535) as u16).to_le_bytes()),
            ty::SNORM_INT8 => e.push(&[snorm(v, 127) as i8 as u8]),
            ty::SNORM_INT16 => e.push(&(snorm(v, 32767) as i16).to_le_bytes()),
            ty::SIGNED_INT8 => e.push(&[(w as i32).clamp(-128, 127) as i8 as u8]),
            ty::SIGNED_INT16 => e.push(&((w as i32).clamp(-32768, 32767) as i16).to_le_bytes()),
            ty::SIGNED_INT32 => e.push(&w.to_le_bytes()),
            ty::UNSIGNED_INT8 => e.push(&[w.min(255) as u8]),
            ty::UNSIGNED_INT16 => e.push(&(w.min(65535) as u16).to_le_bytes()),
            ty::UNSIGNED_INT32 => e.push(&w.to_le_bytes()),
            ty::HALF_FLOAT => e.push(&f32_to_f16(v).to_le_bytes()),
            ty::FLOAT => e.push(&w.to_le_bytes()),
            _ => return None,
        }
    }
    Some(e)
}

/// Convert one 4-byte `UNORM_INT8` element between the sRGB and the linear
/// encoding of its colour channels (alpha, the fourth byte, is copied).
pub fn convert_srgb_element(src: [u8; 4], srgb_to_lin: bool) -> [u8; 4] {
    let mut out = src;
    for c in out.iter_mut().take(3) {
        let v = *c as f32 / 255.0;
        let w = if srgb_to_lin {
            srgb_to_linear(v)
        } else {
            linear_to_srgb(v)
        };
        *c = unorm(w, 255) as u8;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fw(v: [f32; 4]) -> [u32; 4] {
        v.map(f32::to_bits)
    }

    #[test]
    fn half_floats_round_to_nearest_even_and_keep_specials() {
        assert_eq!(f32_to_f16(0.0), 0x0000);
        assert_eq!(f32_to_f16(-0.0), 0x8000);
        assert_eq!(f32_to_f16(1.0), 0x3c00);
        assert_eq!(f32_to_f16(-2.0), 0xc000);
        assert_eq!(f32_to_f16(65504.0), 0x7bff);
        assert_eq!(f32_to_f16(65536.0), 0x7c00);
        assert_eq!(f32_to_f16(f32::INFINITY), 0x7c00);
        assert_eq!(f32_to_f16(f32::NEG_INFINITY), 0xfc00);
        assert_eq!(f32_to_f16(f32::NAN) & 0x7c00, 0x7c00);
        assert_ne!(f32_to_f16(f32::NAN) & 0x03ff, 0);
        // Smallest subnormal half and a value halfway between two halves.
        assert_eq!(f32_to_f16(5.960_464_5e-8), 0x0001);
        assert_eq!(f32_to_f16(1.0 + 1.0 / 2048.0), 0x3c00); // tie, even stays
        assert_eq!(f32_to_f16(1.0 + 3.0 / 2048.0), 0x3c02); // tie, odd rounds up
        assert_eq!(f32_to_f16(0.333_333_34), 0x3555);
    }

    #[test]
    fn normalized_channels_clamp_scale_and_round() {
        let e = encode_clear(order::RGBA, ty::UNORM_INT8, fw([0.0, 1.0, 0.5, 2.0])).unwrap();
        assert_eq!(e.as_slice(), &[0, 255, 128, 255]);
        let e = encode_clear(order::R, ty::SNORM_INT8, fw([-1.0, 0.0, 0.0, 0.0])).unwrap();
        assert_eq!(e.as_slice(), &[(-127i8) as u8]);
        let e = encode_clear(order::R, ty::UNORM_INT16, fw([f32::NAN, 0.0, 0.0, 0.0])).unwrap();
        assert_eq!(e.as_slice(), &[0, 0]);
        let e = encode_clear(order::RG, ty::SNORM_INT16, fw([1.0, -0.5, 0.0, 0.0])).unwrap();
        assert_eq!(e.as_slice(), &[0xff, 0x7f, 0x00, 0xc0]);
    }

    #[test]
    fn channel_orders_place_components_in_memory_order() {
        let w = [1, 2, 3, 4];
        let e = encode_clear(order::BGRA, ty::UNSIGNED_INT8, w).unwrap();
        assert_eq!(e.as_slice(), &[3, 2, 1, 4]);
        let e = encode_clear(order::ARGB, ty::UNSIGNED_INT8, w).unwrap();
        assert_eq!(e.as_slice(), &[4, 1, 2, 3]);
        let e = encode_clear(order::A, ty::UNSIGNED_INT8, w).unwrap();
        assert_eq!(e.as_slice(), &[4]);
        let e = encode_clear(order::RA, ty::UNSIGNED_INT16, w).unwrap();
        assert_eq!(e.as_slice(), &[1, 0, 4, 0]);
        let e = encode_clear(order::RGBA, ty::FLOAT, fw([1.5, -2.0, 0.0, 8.0])).unwrap();
        assert_eq!(e.len, 16);
        assert_eq!(&e.bytes[0..4], &1.5f32.to_le_bytes());
    }

    #[test]
    fn integer_channels_saturate() {
        let e = encode_clear(order::RG, ty::SIGNED_INT8, [(-300i32) as u32, 300, 0, 0]).unwrap();
        assert_eq!(e.as_slice(), &[0x80, 0x7f]);
        let e = encode_clear(order::R, ty::UNSIGNED_INT16, [70000, 0, 0, 0]).unwrap();
        assert_eq!(e.as_slice(), &[0xff, 0xff]);
        let e = encode_clear(order::R, ty::SIGNED_INT32, [(-5i32) as u32, 0, 0, 0]).unwrap();
        assert_eq!(e.as_slice(), &(-5i32).to_le_bytes());
    }

    #[test]
    fn packed_formats_put_red_in_the_high_bits() {
        let e = encode_clear(order::RGB, ty::UNORM_SHORT_565, fw([1.0, 0.0, 0.0, 0.0])).unwrap();
        assert_eq!(u16::from_le_bytes([e.bytes[0], e.bytes[1]]), 0xf800);
        let e = encode_clear(order::RGB, ty::UNORM_SHORT_555, fw([0.0, 0.0, 1.0, 1.0])).unwrap();
        assert_eq!(u16::from_le_bytes([e.bytes[0], e.bytes[1]]), 0x001f);
        let e = encode_clear(order::RGB, ty::UNORM_SHORT_101010, fw([1.0, 1.0, 1.0, 1.0])).unwrap();
        assert_eq!(
            u32::from_le_bytes(e.bytes[0..4].try_into().unwrap()),
            0x3fff_ffff
        );
    }

    #[test]
    fn srgb_encodes_colour_but_not_alpha_and_round_trips() {
        let e = encode_clear(order::SRGBA, ty::UNORM_INT8, fw([0.5, 0.0, 1.0, 0.5])).unwrap();
        assert_eq!(e.as_slice(), &[188, 0, 255, 128]);
        for v in [0u8, 1, 10, 100, 188, 254, 255] {
            let lin = convert_srgb_element([v, v, v, 7], true);
            assert_eq!(lin[3], 7);
            let back = convert_srgb_element(lin, false);
            // 8-bit linear loses precision in the darks; the brights come back.
            if v >= 100 {
                assert!(
                    (back[0] as i32 - v as i32).abs() <= 1,
                    "{v} -> {lin:?} -> {back:?}"
                );
            }
        }
    }

    #[test]
    fn formats_without_a_stored_form_are_none() {
        assert!(encode_clear(order::RGBX, ty::UNORM_INT8, [0; 4]).is_none());
        assert!(encode_clear(order::RGB, ty::UNORM_INT8, [0; 4]).is_none());
        assert!(encode_clear(order::R, 99, [0; 4]).is_none());
        assert_eq!(access(ty::FLOAT), Some(Access::Float));
        assert_eq!(access(ty::SIGNED_INT16), Some(Access::Signed));
        assert_eq!(access(ty::UNSIGNED_INT32), Some(Access::Unsigned));
        assert_eq!(access(16), None);
    }
}
