//! A bounded MessagePack decoder for the NT_AMDGPU_METADATA note.
//!
//! It decodes into a borrowed value tree. Bounds: nesting depth, the total
//! number of values, and every length checked against the bytes that remain
//! (each array element or map entry takes at least one byte, so a count larger
//! than the rest of the input is refused before anything is allocated).

use super::error::CodeObjectError;
use super::{MAX_METADATA_DEPTH, MAX_METADATA_ITEMS};

/// One MessagePack value; strings and binaries borrow from the input.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    Nil,
    Bool(bool),
    /// Any non-negative integer, whatever its encoding.
    Uint(u64),
    /// A negative integer.
    Int(i64),
    Float(f64),
    Str(&'a [u8]),
    Bin(&'a [u8]),
    Array(Vec<Value<'a>>),
    Map(Vec<(Value<'a>, Value<'a>)>),
    Ext(i8, &'a [u8]),
}

impl<'a> Value<'a> {
    /// The value under string key `key` of a map (the first, if repeated).
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        match self {
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _)| matches!(k, Value::Str(s) if *s == key.as_bytes()))
                .map(|(_, v)| v),
            _ => None,
        }
    }
}

/// Decodes exactly one value spanning all of `data`.
pub fn decode(data: &[u8]) -> Result<Value<'_>, CodeObjectError> {
    decode_with_limit(data, MAX_METADATA_ITEMS)
}

fn decode_with_limit(data: &[u8], max_items: usize) -> Result<Value<'_>, CodeObjectError> {
    let mut d = Decoder {
        data,
        pos: 0,
        items: 0,
        max_items,
    };
    let v = d.value(0)?;
    if d.pos != data.len() {
        return Err(CodeObjectError::MetadataTrailingBytes {
            offset: d.pos as u64,
        });
    }
    Ok(v)
}

struct Decoder<'a> {
    data: &'a [u8],
    pos: usize,
    items: usize,
    max_items: usize,
}

impl<'a> Decoder<'a> {
    fn truncated(&self) -> CodeObjectError {
        CodeObjectError::MetadataTruncated {
            offset: self.pos as u64,
        }
    }

    fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8], CodeObjectError> {
        let end = self.pos.checked_add(n).ok_or_else(|| self.truncated())?;
        let s = self
            .data
            .get(self.pos..end)
            .ok_or_else(|| self.truncated())?;
        self.pos = end;
        Ok(s)
    }

    fn array_of<const N: usize>(&mut self) -> Result<[u8; N], CodeObjectError> {
        let s = self.bytes(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn u8(&mut self) -> Result<u8, CodeObjectError> {
        Ok(self.array_of::<1>()?[0])
    }
    fn u16(&mut self) -> Result<u16, CodeObjectError> {
        Ok(u16::from_be_bytes(self.array_of()?))
    }
    fn u32(&mut self) -> Result<u32, CodeObjectError> {
        Ok(u32::from_be_bytes(self.array_of()?))
    }
    fn u64(&mut self) -> Result<u64, CodeObjectError> {
        Ok(u64::from_be_bytes(self.array_of()?))
    }

    fn len32(&mut self) -> Result<usize, CodeObjectError> {
        usize::try_from(self.u32()?).map_err(|_| self.truncated())
    }

    fn signed(v: i64) -> Value<'a> {
        if v >= 0 {
            Value::Uint(v as u64)
        } else {
            Value::Int(v)
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value<'a>, CodeObjectError> {
        let at = self.pos as u64;
        if depth > MAX_METADATA_DEPTH {
            return Err(CodeObjectError::MetadataTooDeep { offset: at });
        }
        self.items += 1;
        if self.items > self.max_items {
            return Err(CodeObjectError::MetadataTooLarge { offset: at });
        }
        let b = self.u8()?;
        Ok(match b {
            0x00..=0x7f => Value::Uint(u64::from(b)),
            0x80..=0x8f => self.map(usize::from(b & 0x0f), depth)?,
            0x90..=0x9f => self.array(usize::from(b & 0x0f), depth)?,
            0xa0..=0xbf => Value::Str(self.bytes(usize::from(b & 0x1f))?),
            0xc0 => Value::Nil,
            0xc1 => return Err(CodeObjectError::MetadataReservedByte { offset: at }),
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4 => {
                let n = usize::from(self.u8()?);
                Value::Bin(self.bytes(n)?)
            }
            0xc5 => {
                let n = usize::from(self.u16()?);
                Value::Bin(self.bytes(n)?)
            }
            0xc6 => {
                let n = self.len32()?;
                Value::Bin(self.bytes(n)?)
            }
            0xc7..=0xc9 => {
                let n = match b {
                    0xc7 => usize::from(self.u8()?),
                    0xc8 => usize::from(self.u16()?),
                    _ => self.len32()?,
                };
                let t = self.u8()? as i8;
                Value::Ext(t, self.bytes(n)?)
            }
            0xca => Value::Float(f64::from(f32::from_bits(self.u32()?))),
            0xcb => Value::Float(f64::from_bits(self.u64()?)),
            0xcc => Value::Uint(u64::from(self.u8()?)),
            0xcd => Value::Uint(u64::from(self.u16()?)),
            0xce => Value::Uint(u64::from(self.u32()?)),
            0xcf => Value::Uint(self.u64()?),
            0xd0 => Self::signed(i64::from(self.u8()? as i8)),
            0xd1 => Self::signed(i64::from(self.u16()? as i16)),
            0xd2 => Self::signed(i64::from(self.u32()? as i32)),
            0xd3 => Self::signed(self.u64()? as i64),
            0xd4..=0xd8 => {
                let n = 1usize << (b - 0xd4);
                let t = self.u8()? as i8;
                Value::Ext(t, self.bytes(n)?)
            }
            0xd9 => {
                let n = usize::from(self.u8()?);
                Value::Str(self.bytes(n)?)
            }
            0xda => {
                let n = usize::from(self.u16()?);
                Value::Str(self.bytes(n)?)
            }
            0xdb => {
                let n = self.len32()?;
                Value::Str(self.bytes(n)?)
            }
            0xdc => {
                let n = usize::from(self.u16()?);
                self.array(n, depth)?
            }
            0xdd => {
                let n = self.len32()?;
                self.array(n, depth)?
            }
            0xde => {
                let n = usize::from(self.u16()?);
                self.map(n, depth)?
            }
            0xdf => {
                let n = self.len32()?;
                self.map(n, depth)?
            }
            0xe0..=0xff => Value::Int(i64::from(b as i8)),
        })
    }

    fn array(&mut self, n: usize, depth: usize) -> Result<Value<'a>, CodeObjectError> {
        if n > self.remaining() {
            return Err(self.truncated());
        }
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(self.value(depth + 1)?);
        }
        Ok(Value::Array(v))
    }

    fn map(&mut self, n: usize, depth: usize) -> Result<Value<'a>, CodeObjectError> {
        if n > self.remaining() / 2 {
            return Err(self.truncated());
        }
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            let k = self.value(depth + 1)?;
            let val = self.value(depth + 1)?;
            v.push((k, val));
        }
        Ok(Value::Map(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scalar_encoding_decodes_to_its_value() {
        let cases: &[(&[u8], Value<'_>)] = &[
            (&[0x05], Value::Uint(5)),
            (&[0xff], Value::Int(-1)),
            (&[0xe0], Value::Int(-32)),
            (&[0xc0], Value::Nil),
            (&[0xc2], Value::Bool(false)),
            (&[0xc3], Value::Bool(true)),
            (&[0xcc, 0xfe], Value::Uint(0xfe)),
            (&[0xcd, 0x04, 0x00], Value::Uint(1024)),
            (&[0xce, 0, 1, 0, 0], Value::Uint(65536)),
            (&[0xcf, 0, 0, 0, 1, 0, 0, 0, 0], Value::Uint(1 << 32)),
            (&[0xd0, 0x80], Value::Int(-128)),
            (&[0xd0, 0x05], Value::Uint(5)),
            (&[0xd1, 0xff, 0xfe], Value::Int(-2)),
            (&[0xd2, 0xff, 0xff, 0xff, 0xfd], Value::Int(-3)),
            (
                &[0xd3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfc],
                Value::Int(-4),
            ),
            (&[0xca, 0x3f, 0x80, 0, 0], Value::Float(1.0)),
            (&[0xcb, 0x40, 0, 0, 0, 0, 0, 0, 0], Value::Float(2.0)),
            (&[0xa2, b'h', b'i'], Value::Str(b"hi")),
            (&[0xd9, 1, b'x'], Value::Str(b"x")),
            (&[0xda, 0, 1, b'y'], Value::Str(b"y")),
            (&[0xdb, 0, 0, 0, 1, b'z'], Value::Str(b"z")),
            (&[0xc4, 2, 1, 2], Value::Bin(&[1, 2])),
            (&[0xc5, 0, 1, 9], Value::Bin(&[9])),
            (&[0xc6, 0, 0, 0, 0], Value::Bin(&[])),
            (&[0xd4, 7, 1], Value::Ext(7, &[1])),
            (&[0xd5, 7, 1, 2], Value::Ext(7, &[1, 2])),
            (&[0xc7, 1, 0xfe, 3], Value::Ext(-2, &[3])),
        ];
        for (bytes, want) in cases {
            assert_eq!(&decode(bytes).unwrap(), want, "{bytes:02x?}");
        }
    }

    #[test]
    fn containers_decode_and_maps_look_up_by_string_key() {
        // {"a": [1, 2], "b": {}} with array16 and map16 forms mixed in.
        let bytes = [0x82, 0xa1, b'a', 0xdc, 0, 2, 1, 2, 0xa1, b'b', 0xde, 0, 0];
        let v = decode(&bytes).unwrap();
        assert_eq!(
            v.get("a"),
            Some(&Value::Array(vec![Value::Uint(1), Value::Uint(2)]))
        );
        assert_eq!(v.get("b"), Some(&Value::Map(vec![])));
        assert_eq!(v.get("c"), None);
    }

    #[test]
    fn counts_larger_than_the_rest_of_the_input_are_refused_before_allocating() {
        assert_eq!(
            decode(&[0xdd, 0xff, 0xff, 0xff, 0xff]),
            Err(CodeObjectError::MetadataTruncated { offset: 5 })
        );
        assert_eq!(
            decode(&[0xdf, 0x7f, 0xff, 0xff, 0xff, 0]),
            Err(CodeObjectError::MetadataTruncated { offset: 5 })
        );
        assert_eq!(
            decode(&[0xdb, 0xff, 0xff, 0xff, 0xff]),
            Err(CodeObjectError::MetadataTruncated { offset: 5 })
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let bytes = vec![0x91u8; 100_000];
        assert!(matches!(
            decode(&bytes),
            Err(CodeObjectError::MetadataTooDeep { .. })
        ));
    }

    #[test]
    fn the_reserved_byte_trailing_bytes_and_empty_input_are_typed_errors() {
        assert_eq!(
            decode(&[0x91, 0xc1]),
            Err(CodeObjectError::MetadataReservedByte { offset: 1 })
        );
        assert_eq!(
            decode(&[0x01, 0x02]),
            Err(CodeObjectError::MetadataTrailingBytes { offset: 1 })
        );
        assert_eq!(
            decode(&[]),
            Err(CodeObjectError::MetadataTruncated { offset: 0 })
        );
    }

    #[test]
    fn too_many_values_is_an_error() {
        // An array of 100 nils is 101 values.
        let mut bytes = vec![0xdc, 0, 100];
        bytes.resize(bytes.len() + 100, 0xc0);
        assert!(decode_with_limit(&bytes, 101).is_ok());
        assert_eq!(
            decode_with_limit(&bytes, 100),
            Err(CodeObjectError::MetadataTooLarge { offset: 102 })
        );
    }
}
