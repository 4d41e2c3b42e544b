//! How a snapshot writes the lines heard, the contacts and the beliefs about availability
//! (record format 4; the lines heard apart since format 6):
//! one MessagePack `bin` per map, each entry the same number of bytes, fixed-width
//! little-endian: the pair's two ids (8 bytes each), then the value (a contact's time, 8 bytes;
//! a belief's availability as an `f64` and its time, 16 bytes).
//!
//! A world of 10,000 characters who have talked keeps an entry for every hearer and speaker,
//! and reading them one MessagePack array at a time was a quarter of opening its snapshot
//! (benches/README.md, "Edges by position, pairs packed"); packed, they are read at the speed
//! of a copy, and the bounds walk of the record skips each map in one step. Hand-written rather
//! than a serialisation crate's: two fixed layouts of three and four numbers.
//!
//! Snapshots of formats 1 to 3 hold each map as an array of `[from, to, value]` (the value a
//! map of named fields, or the array of them): those read as they did. JSON keeps that form,
//! and so does every snapshot for what each character believes of another person ([`people`]:
//! few, and of no fixed width).

use super::pairs::{Pair, PairMap};
use crate::model::{Belief, EntityId, Millis};
use serde::de::{Deserialize, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};
use std::marker::PhantomData;

/// The bytes of a pair's two ids.
const PAIR: usize = 16;

/// A value kept per pair that packs into a fixed number of bytes.
pub(super) trait Packed: Sized {
    /// Its bytes.
    const WIDTH: usize;
    /// Appends its bytes to `out`.
    fn put(&self, out: &mut Vec<u8>);
    /// Reads it from exactly [`Self::WIDTH`] bytes.
    fn take(b: &[u8]) -> Self;
}

impl Packed for Millis {
    const WIDTH: usize = 8;
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn take(b: &[u8]) -> Self {
        Millis::from_le_bytes(word(b, 0))
    }
}

impl Packed for Belief {
    const WIDTH: usize = 16;
    fn put(&self, out: &mut Vec<u8>) {
        // Named without `..`: a field added to `Belief` does not compile until it is packed.
        let Belief { availability, at } = self;
        out.extend_from_slice(&availability.to_le_bytes());
        out.extend_from_slice(&at.to_le_bytes());
    }
    fn take(b: &[u8]) -> Self {
        Belief {
            availability: f64::from_le_bytes(word(b, 0)),
            at: Millis::from_le_bytes(word(b, 8)),
        }
    }
}

/// The 8 bytes of `b` from `at` (`b` holds them: the callers slice whole entries).
fn word(b: &[u8], at: usize) -> [u8; 8] {
    let mut w = [0; 8];
    w.copy_from_slice(&b[at..at + 8]);
    w
}

/// Writes `map` as `[from, to, value]` arrays (JSON has no tuple keys).
pub(super) fn by_name<S: Serializer, V: Serialize + Clone>(
    map: &PairMap<V>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(map.iter().map(|((a, b), v)| (a, b, v)))
}

/// The map of `entries`, in any order; a pair twice is an error.
fn unique<V: Clone, E: serde::de::Error>(entries: Vec<(Pair, V)>) -> Result<PairMap<V>, E> {
    PairMap::from_entries(entries).map_err(|pair| E::custom(format!("pair {pair:?} twice")))
}

/// Writes `map` packed for a binary format, as `[from, to, value]` arrays for a
/// human-readable one.
pub(super) fn serialize<S, V>(map: &PairMap<V>, s: S) -> Result<S::Ok, S::Error>
where
    S: Serializer,
    V: Packed + Serialize + Clone,
{
    if s.is_human_readable() {
        return by_name(map, s);
    }
    let mut out = Vec::with_capacity(map.len() * (PAIR + V::WIDTH));
    for ((a, b), v) in map.iter() {
        out.extend_from_slice(&a.0.to_le_bytes());
        out.extend_from_slice(&b.0.to_le_bytes());
        v.put(&mut out);
    }
    s.serialize_bytes(&out)
}

/// Reads a map written by [`serialize`] or by a snapshot of an earlier format (the lines
/// heard, the beliefs about availability); a pair twice is refused.
pub(super) fn deserialize<'de, D, V>(d: D) -> Result<PairMap<V>, D::Error>
where
    D: Deserializer<'de>,
    V: Packed + Deserialize<'de> + Clone,
{
    unique(read::<D, V>(d)?)
}

/// Reads the entries of a map written by [`serialize`] or by a snapshot of an earlier format,
/// in the order written.
pub(super) fn read<'de, D, V>(d: D) -> Result<Vec<(Pair, V)>, D::Error>
where
    D: Deserializer<'de>,
    V: Packed + Deserialize<'de>,
{
    d.deserialize_any(Entries(PhantomData))
}

