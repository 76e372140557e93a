//! Exports of the HSA image extension: C argument conversion around
//! [`crate::runtime::images`].
//!
//! Argument checks follow ROCr's order (a zero agent handle first, then null
//! pointers and enumerations, then the agent itself), so a program sees the
//! status ROCr would give it. Where ROCr would dereference something it never
//! checked (an unknown image or sampler handle, a channel order past the end
//! of its table, an out-of-bounds region), SoftGPU returns
//! `HSA_STATUS_ERROR_INVALID_ARGUMENT` instead. Out-parameters are written
//! only on success.
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.
#![allow(clippy::missing_safety_doc)]

use std::ffi::c_void;

use super::status;
use crate::abi::{HsaAgent, HsaStatus};
use crate::runtime::agents::AgentKind;
use crate::runtime::images::{
    self as img, Desc, Family, LAYOUT_LINEAR, LAYOUT_OPAQUE, Region, SamplerDesc,
    abi::{
        AmdImageDescriptorHead, Dim3, ImageDataInfo, ImageDescriptor, ImageFormat, ImageRegion,
        SamplerDescriptor, SamplerDescriptorV2,
    },
};

type R = Result<(), HsaStatus>;

/// `HSA_ACCESS_PERMISSION_RO` .. `_RW`.
const PERMISSION_RANGE: std::ops::RangeInclusive<u32> = 1..=3;

/// The agent behind a handle. A zero handle has been refused before.
fn agent_kind(agent: HsaAgent) -> Result<AgentKind, HsaStatus> {
    let rt = crate::runtime::get()?;
    rt.topo
        .agent(agent.handle)
        .ok_or(HsaStatus::ERROR_INVALID_AGENT)
}

/// The family of a GPU agent, `None` for the CPU agent.
fn family(kind: AgentKind) -> Result<Option<Family>, HsaStatus> {
    let rt = crate::runtime::get()?;
    Ok(match kind {
        AgentKind::Cpu => None,
        AgentKind::Gpu(g) => Some(Family::of(rt.topo.gpus[g].arch)),
    })
}

/// ROCr refuses a zero agent handle before anything else.
fn nonzero(agent: HsaAgent) -> R {
    crate::runtime::get()?;
    if agent.handle == 0 {
        return Err(HsaStatus::ERROR_INVALID_AGENT);
    }
    Ok(())
}

/// Read a `T` the caller passed by pointer (null is `INVALID_ARGUMENT`).
///
/// # Safety
/// A non-null `p` must point at a readable `T`, as the HSA contract of the
/// calling export requires of its argument.
unsafe fn read<T: Copy>(p: *const T) -> Result<T, HsaStatus> {
    if p.is_null() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: non-null, and readable by this function's contract; the value is
    // copied out without keeping a reference.
    Ok(unsafe { p.read_unaligned() })
}

/// Write one value to a caller's out-pointer (null is `INVALID_ARGUMENT`).
///
/// # Safety
/// A non-null `out` must point at writable storage for a `T`.
unsafe fn write<T: Copy>(out: *mut T, v: T) -> R {
    if out.is_null() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: non-null, and writable by this function's contract.
    unsafe { out.write_unaligned(v) };
    Ok(())
}

fn desc_of(d: &ImageDescriptor) -> Desc {
    Desc {
        geometry: d.geometry,
        width: d.width as u64,
        height: d.height as u64,
        depth: d.depth as u64,
        array_size: d.array_size as u64,
        channel_type: d.format.channel_type,
        channel_order: d.format.channel_order,
    }
}

fn dim(d: Dim3) -> [u64; 3] {
    [d.x as u64, d.y as u64, d.z as u64]
}

fn region_of(r: &ImageRegion) -> Region {
    Region {
        offset: dim(r.offset),
        range: dim(r.range),
    }
}

