//! Locations as users write them: a local path, directory or glob, or a URL — with a glob in
//! a URL's path too (`s3://iot/fleet/2024-*/*.tsfile`). DataFusion 55 parses globs in local
//! paths only and leaves URLs to applications ([`ListingTableUrl::try_new`]); a URL is split
//! here at the last `/` before its first glob character (`*`, `?`, `[`) into the base URL
//! that is listed and the pattern its keys must match.

use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::listing::ListingTableUrl;
use glob::Pattern;
use url::Url;

/// Parse a location (see the module doc).
pub fn parse_location(location: &str) -> Result<ListingTableUrl> {
    match split_url_glob(location) {
        Some((base, pattern)) => {
            let url = Url::parse(base).map_err(|e| DataFusionError::Plan(format!("location '{location}': {e}")))?;
            let glob = Pattern::new(pattern).map_err(|e| DataFusionError::Plan(format!("location '{location}': {e}")))?;
            ListingTableUrl::try_new(url, Some(glob))
        }
        None => ListingTableUrl::parse(location),
    }
}

/// `(base URL ending in '/', glob)` when `location` is a URL (`scheme://authority/path`)
/// whose path holds a glob character; `None` for local paths and URLs without one.
fn split_url_glob(location: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = location.split_once("://")?;
    if scheme.is_empty() || !scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) || scheme == "file" {
        return None;
    }
    let path_start = scheme.len() + 3 + rest.find('/')?;
    let path = &location[path_start..];
    let first_glob = path.find(['*', '?', '['])?;
    let last_separator = path[..first_glob].rfind('/')?;
    Some(location.split_at(path_start + last_separator + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::path::Path;

    #[test]
    fn test_url_globs_are_split_at_the_last_separator_before_the_pattern() {
        assert_eq!(split_url_glob("s3://iot/fleet/*.tsfile"), Some(("s3://iot/fleet/", "*.tsfile")));
        assert_eq!(split_url_glob("s3://iot/fleet/2024-*/d?.tsfile"), Some(("s3://iot/fleet/", "2024-*/d?.tsfile")));
        assert_eq!(split_url_glob("http://h:8080/a/[ab].tsfile"), Some(("http://h:8080/a/", "[ab].tsfile")));
        assert_eq!(split_url_glob("s3://iot/fleet/a.tsfile"), None);
        assert_eq!(split_url_glob("s3://iot"), None);
        assert_eq!(split_url_glob("data/*.tsfile"), None);
        assert_eq!(split_url_glob("file:///tmp/*.tsfile"), None);

        let url = parse_location("s3://iot/fleet/*.tsfile").unwrap();
        assert_eq!(url.scheme(), "s3");
        assert_eq!(url.prefix().as_ref(), "fleet");
        assert!(url.contains(&Path::from("fleet/a.tsfile"), true));
        assert!(!url.contains(&Path::from("fleet/a.parquet"), true));
        assert!(!url.contains(&Path::from("other/a.tsfile"), true));
        let nested = parse_location("s3://iot/fleet/2024-*/*.tsfile").unwrap();
        assert!(nested.contains(&Path::from("fleet/2024-01/a.tsfile"), false));
        assert!(!nested.contains(&Path::from("fleet/2023-12/a.tsfile"), false));
        // Without a glob, URLs and local paths parse as DataFusion parses them.
        assert_eq!(parse_location("s3://iot/fleet/a.tsfile").unwrap().as_str(), "s3://iot/fleet/a.tsfile");
        assert!(parse_location("s3://iot/fleet/[.tsfile").is_err());
    }
}