struct Entries<V>(PhantomData<V>);

impl<'de, V: Packed + Deserialize<'de>> Visitor<'de> for Entries<V> {
    type Value = Vec<(Pair, V)>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "entries of {} bytes, or a sequence of [from, to, value]",
            PAIR + V::WIDTH
        )
    }

    fn visit_bytes<E: serde::de::Error>(self, b: &[u8]) -> Result<Self::Value, E> {
        let width = PAIR + V::WIDTH;
        if !b.len().is_multiple_of(width) {
            return Err(E::custom(format!(
                "{} bytes of pairs is not a whole number of entries of {width}",
                b.len()
            )));
        }
        Ok(b.chunks_exact(width)
            .map(|e| {
                let pair = (
                    EntityId(u64::from_le_bytes(word(e, 0))),
                    EntityId(u64::from_le_bytes(word(e, 8))),
                );
                (pair, V::take(&e[PAIR..]))
            })
            .collect())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some((a, b, v)) = seq.next_element::<(EntityId, EntityId, V)>()? {
            out.push(((a, b), v));
        }
        Ok(out)
    }
}

/// The contacts as a snapshot keeps them. A snapshot written before contacts were kept once
/// per pair holds each both ways, with the same time: read back once.
pub(super) mod contacts {
    use super::super::minds::contact_key;
    use super::super::pairs::PairMap;
    use crate::model::Millis;
    use serde::Deserializer;

    pub(in crate::log) use super::serialize;

    pub(in crate::log) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<PairMap<Millis>, D::Error> {
        let mut contacts: Vec<_> = super::read::<D, Millis>(d)?
            .into_iter()
            .map(|((a, b), at)| (contact_key(a, b), at))
            .collect();
        // A snapshot from before contacts were kept once per pair holds each both ways: the
        // latest of the two is kept.
        contacts.sort_by_key(|(pair, at)| (*pair, std::cmp::Reverse(*at)));
        contacts.dedup_by_key(|(pair, _)| *pair);
        Ok(PairMap::from_sorted(contacts))
    }
}

/// What each character believes of another person, as a snapshot keeps it: `[from, to,
/// value]` arrays in every format; a pair twice is refused.
pub(super) mod people {
    use super::super::pairs::PairMap;
    use crate::model::{EntityId, PersonBelief};
    use serde::{Deserialize, Deserializer};

    pub(in crate::log) use super::by_name as serialize;

