//! The code object v3+ metadata (NT_AMDGPU_METADATA, MessagePack): the keys
//! the runtime answers `hsa_executable_symbol_get_info` and dispatch checks
//! from. Unknown keys are ignored; a known key of the wrong type is an error.

use super::MAX_METADATA_BYTES;
use super::error::CodeObjectError;
use super::msgpack::{self, Value};

/// The top level of the metadata map.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Metadata {
    /// `amdhsa.version`: [major, minor] (1.1 is v4, 1.2 is v5).
    pub version: Option<[u64; 2]>,
    /// `amdhsa.target`, e.g. `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`.
    pub target: Option<String>,
    /// `amdhsa.kernels`, in file order.
    pub kernels: Vec<KernelMetadata>,
}

/// One entry of `amdhsa.kernels`. Keys the AMDGPUUsage table calls required
/// are plain fields (missing is an error); the others are `Option`s.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct KernelMetadata {
    /// `.name`: the source-level (mangled) kernel name.
    pub name: Option<String>,
    /// `.symbol`: the kernel descriptor symbol, `<name>.kd`.
    pub symbol: String,
    pub kernarg_segment_size: u64,
    pub kernarg_segment_align: u64,
    pub group_segment_fixed_size: u64,
    pub private_segment_fixed_size: u64,
    pub sgpr_count: Option<u64>,
    pub vgpr_count: Option<u64>,
    pub agpr_count: Option<u64>,
    pub wavefront_size: Option<u64>,
    pub max_flat_workgroup_size: Option<u64>,
    pub reqd_workgroup_size: Option<[u64; 3]>,
    pub uses_dynamic_stack: Option<bool>,
    /// `.args`, in order (empty when absent).
    pub args: Vec<KernelArg>,
}

/// One entry of a kernel's `.args`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct KernelArg {
    pub name: Option<String>,
    /// `.type_name`, e.g. `float*` (OpenCL code objects carry it; HIP's
    /// usually do not).
    pub type_name: Option<String>,
    pub offset: u64,
    pub size: u64,
    /// `.value_kind`, e.g. `global_buffer`, `by_value`, `hidden_global_offset_x`.
    pub value_kind: String,
    /// `.address_space`, e.g. `global`.
    pub address_space: Option<String>,
}

impl Metadata {
    /// Decodes the descriptor bytes of an NT_AMDGPU_METADATA note.
    pub fn parse(bytes: &[u8]) -> Result<Metadata, CodeObjectError> {
        if bytes.len() > MAX_METADATA_BYTES {
            return Err(CodeObjectError::MetadataTooLarge { offset: 0 });
        }
        let root = msgpack::decode(bytes)?;
        if !matches!(root, Value::Map(_)) {
            return Err(CodeObjectError::MetadataWrongType {
                kernel: None,
                key: "(top level)",
            });
        }
        let at = Keys {
            map: &root,
            kernel: None,
        };
        let version = match at.array("amdhsa.version")? {
            None => None,
            Some([major, minor, ..]) => Some([
                at.uint_of(major, "amdhsa.version")?,
                at.uint_of(minor, "amdhsa.version")?,
            ]),
            Some(_) => return Err(at.wrong("amdhsa.version")),
        };
        let target = at.string("amdhsa.target")?;
        let mut kernels = Vec::new();
        for (i, k) in at
            .array("amdhsa.kernels")?
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            kernels.push(kernel(k, i)?);
        }
        Ok(Metadata {
            version,
            target,
            kernels,
        })
    }

    /// The kernel whose `.symbol` is `symbol` (e.g. `_Z4vaddPKfS0_Pfi.kd`).
    pub fn kernel(&self, symbol: &str) -> Option<&KernelMetadata> {
        self.kernels.iter().find(|k| k.symbol == symbol)
    }
}

