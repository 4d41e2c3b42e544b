//! Bytes in serde forms (a card's assets, docs/cards.md): a MessagePack `bin` in the log and in
//! snapshots (rmp-serde is not human-readable), never an array of integers, and a base64 string
//! in JSON (the events' JSON form, `World`'s serde form). Either decodes from both, and from an
//! array of integers.
//!
//! Use as `#[serde(with = "crate::model::card::bytes")]` on a `Vec<u8>`, or [`Bytes`] where a field
//! attribute cannot reach (a map's values).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserializer, Serializer};
use std::fmt;
use std::sync::Arc;

/// Writes `bytes`: `bin` when the format is binary, base64 when it is human-readable.
pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    if serializer.is_human_readable() {
        serializer.serialize_str(&STANDARD.encode(bytes))
    } else {
        serializer.serialize_bytes(bytes)
    }
}

/// Reads bytes written by [`serialize`] (or as base64 text, or as an array of integers).
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
    if deserializer.is_human_readable() {
        deserializer.deserialize_any(BytesVisitor)
    } else {
        deserializer.deserialize_byte_buf(BytesVisitor)
    }
}

struct BytesVisitor;

impl<'de> Visitor<'de> for BytesVisitor {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("bytes, or a base64 string")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
        Ok(v.to_vec())
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
        Ok(v)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Vec<u8>, E> {
        STANDARD
            .decode(v)
            .map_err(|e| E::custom(format!("not base64: {e}")))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
        while let Some(b) = seq.next_element::<u8>()? {
            out.push(b);
        }
        Ok(out)
    }
}

/// Bytes shared cheaply (a world is cloned for every batch it tries), written as [`serialize`]
/// writes them.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Bytes(pub Arc<[u8]>);

impl Bytes {
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Bytes({} bytes)", self.0.len())
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(v: Vec<u8>) -> Bytes {
        Bytes(v.into())
    }
}

impl serde::Serialize for Bytes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize(&self.0, serializer)
    }
}

impl<'de> serde::Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Bytes, D::Error> {
        deserialize(deserializer).map(Bytes::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Holder {
        #[serde(with = "super")]
        bytes: Vec<u8>,
    }

    #[test]
    fn bytes_are_bin_in_messagepack_and_base64_in_json_and_read_back() {
        let h = Holder {
            bytes: vec![0, 1, 2, 255],
        };
        let mut packed = Vec::new();
        serde::Serialize::serialize(
            &h,
            &mut rmp_serde::Serializer::new(&mut packed).with_struct_map(),
        )
        .unwrap();
        // A bin 8 marker (0xc4), length 4, then the bytes themselves: not an array.
        assert!(packed.windows(6).any(|w| w == [0xc4, 4, 0, 1, 2, 255]));
        assert_eq!(rmp_serde::from_slice::<Holder>(&packed).unwrap(), h);
        let json = serde_json::to_string(&h).unwrap();
        assert_eq!(json, r#"{"bytes":"AAEC/w=="}"#);
        assert_eq!(serde_json::from_str::<Holder>(&json).unwrap(), h);
        let array: Holder = serde_json::from_str(r#"{"bytes":[0,1,2,255]}"#).unwrap();
        assert_eq!(array, h);
        assert!(serde_json::from_str::<Holder>(r#"{"bytes":"***"}"#).is_err());
        let b = Bytes::from(vec![7u8; 3]);
        let back: Bytes = serde_json::from_str(&serde_json::to_string(&b).unwrap()).unwrap();
        assert_eq!(back, b);
    }
}
