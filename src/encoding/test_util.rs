//! Helpers shared by the encoding tests.

/// Bytes from a hex string; whitespace is ignored, and so is `|` (`"0a | ff"` → `[0x0a, 0xff]`).
pub fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace() && *c != '|').collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}