fn kernel(v: &Value<'_>, index: usize) -> Result<KernelMetadata, CodeObjectError> {
    let at = Keys {
        map: v,
        kernel: Some(index),
    };
    if !matches!(v, Value::Map(_)) {
        return Err(at.wrong("amdhsa.kernels"));
    }
    let reqd_workgroup_size = match at.array(".reqd_workgroup_size")? {
        None => None,
        Some([x, y, z]) => Some([
            at.uint_of(x, ".reqd_workgroup_size")?,
            at.uint_of(y, ".reqd_workgroup_size")?,
            at.uint_of(z, ".reqd_workgroup_size")?,
        ]),
        Some(_) => return Err(at.wrong(".reqd_workgroup_size")),
    };
    let mut args = Vec::new();
    for a in at.array(".args")?.unwrap_or(&[]) {
        let arg = Keys {
            map: a,
            kernel: Some(index),
        };
        if !matches!(a, Value::Map(_)) {
            return Err(arg.wrong(".args"));
        }
        args.push(KernelArg {
            name: arg.string(".name")?,
            type_name: arg.string(".type_name")?,
            offset: arg.required(".offset", Keys::uint)?,
            size: arg.required(".size", Keys::uint)?,
            value_kind: arg.required(".value_kind", Keys::string)?,
            address_space: arg.string(".address_space")?,
        });
    }
    Ok(KernelMetadata {
        name: at.string(".name")?,
        symbol: at.required(".symbol", Keys::string)?,
        kernarg_segment_size: at.required(".kernarg_segment_size", Keys::uint)?,
        kernarg_segment_align: at.required(".kernarg_segment_align", Keys::uint)?,
        group_segment_fixed_size: at.required(".group_segment_fixed_size", Keys::uint)?,
        private_segment_fixed_size: at.required(".private_segment_fixed_size", Keys::uint)?,
        sgpr_count: at.uint(".sgpr_count")?,
        vgpr_count: at.uint(".vgpr_count")?,
        agpr_count: at.uint(".agpr_count")?,
        wavefront_size: at.uint(".wavefront_size")?,
        max_flat_workgroup_size: at.uint(".max_flat_workgroup_size")?,
        reqd_workgroup_size,
        uses_dynamic_stack: at.boolean(".uses_dynamic_stack")?,
        args,
    })
}

/// Typed lookups in one map, with errors that say which kernel and key.
struct Keys<'v, 'a> {
    map: &'v Value<'a>,
    kernel: Option<usize>,
}

impl<'v, 'a> Keys<'v, 'a> {
    fn wrong(&self, key: &'static str) -> CodeObjectError {
        CodeObjectError::MetadataWrongType {
            kernel: self.kernel,
            key,
        }
    }

    fn required<T>(
        &self,
        key: &'static str,
        get: fn(&Self, &'static str) -> Result<Option<T>, CodeObjectError>,
    ) -> Result<T, CodeObjectError> {
        get(self, key)?.ok_or(CodeObjectError::MetadataMissingKey {
            kernel: self.kernel,
            key,
        })
    }

    fn uint_of(&self, v: &Value<'_>, key: &'static str) -> Result<u64, CodeObjectError> {
        match v {
            Value::Uint(n) => Ok(*n),
            _ => Err(self.wrong(key)),
        }
    }

    fn uint(&self, key: &'static str) -> Result<Option<u64>, CodeObjectError> {
        self.map.get(key).map(|v| self.uint_of(v, key)).transpose()
    }

    fn boolean(&self, key: &'static str) -> Result<Option<bool>, CodeObjectError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.wrong(key)),
        }
    }

