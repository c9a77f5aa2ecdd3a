//! Session options of the TsFile reader: `SET tsfile.<key> = <value>` in SQL, or
//! [`SessionConfig::with_option_extension`](datafusion::prelude::SessionConfig::with_option_extension)
//! in Rust. They switch reader-wide behaviour for every TsFile table of the session, on top
//! of each table's own options.
//!
//! | key | meaning | default |
//! | --- | --- | --- |
//! | `tsfile.statistics_aggregates` | answer aggregations from statistics (see [`TsFileStatisticsAggregate`](crate::datafusion::TsFileStatisticsAggregate)); `false` computes them from decoded rows, for every table whatever its own option says | `true` |

use datafusion::common::config::ConfigExtension;
use datafusion::common::extensions_options;

extensions_options! {
    /// TsFile options of a session (prefix `tsfile`), registered by
    /// [`register_tsfile_format`](crate::datafusion::register_tsfile_format).
    pub struct TsFileSessionOptions {
        /// Answer aggregations over TsFile tables from statistics (`false`: decode every row
        /// they read, whatever the tables' own `statistics_aggregates` option says).
        pub statistics_aggregates: bool, default = true
    }
}

impl ConfigExtension for TsFileSessionOptions {
    const PREFIX: &'static str = "tsfile";
}