/// The capability mask of a format for an agent (0 on the CPU agent, as in ROCr).
///
/// # Safety
/// `format` and `out` null or valid, as for `hsa_ext_image_get_capability`.
unsafe fn capability(
    agent: HsaAgent,
    geometry: u32,
    format: *const ImageFormat,
    out: *mut u32,
) -> R {
    nonzero(agent)?;
    if format.is_null() || out.is_null() || geometry >= img::geometry::COUNT {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: the caller's argument, valid if non-null by this export's HSA contract.
    let f = unsafe { read(format) }?;
    let kind = agent_kind(agent)?;
    let mask = match kind {
        AgentKind::Cpu => 0,
        AgentKind::Gpu(_) => img::property(f.channel_order, f.channel_type, geometry)?.cap,
    };
    // SAFETY: the caller's out-pointer, valid if non-null by this export's HSA contract.
    unsafe { write(out, mask) }
}

pub unsafe extern "C" fn hsa_ext_image_get_capability(
    agent: HsaAgent,
    geometry: u32,
    format: *const ImageFormat,
    capability_mask: *mut u32,
) -> u32 {
    status("hsa_ext_image_get_capability", || {
        // SAFETY: the caller's pointers, passed on under this export's HSA contract.
        unsafe { capability(agent, geometry, format, capability_mask) }
    })
}

pub unsafe extern "C" fn hsa_ext_image_get_capability_with_layout(
    agent: HsaAgent,
    geometry: u32,
    format: *const ImageFormat,
    layout: u32,
    capability_mask: *mut u32,
) -> u32 {
    status("hsa_ext_image_get_capability_with_layout", || {
        nonzero(agent)?;
        // ROCr accepts only the linear layout here.
        if layout != LAYOUT_LINEAR {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        // SAFETY: the caller's pointers, passed on under this export's HSA contract.
        unsafe { capability(agent, geometry, format, capability_mask) }
    })
}

/// Size, alignment and layout of an image on an agent (the CPU agent has no
/// image formats: `FORMAT_UNSUPPORTED`, as ROCr answers).
fn info(
    agent: HsaAgent,
    d: &Desc,
    linear: bool,
    row_pitch: u64,
    slice_pitch: u64,
) -> Result<(Family, img::Prop, img::Layout), HsaStatus> {
    let kind = agent_kind(agent)?;
    let Some(fam) = family(kind)? else {
        return Err(img::status::FORMAT_UNSUPPORTED);
    };
    let (prop, layout) = img::data_info(d, linear, row_pitch, slice_pitch)?;
    Ok((fam, prop, layout))
}

/// # Safety
/// `desc` and `out` null or valid, as for `hsa_ext_image_data_get_info`.
unsafe fn data_get_info(
    agent: HsaAgent,
    desc: *const ImageDescriptor,
    permission: u32,
    layout: u32,
    row_pitch: usize,
    slice_pitch: usize,
    out: *mut ImageDataInfo,
) -> R {
    nonzero(agent)?;
    if desc.is_null() || out.is_null() || !PERMISSION_RANGE.contains(&permission) {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: the caller's argument, valid if non-null by this export's HSA contract.
    let d = desc_of(&unsafe { read(desc) }?);
    let (_, _, l) = info(
        agent,
        &d,
        layout == LAYOUT_LINEAR,
        row_pitch as u64,
        slice_pitch as u64,
    )?;
    let value = ImageDataInfo {
        size: l.size as usize,
        alignment: l.alignment as usize,
    };
    // SAFETY: the caller's out-pointer, valid if non-null by this export's HSA contract.
    unsafe { write(out, value) }
}

pub unsafe extern "C" fn hsa_ext_image_data_get_info(
    agent: HsaAgent,
    desc: *const ImageDescriptor,
    permission: u32,
    out: *mut ImageDataInfo,
) -> u32 {
    status("hsa_ext_image_data_get_info", || {
        // SAFETY: the caller's pointers, passed on under this export's HSA contract.
        unsafe { data_get_info(agent, desc, permission, LAYOUT_OPAQUE, 0, 0, out) }
    })
}

pub unsafe extern "C" fn hsa_ext_image_data_get_info_with_layout(
    agent: HsaAgent,
    desc: *const ImageDescriptor,
    permission: u32,
    layout: u32,
    row_pitch: usize,
    slice_pitch: usize,
    out: *mut ImageDataInfo,
) -> u32 {
    status("hsa_ext_image_data_get_info_with_layout", || {
        nonzero(agent)?;
        if layout != LAYOUT_LINEAR {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        // SAFETY: the caller's pointers, passed on under this export's HSA contract.
        unsafe { data_get_info(agent, desc, permission, layout, row_pitch, slice_pitch, out) }
    })
}

/// # Safety
/// `desc` and `out` null or valid, as for `hsa_ext_image_create`.
unsafe fn create(
    agent: HsaAgent,
    desc: *const ImageDescriptor,
    data: *const c_void,
    linear: bool,
    row_pitch: usize,
    slice_pitch: usize,
    out: *mut u64,
) -> R {
    nonzero(agent)?;
    if desc.is_null() || data.is_null() || out.is_null() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: the caller's argument, valid if non-null by this export's HSA contract.
    let d = desc_of(&unsafe { read(desc) }?);
    let (fam, prop, l) = info(agent, &d, linear, row_pitch as u64, slice_pitch as u64)?;
    if (data as u64) % l.alignment != 0 || (data as u64).checked_add(l.size).is_none() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    let handle = img::create_image(fam, agent.handle, d, &prop, l, data as u64);
    // SAFETY: the caller's out-pointer, valid if non-null by this export's HSA contract.
    unsafe { write(out, handle) }
}

pub unsafe extern "C" fn hsa_ext_image_create(
    agent: HsaAgent,
    desc: *const ImageDescriptor,
    data: *const c_void,
    _permission: u32,
    image: *mut u64,
) -> u32 {
    status("hsa_ext_image_create", || {
        // SAFETY: the caller's pointers, passed on under this export's HSA contract.
        unsafe { create(agent, desc, data, false, 0, 0, image) }
    })
}

pub unsafe extern "C" fn hsa_ext_image_create_with_layout(
    agent: HsaAgent,
    desc: *const ImageDescriptor,
    data: *const c_void,
    _permission: u32,
    layout: u32,
    row_pitch: usize,
    slice_pitch: usize,
    image: *mut u64,
) -> u32 {
    status("hsa_ext_image_create_with_layout", || {
        nonzero(agent)?;
        if layout != LAYOUT_LINEAR {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        // SAFETY: the caller's pointers, passed on under this export's HSA contract.
        unsafe { create(agent, desc, data, true, row_pitch, slice_pitch, image) }
    })
}

pub unsafe extern "C" fn hsa_amd_image_create(
    agent: HsaAgent,
    desc: *const ImageDescriptor,
    layout: *const AmdImageDescriptorHead,
    data: *const c_void,
    _permission: u32,
    image: *mut u64,
) -> u32 {
    status("hsa_amd_image_create", || {
        nonzero(agent)?;
        if desc.is_null() || data.is_null() || image.is_null() || layout.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        if (data as u64) % 256 != 0 {
            return Err(HsaStatus::ERROR_INVALID_ALLOCATION);
        }
        // SAFETY: the caller's argument, valid if non-null by this export's HSA contract.
        let head = unsafe { read(layout) }?;
        let kind = agent_kind(agent)?;
        let chip = match kind {
            AgentKind::Gpu(g) => crate::runtime::get()?.topo.gpus[g].facts.chip_id.value as u32,
            AgentKind::Cpu => 0,
        };
        if head.version != 1 || head.device_id != (0x1002 << 16 | chip) {
            return Err(img::status::FORMAT_UNSUPPORTED);
        }
        // The layout comes from another driver's metadata (OpenGL or VA-API
        // interop): a tiled surface SoftGPU has no model of.
        tracing::warn!(
            "softgpu: hsa_amd_image_create: interop images with a vendor-specific layout are not \
             modelled by SoftGPU; returning HSA_STATUS_ERROR"
        );
        Err(HsaStatus::ERROR)
    })
}

pub unsafe extern "C" fn hsa_ext_image_destroy(agent: HsaAgent, image: u64) -> u32 {
    status("hsa_ext_image_destroy", || {
        nonzero(agent)?;
        agent_kind(agent)?;
        if !img::destroy_image(image) {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        Ok(())
    })
}

/// A live image, or `INVALID_ARGUMENT`.
fn live(handle: u64) -> Result<img::ImageView, HsaStatus> {
    img::image(handle).ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)
}

pub unsafe extern "C" fn hsa_ext_image_copy(
    agent: HsaAgent,
    src: u64,
    src_offset: *const Dim3,
    dst: u64,
    dst_offset: *const Dim3,
    range: *const Dim3,
) -> u32 {
    status("hsa_ext_image_copy", || {
        nonzero(agent)?;
        if src == 0 || dst == 0 || src_offset.is_null() || dst_offset.is_null() || range.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        agent_kind(agent)?;
        // SAFETY: the caller's argument, valid if non-null by this export's HSA contract.
        let (so, d_o, r) = unsafe { (read(src_offset)?, read(dst_offset)?, read(range)?) };
        let (s, d) = (live(src)?, live(dst)?);
        // SAFETY: both images' data were handed to hsa_ext_image_create, whose
        // contract keeps them valid for their layout size while the images live.
        unsafe { img::copy(&s, dim(so), &d, dim(d_o), dim(r)) }
    })
}

pub unsafe extern "C" fn hsa_ext_image_import(
    agent: HsaAgent,
    src: *const c_void,
    src_row_pitch: usize,
    src_slice_pitch: usize,
    dst: u64,
    region: *const ImageRegion,
) -> u32 {
    status("hsa_ext_image_import", || {
        nonzero(agent)?;
        if src.is_null() || dst == 0 || region.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        agent_kind(agent)?;
        // SAFETY: the caller's argument, valid if non-null by this export's HSA contract.
        let r = region_of(&unsafe { read(region) }?);
        let i = live(dst)?;
        // SAFETY: the import contract: `src` holds the region at these pitches;
        // the image's data is valid for its layout (hsa_ext_image_create).
        unsafe {
            img::transfer(
                &i,
                src as u64,
                src_row_pitch as u64,
                src_slice_pitch as u64,
                &r,
                true,
            )
        }
    })
}

pub unsafe extern "C" fn hsa_ext_image_export(
    agent: HsaAgent,
    src: u64,
    dst: *mut c_void,
    dst_row_pitch: usize,
    dst_slice_pitch: usize,
    region: *const ImageRegion,
) -> u32 {
    status("hsa_ext_image_export", || {
        nonzero(agent)?;
        if dst.is_null() || src == 0 || region.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        agent_kind(agent)?;
        // SAFETY: the caller's argument, valid if non-null by this export's HSA contract.
        let r = region_of(&unsafe { read(region) }?);
        let i = live(src)?;
        // SAFETY: the export contract: `dst` has room for the region at these
        // pitches; the image's data is valid for its layout.
        unsafe {
            img::transfer(
                &i,
                dst as u64,
                dst_row_pitch as u64,
                dst_slice_pitch as u64,
                &r,
                false,
            )
        }
    })
}

pub unsafe extern "C" fn hsa_ext_image_clear(
    agent: HsaAgent,
    image: u64,
    data: *const c_void,
    region: *const ImageRegion,
) -> u32 {
    status("hsa_ext_image_clear", || {
        nonzero(agent)?;
        if image == 0 || region.is_null() || data.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        agent_kind(agent)?;
        // SAFETY: the caller's argument, valid if non-null by this export's HSA contract.
        let r = region_of(&unsafe { read(region) }?);
        let i = live(image)?;
        // SAFETY: `data` is the clear colour, four 32-bit components: ROCr's
        // clear reads four words whatever the format, so that is the contract
        // programs already meet.
        let words = unsafe { read(data as *const [u32; 4]) }?;
        // SAFETY: the image's data is valid for its layout (hsa_ext_image_create).
        unsafe { img::clear(&i, words, &r) }
    })
}

/// # Safety
/// `out` null or valid, as for `hsa_ext_sampler_create`.
unsafe fn sampler_create(agent: HsaAgent, s: Option<SamplerDesc>, out: *mut u64) -> R {
    nonzero(agent)?;
    let Some(s) = s else {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    };
    if out.is_null() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    match agent_kind(agent)? {
        AgentKind::Cpu => return Err(HsaStatus::ERROR_INVALID_AGENT),
        AgentKind::Gpu(_) => {}
    }
    let words = img::encode_sampler_srd(&s)?;
    // SAFETY: the caller's out-pointer, valid if non-null by this export's HSA contract.
    unsafe { write(out, img::create_sampler(words)) }
}

pub unsafe extern "C" fn hsa_ext_sampler_create(
    agent: HsaAgent,
    desc: *const SamplerDescriptor,
    sampler: *mut u64,
) -> u32 {
    status("hsa_ext_sampler_create", || {
        nonzero(agent)?;
        let s = if desc.is_null() {
            None
        } else {
            // SAFETY: the caller's argument, valid if non-null by this export's HSA contract.
            let d = unsafe { read(desc) }?;
            Some(SamplerDesc {
                coordinate_mode: d.coordinate_mode,
                filter_mode: d.filter_mode,
                address_modes: [d.address_mode; 3],
            })
        };
        // SAFETY: the caller's out-pointer, passed on under this export's HSA contract.
        unsafe { sampler_create(agent, s, sampler) }
    })
}

/// `hsa_ext_sampler_create_v2` (ROCr 6.x): reached only through the image
/// extension table, whose 6.x form has it as its fourteenth entry.
pub unsafe extern "C" fn hsa_ext_sampler_create_v2(
    agent: HsaAgent,
    desc: *const SamplerDescriptorV2,
    sampler: *mut u64,
) -> u32 {
    status("hsa_ext_sampler_create_v2", || {
        nonzero(agent)?;
        let s = if desc.is_null() {
            None
        } else {
            // SAFETY: the caller's argument, valid if non-null by this export's HSA contract.
            let d = unsafe { read(desc) }?;
            Some(SamplerDesc {
                coordinate_mode: d.coordinate_mode,
                filter_mode: d.filter_mode,
                address_modes: d.address_modes,
            })
        };
        // SAFETY: the caller's out-pointer, passed on under this export's HSA contract.
        unsafe { sampler_create(agent, s, sampler) }
    })
}

pub unsafe extern "C" fn hsa_ext_sampler_destroy(agent: HsaAgent, sampler: u64) -> u32 {
    status("hsa_ext_sampler_destroy", || {
        nonzero(agent)?;
        agent_kind(agent)?;
        if !img::destroy_sampler(sampler) {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        Ok(())
    })
}

pub unsafe extern "C" fn hsa_amd_image_get_info_max_dim(
    agent: HsaAgent,
    attribute: u32,
    value: *mut c_void,
) -> u32 {
    status("hsa_amd_image_get_info_max_dim", || {
        nonzero(agent)?;
        if value.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        let words = img::max_dim_words(attribute).ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
        let words = match agent_kind(agent)? {
            // The CPU agent has no images: zeros, as ROCr writes them.
            AgentKind::Cpu => vec![0; words.len()],
            AgentKind::Gpu(_) => words,
        };
        for (i, w) in words.iter().enumerate() {
            // SAFETY: non-null; ROCr's contract for these attributes is an
            // array of as many uint32_t as written here (1, 2 or 3).
            unsafe { (value as *mut u32).add(i).write_unaligned(*w) };
        }
        Ok(())
    })
}

/// The image extension's function table (`hsa_ext_images_1_pfn_t`): the
/// thirteen functions of the 1.x table, then `hsa_ext_sampler_create_v2`,
/// which ROCr 6.x headers append.
pub fn extension_table() -> [usize; 14] {
    [
        hsa_ext_image_get_capability as *const () as usize,
        hsa_ext_image_data_get_info as *const () as usize,
        hsa_ext_image_create as *const () as usize,
        hsa_ext_image_destroy as *const () as usize,
        hsa_ext_image_copy as *const () as usize,
        hsa_ext_image_import as *const () as usize,
        hsa_ext_image_export as *const () as usize,
        hsa_ext_image_clear as *const () as usize,
        hsa_ext_sampler_create as *const () as usize,
        hsa_ext_sampler_destroy as *const () as usize,
        hsa_ext_image_get_capability_with_layout as *const () as usize,
        hsa_ext_image_data_get_info_with_layout as *const () as usize,
        hsa_ext_image_create_with_layout as *const () as usize,
        hsa_ext_sampler_create_v2 as *const () as usize,
    ]
}