    pub(in crate::log) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<PairMap<PersonBelief>, D::Error> {
        let items: Vec<(EntityId, EntityId, PersonBelief)> = Vec::deserialize(d)?;
        super::unique(items.into_iter().map(|(a, b, v)| ((a, b), v)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::codec;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Kept {
        #[serde(with = "contacts")]
        contacts: PairMap<Millis>,
        #[serde(with = "super")]
        beliefs: PairMap<Belief>,
    }

    fn kept() -> Kept {
        let mut contacts = PairMap::default();
        contacts.insert((EntityId(2), EntityId(7)), 6);
        contacts.insert((EntityId(3), EntityId(5)), -10);
        let mut beliefs = PairMap::default();
        let belief = |availability, at| Belief { availability, at };
        beliefs.insert((EntityId(5), EntityId(3)), belief(0.5, 7));
        beliefs.insert((EntityId(2), EntityId(9)), belief(1.0, i64::MIN));
        Kept { contacts, beliefs }
    }

    #[test]
    fn pairs_are_packed_and_read_back() {
        let k = kept();
        let bytes = codec::encode_payload(&k);
        // Two bins: 2 contacts of 24 bytes, 2 beliefs of 32 (0xc4: a bin of up to 255 bytes).
        let at = |name: &[u8]| bytes.windows(name.len()).position(|w| w == name).unwrap();
        let c = at(b"contacts") + 8;
        assert_eq!(&bytes[c..c + 2], &[0xc4, 48]);
        let b = at(b"beliefs") + 7;
        assert_eq!(&bytes[b..b + 2], &[0xc4, 64]);
        assert!(!bytes.windows(12).any(|w| w == b"availability"));
        assert_eq!(codec::decode_payload::<Kept>(&bytes).unwrap(), k);
        // JSON keeps the arrays and the names.
        let v = serde_json::to_value(&k).unwrap();
        assert_eq!(v["beliefs"][0][2]["availability"], 1.0);
        assert_eq!(v["contacts"][1], serde_json::json!([3, 5, -10]));
        assert_eq!(serde_json::from_value::<Kept>(v).unwrap(), k);
    }

    #[test]
    fn pairs_as_earlier_formats_wrote_them_still_read() {
        // Format 3 and before: arrays of [from, to, value], a belief by name or by position,
        // a contact both ways.
        #[derive(serde::Serialize)]
        struct Earlier {
            contacts: Vec<(u64, u64, i64)>,
            beliefs: Vec<(u64, u64, serde_json::Value)>,
        }
        let earlier = Earlier {
            contacts: vec![(7, 2, 4), (2, 7, 6), (3, 5, -10)],
            beliefs: vec![
                (5, 3, serde_json::json!({"availability": 0.5, "at": 7})),
                (2, 9, serde_json::json!([1.0, i64::MIN])),
            ],
        };
        let back: Kept = codec::decode_payload(&codec::encode_payload(&earlier)).unwrap();
        assert_eq!(back, kept());
    }

    #[test]
    fn a_contact_is_kept_once_per_pair_and_read_back_once_from_an_older_snapshot() {
        #[derive(serde::Serialize, serde::Deserialize)]
        struct Contacts {
            #[serde(with = "contacts")]
            contacts: PairMap<Millis>,
        }
        // As a snapshot from before kept them: each contact both ways.
        let older = r#"{"contacts": [[3, 5, 10], [5, 3, 10], [7, 2, 4], [2, 7, 6]]}"#;
        let kept: Contacts = serde_json::from_str(older).unwrap();
        let pairs: Vec<_> = kept.contacts.iter().map(|(k, t)| (*k, *t)).collect();
        assert_eq!(
            pairs,
            [
                ((EntityId(2), EntityId(7)), 6),
                ((EntityId(3), EntityId(5)), 10)
            ]
        );
        let again: Contacts = serde_json::from_str(&serde_json::to_string(&kept).unwrap()).unwrap();
        assert_eq!(again.contacts, kept.contacts);
        use crate::log::minds::contact_key;
        assert_eq!(
            contact_key(EntityId(9), EntityId(4)),
            contact_key(EntityId(4), EntityId(9))
        );
    }

    #[test]
    fn beliefs_about_people_load_in_any_order_and_a_pair_twice_is_refused() {
        use crate::model::PersonBelief;
        #[derive(Debug, serde::Deserialize)]
        struct Seen {
            #[serde(with = "people")]
            people: PairMap<PersonBelief>,
        }
        let shuffled = r#"{"people": [[5, 3, {}], [2, 7, {}]]}"#;
        let seen: Seen = serde_json::from_str(shuffled).unwrap();
        let pairs: Vec<_> = seen.people.keys().copied().collect();
        assert_eq!(
            pairs,
            [(EntityId(2), EntityId(7)), (EntityId(5), EntityId(3))]
        );
        let twice = r#"{"people": [[5, 3, {}], [5, 3, {}]]}"#;
        let e = serde_json::from_str::<Seen>(twice).unwrap_err().to_string();
        assert!(e.contains("twice"), "{e}");
    }

    #[test]
    fn damaged_pairs_are_errors() {
        #[derive(serde::Serialize)]
        struct Raw<'a> {
            #[serde(with = "serde_bytes_like")]
            contacts: &'a [u8],
            #[serde(with = "serde_bytes_like")]
            beliefs: &'a [u8],
        }
        mod serde_bytes_like {
            pub fn serialize<S: serde::Serializer>(b: &&[u8], s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(b)
            }
        }
        let decode = |contacts: &[u8]| {
            codec::decode_payload::<Kept>(&codec::encode_payload(&Raw {
                contacts,
                beliefs: &[],
            }))
            .unwrap_err()
        };
        // A contact short of its last byte.
        let e = decode(&[0; 23]);
        assert!(e.contains("not a whole number of entries of 24"), "{e}");
        // Neither packed nor an array.
        let e = codec::decode_payload::<Kept>(&codec::encode_payload(
            &serde_json::json!({"contacts": 5, "beliefs": []}),
        ))
        .unwrap_err();
        assert!(e.contains("entries of 24 bytes"), "{e}");
        // A belief twice.
        let mut twice = Vec::new();
        for _ in 0..2 {
            for n in [5u64, 3] {
                twice.extend_from_slice(&n.to_le_bytes());
            }
            twice.extend_from_slice(&0.5f64.to_le_bytes());
            twice.extend_from_slice(&7i64.to_le_bytes());
        }
        let e = codec::decode_payload::<Kept>(&codec::encode_payload(&Raw {
            contacts: &[],
            beliefs: &twice,
        }))
        .unwrap_err();
        assert!(e.contains("twice"), "{e}");
    }
}
