//! Content-derived identifiers: claims, entities, evidence and sources are named by hashes of what they are.

use sha2::{Digest, Sha256};

/// Hex SHA-256 of the parts, each length-prefixed so that `["ab","c"]` and `["a","bc"]` differ.
pub fn hash_parts(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hex(&hasher.finalize())
}

/// A 32-hex-character id with a short readable prefix (`c_` claim, `e_` entity, ...).
pub fn short_id(prefix: &str, parts: &[&str]) -> String {
    let full = hash_parts(parts);
    format!("{prefix}{}", &full[..32])
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(DIGITS[(byte >> 4) as usize] as char);
        out.push(DIGITS[(byte & 0x0f) as usize] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_length_prefixed() {
        assert_ne!(hash_parts(&["ab", "c"]), hash_parts(&["a", "bc"]));
        assert_eq!(short_id("c_", &["x"]).len(), 34);
    }

    #[test]
    fn sha256_matches_a_known_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
