//! The access plan: what a query reads of each file, decided below DataFusion.
//!
//! A file's reader and the views planning builds from it once and shares across queries
//! ([`FileView`]): per table the devices with their time series and where their field
//! series are ([`TableView`], [`DeviceView`], [`DeviceFields`] read on demand), per
//! tree-model key its devices and measurements ([`TreeView`]), the TAG values a query allows
//! ([`TagFilter`]), and the chunk bounds that let a device's chunks be fetched in one request.
//! On those, [`TableAccess`] plans a read: devices → chunk groups → pages, pruned by a
//! [`Pruner`] the caller supplies, fetched in runs and decoded into record batches.
//! The DataFusion layer only translates into it (expressions into TAG filters and pruning,
//! the plan into streams and metrics); the library's `TsFile` reads through the same views.
//! This layer knows nothing of DataFusion.

pub mod access;
pub mod file;
pub mod tags;
pub mod tree_view;
pub mod view;

pub use access::{
    column_roles, devices_in_range, AccessCounter, AccessRequest, ColumnRole, DevicePlan, Judgement, NoCounts, Pruner, Runs,
    TableAccess, Unit, UnitColumn, FETCH_RUN_BYTES,
};
pub use file::{default_table, FileView, PARTIAL_VIEW_MAX_DEVICES};
pub use tags::TagFilter;
pub use tree_view::{path_levels, TreeDevice, TreeView, ALL_TREE_DEVICES};
pub use view::{DeviceFields, DeviceView, TableView};
