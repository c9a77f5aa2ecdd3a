//! Byte sizes on the command line: `512`, `64k`, `10m`, `2g`, `1t` (powers of 1024, with
//! an optional `b`/`kb`/`mb`/`gb`/`tb` spelling, case-insensitive).

/// Parse a size such as `10g`; `label` names the flag in errors.
pub fn parse_size(text: &str, label: &str) -> Result<usize, String> {
    let lower = text.trim().to_ascii_lowercase();
    let digits = lower.chars().take_while(|c| c.is_ascii_digit()).count();
    let (num, suffix) = lower.split_at(digits);
    if num.is_empty() {
        return Err(format!("invalid {label} '{text}': expected a number with an optional unit (b, k, m, g, t)"));
    }
    let shift = match suffix {
        "" | "b" => 0,
        "k" | "kb" => 10,
        "m" | "mb" => 20,
        "g" | "gb" => 30,
        "t" | "tb" => 40,
        _ => return Err(format!("invalid {label} '{text}': unknown unit '{suffix}' (b, k, m, g, t)")),
    };
    let n: u64 = num.parse().map_err(|_| format!("invalid {label} '{text}'"))?;
    n.checked_mul(1u64 << shift).and_then(|b| usize::try_from(b).ok()).ok_or_else(|| format!("{label} '{text}' is too large"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512", "x"), Ok(512));
        assert_eq!(parse_size("64k", "x"), Ok(64 << 10));
        assert_eq!(parse_size("10MB", "x"), Ok(10 << 20));
        assert_eq!(parse_size("2g", "x"), Ok(2 << 30));
        assert!(parse_size("", "x").is_err());
        assert!(parse_size("-1g", "x").is_err());
        assert!(parse_size("5q", "x").unwrap_err().contains("unknown unit"));
        assert!(parse_size("99999999999999999999t", "x").is_err());
    }
}