    fn string(&self, key: &'static str) -> Result<Option<String>, CodeObjectError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::Str(s)) => std::str::from_utf8(s)
                .map(|s| Some(s.to_owned()))
                .map_err(|_| self.wrong(key)),
            Some(_) => Err(self.wrong(key)),
        }
    }

    fn array(&self, key: &'static str) -> Result<Option<&'v [Value<'a>]>, CodeObjectError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::Array(items)) => Ok(Some(items)),
            Some(_) => Err(self.wrong(key)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny MessagePack writer for the tests (fixstr/fixmap/fixarray/uint forms).
    enum W {
        U(u64),
        S(&'static str),
        B(bool),
        A(Vec<W>),
        M(Vec<(&'static str, W)>),
    }

    fn enc(w: &W, out: &mut Vec<u8>) {
        match w {
            W::U(n) if *n < 128 => out.push(*n as u8),
            W::U(n) => {
                out.push(0xcf);
                out.extend_from_slice(&n.to_be_bytes());
            }
            W::S(s) => {
                out.push(0xd9);
                out.push(s.len() as u8);
                out.extend_from_slice(s.as_bytes());
            }
            W::B(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
            W::A(items) => {
                out.push(0x90 | items.len() as u8);
                items.iter().for_each(|i| enc(i, out));
            }
            W::M(entries) => {
                out.push(0xde);
                out.extend_from_slice(&(entries.len() as u16).to_be_bytes());
                for (k, v) in entries {
                    enc(&W::S(k), out);
                    enc(v, out);
                }
            }
        }
    }

    fn kernel_map(extra: Vec<(&'static str, W)>) -> W {
        let mut e = vec![
            (".symbol", W::S("k.kd")),
            (".kernarg_segment_size", W::U(16)),
            (".kernarg_segment_align", W::U(8)),
            (".group_segment_fixed_size", W::U(1024)),
            (".private_segment_fixed_size", W::U(1 << 40)),
        ];
        e.extend(extra);
        W::M(e)
    }

    fn doc(kernels: Vec<W>) -> Vec<u8> {
        let mut out = Vec::new();
        enc(
            &W::M(vec![
                ("amdhsa.version", W::A(vec![W::U(1), W::U(2)])),
                ("amdhsa.target", W::S("amdgcn-amd-amdhsa--gfx90a")),
                ("amdhsa.kernels", W::A(kernels)),
                ("unknown.key", W::M(vec![])),
            ]),
            &mut out,
        );
        out
    }

    #[test]
    fn required_and_optional_kernel_keys_are_extracted() {
        let bytes = doc(vec![kernel_map(vec![
            (".name", W::S("k")),
            (
                ".reqd_workgroup_size",
                W::A(vec![W::U(64), W::U(2), W::U(1)]),
            ),
            (".uses_dynamic_stack", W::B(true)),
            (
                ".args",
                W::A(vec![W::M(vec![
                    (".offset", W::U(0)),
                    (".size", W::U(8)),
                    (".value_kind", W::S("global_buffer")),
                    (".address_space", W::S("global")),
                ])]),
            ),
        ])]);
        let m = Metadata::parse(&bytes).unwrap();
        assert_eq!(m.version, Some([1, 2]));
        assert_eq!(m.target.as_deref(), Some("amdgcn-amd-amdhsa--gfx90a"));
        let k = m.kernel("k.kd").unwrap();
        assert_eq!(k.name.as_deref(), Some("k"));
        assert_eq!(k.kernarg_segment_size, 16);
        assert_eq!(k.private_segment_fixed_size, 1 << 40);
        assert_eq!(k.reqd_workgroup_size, Some([64, 2, 1]));
        assert_eq!(k.uses_dynamic_stack, Some(true));
        assert_eq!(k.sgpr_count, None);
        assert_eq!(k.args.len(), 1);
        assert_eq!(k.args[0].value_kind, "global_buffer");
    }

    #[test]
    fn a_missing_required_key_names_the_kernel_and_the_key() {
        let bytes = doc(vec![kernel_map(vec![]), W::M(vec![(".symbol", W::S("x"))])]);
        assert_eq!(
            Metadata::parse(&bytes),
            Err(CodeObjectError::MetadataMissingKey {
                kernel: Some(1),
                key: ".kernarg_segment_size"
            })
        );
    }

    #[test]
    fn a_known_key_of_the_wrong_type_is_an_error() {
        let bytes = doc(vec![kernel_map(vec![(".wavefront_size", W::S("64"))])]);
        assert_eq!(
            Metadata::parse(&bytes),
            Err(CodeObjectError::MetadataWrongType {
                kernel: Some(0),
                key: ".wavefront_size"
            })
        );
        let bytes = doc(vec![kernel_map(vec![(
            ".reqd_workgroup_size",
            W::A(vec![W::U(1)]),
        )])]);
        assert!(Metadata::parse(&bytes).is_err());
        assert_eq!(
            Metadata::parse(&[0x01]),
            Err(CodeObjectError::MetadataWrongType {
                kernel: None,
                key: "(top level)"
            })
        );
    }
}
