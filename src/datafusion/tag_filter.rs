//! The TAG values a scan's predicate allows: from a conjunction holding `tag = 'a'`,
//! `'a' = tag`, `tag IN ('a', 'b')` or a disjunction of those on the same TAG, only devices with one of those values in that TAG
//! can hold a matching row. The scan checks these against each device's identifier (a
//! string comparison) before it builds pruning statistics, so a one-device query on a
//! file of many devices costs one pass over the device list, not a statistics container per
//! device. DataFusion still applies the whole predicate to what is emitted.

use std::collections::HashSet;
use std::sync::Arc;

use datafusion::common::ScalarValue;
use datafusion::logical_expr::Operator;
use datafusion::physical_expr::expressions::{BinaryExpr, Column, InListExpr, Literal};
use datafusion::physical_plan::PhysicalExpr;

use crate::format::DeviceId;

/// Allowed values of TAG columns, each given by its segment in the device identifier.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TagFilter {
    /// (segment, allowed values); a device must match every entry.
    allowed: Vec<(usize, HashSet<String>)>,
}

impl TagFilter {
    /// The TAG constraints of `predicate`; `segment_of` maps a column name to its TAG
    /// segment (`None` for a column that is not a TAG).
    pub fn new(predicate: &Arc<dyn PhysicalExpr>, segment_of: &dyn Fn(&str) -> Option<usize>) -> Self {
        let mut filter = TagFilter::default();
        filter.collect(predicate, segment_of);
        filter
    }

    /// No constraint found (every device may match).
    pub fn is_empty(&self) -> bool {
        self.allowed.is_empty()
    }

    /// Whether `device` may hold a matching row (a null TAG never equals a value).
    pub fn allows(&self, device: &DeviceId) -> bool {
        self.allowed.iter().all(|(seg, values)| device.segment(*seg).is_some_and(|v| values.contains(v)))
    }

    /// The identifiers of every device of table `table` (with `tags` TAG columns) the filter
    /// allows, when it fixes every TAG column and they are at most `max`: each a device
    /// to look up by its index path instead of walking the device list. `None` otherwise.
    pub fn device_ids(&self, table: &str, tags: usize, max: usize) -> Option<Vec<DeviceId>> {
        let mut ids: Vec<Vec<Option<String>>> = vec![vec![Some(table.to_string())]];
        for seg in 1..=tags {
            let (_, values) = self.allowed.iter().find(|(s, _)| *s == seg)?;
            if ids.len().saturating_mul(values.len()) > max {
                return None;
            }
            let mut values: Vec<&String> = values.iter().collect();
            values.sort();
            ids = ids
                .iter()
                .flat_map(|prefix| {
                    values.iter().map(move |v| {
                        let mut id = prefix.clone();
                        id.push(Some((*v).clone()));
                        id
                    })
                })
                .collect();
        }
        Some(ids.into_iter().map(DeviceId::new).collect())
    }

    fn restrict(&mut self, seg: usize, values: HashSet<String>) {
        match self.allowed.iter_mut().find(|(s, _)| *s == seg) {
            Some((_, have)) => have.retain(|v| values.contains(v)),
            None => self.allowed.push((seg, values)),
        }
    }

    fn collect(&mut self, e: &Arc<dyn PhysicalExpr>, segment_of: &dyn Fn(&str) -> Option<usize>) {
        if let Some(b) = e.downcast_ref::<BinaryExpr>() {
            match b.op() {
                Operator::And => {
                    self.collect(b.left(), segment_of);
                    self.collect(b.right(), segment_of);
                }
                // A TAG both sides constrain takes either side's values (DataFusion writes a
                // short `IN` list as equalities joined by OR).
                Operator::Or => {
                    let (left, right) = (TagFilter::new(b.left(), segment_of), TagFilter::new(b.right(), segment_of));
                    for (seg, mut values) in left.allowed {
                        if let Some((_, more)) = right.allowed.iter().find(|(s, _)| *s == seg) {
                            values.extend(more.iter().cloned());
                            self.restrict(seg, values);
                        }
                    }
                }
                Operator::Eq => {
                    let pair = match (tag_segment(b.left(), segment_of), string_literal(b.right())) {
                        (Some(seg), Some(v)) => Some((seg, v)),
                        _ => tag_segment(b.right(), segment_of).zip(string_literal(b.left())),
                    };
                    if let Some((seg, v)) = pair {
                        self.restrict(seg, HashSet::from([v]));
                    }
                }
                _ => {}
            }
        } else if let Some(list) = e.downcast_ref::<InListExpr>() {
            if list.negated() {
                return;
            }
            let Some(seg) = tag_segment(list.expr(), segment_of) else { return };
            // Every item must be a string literal (a NULL item matches nothing and is dropped).
            let mut values = HashSet::new();
            for item in list.list() {
                match item.downcast_ref::<Literal>().map(|l| string_value(l.value())) {
                    Some(Some(Some(v))) => {
                        values.insert(v);
                    }
                    Some(Some(None)) => {}
                    _ => return,
                }
            }
            self.restrict(seg, values);
        }
    }
}

fn tag_segment(e: &Arc<dyn PhysicalExpr>, segment_of: &dyn Fn(&str) -> Option<usize>) -> Option<usize> {
    e.downcast_ref::<Column>().and_then(|c| segment_of(c.name()))
}

/// A non-null string literal's value.
fn string_literal(e: &Arc<dyn PhysicalExpr>) -> Option<String> {
    e.downcast_ref::<Literal>().and_then(|l| string_value(l.value())).flatten()
}

/// `Some(Some(v))` for a string, `Some(None)` for a null string, `None` for another type.
fn string_value(v: &ScalarValue) -> Option<Option<String>> {
    match v {
        ScalarValue::Utf8(s) | ScalarValue::Utf8View(s) | ScalarValue::LargeUtf8(s) => Some(s.clone()),
        ScalarValue::Dictionary(_, inner) => string_value(inner),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::{DataType, Field, Schema};
    use datafusion::physical_expr::expressions::{col, in_list, lit};

    fn bin(l: Arc<dyn PhysicalExpr>, op: Operator, r: Arc<dyn PhysicalExpr>) -> Arc<dyn PhysicalExpr> {
        Arc::new(BinaryExpr::new(l, op, r))
    }

    fn schema() -> Schema {
        let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        Schema::new(vec![
            Field::new("region", dict.clone(), true),
            Field::new("device", dict, true),
            Field::new("v", DataType::Int64, true),
        ])
    }

    fn segment_of(name: &str) -> Option<usize> {
        match name {
            "region" => Some(1),
            "device" => Some(2),
            _ => None,
        }
    }

    fn dev(region: Option<&str>, device: &str) -> DeviceId {
        DeviceId::new(vec![Some("t".to_string()), region.map(str::to_string), Some(device.to_string())])
    }

    fn dict(s: &str) -> ScalarValue {
        ScalarValue::Dictionary(Box::new(DataType::Int32), Box::new(ScalarValue::Utf8(Some(s.to_string()))))
    }

    #[test]
    fn test_equalities_and_in_lists_of_a_conjunction() {
        let s = schema();
        let (region, device, v) = (col("region", &s).unwrap(), col("device", &s).unwrap(), col("v", &s).unwrap());
        // device = 'd1' AND v > 5 AND 'r1' = region
        let e = bin(
            bin(device.clone(), Operator::Eq, lit(dict("d1"))),
            Operator::And,
            bin(bin(v.clone(), Operator::Gt, lit(5i64)), Operator::And, bin(lit("r1"), Operator::Eq, region.clone())),
        );
        let f = TagFilter::new(&e, &segment_of);
        assert!(f.allows(&dev(Some("r1"), "d1")));
        assert!(!f.allows(&dev(Some("r2"), "d1")));
        assert!(!f.allows(&dev(Some("r1"), "d2")));
        assert!(!f.allows(&dev(None, "d1")), "a null tag equals nothing");

        // IN lists intersect with equalities on the same tag; a NULL item matches nothing.
        let list = in_list(device.clone(), vec![lit("d1"), lit("d2"), lit(ScalarValue::Utf8(None))], &false, &s).unwrap();
        let f = TagFilter::new(&list, &segment_of);
        assert!(f.allows(&dev(None, "d1")) && f.allows(&dev(None, "d2")) && !f.allows(&dev(None, "d3")));
        let both = bin(list, Operator::And, bin(device.clone(), Operator::Eq, lit("d2")));
        let f = TagFilter::new(&both, &segment_of);
        assert!(!f.allows(&dev(None, "d1")) && f.allows(&dev(None, "d2")));
        // Contradicting equalities allow nothing.
        let none = bin(bin(device.clone(), Operator::Eq, lit("d1")), Operator::And, bin(device.clone(), Operator::Eq, lit("d2")));
        let f = TagFilter::new(&none, &segment_of);
        assert!(!f.is_empty() && !f.allows(&dev(None, "d1")) && !f.allows(&dev(None, "d2")));
        // Equalities on one TAG joined by OR (a short IN list as DataFusion writes it) allow
        // either value; OR over two different TAGs allows any device.
        let either = bin(
            bin(bin(device.clone(), Operator::Eq, lit("d1")), Operator::And, bin(region.clone(), Operator::Eq, lit("r1"))),
            Operator::Or,
            bin(device.clone(), Operator::Eq, lit("d3")),
        );
        let f = TagFilter::new(&either, &segment_of);
        assert!(f.allows(&dev(Some("r9"), "d1")) && f.allows(&dev(None, "d3")) && !f.allows(&dev(Some("r1"), "d2")));
        let across =
            bin(bin(device.clone(), Operator::Eq, lit("d1")), Operator::Or, bin(region.clone(), Operator::Eq, lit("r1")));
        assert!(TagFilter::new(&across, &segment_of).is_empty());
    }

    #[test]
    fn test_device_ids_when_every_tag_is_fixed() {
        let s = schema();
        let (region, device) = (col("region", &s).unwrap(), col("device", &s).unwrap());
        let regions = in_list(region.clone(), vec![lit("r2"), lit("r1")], &false, &s).unwrap();
        let e = bin(regions, Operator::And, in_list(device.clone(), vec![lit("d1"), lit("d2"), lit("d3")], &false, &s).unwrap());
        let f = TagFilter::new(&e, &segment_of);
        let ids = f.device_ids("t", 2, 6).unwrap();
        let paths: Vec<String> = ids.iter().map(|d| d.path()).collect();
        assert_eq!(paths, ["t.r1.d1", "t.r1.d2", "t.r1.d3", "t.r2.d1", "t.r2.d2", "t.r2.d3"]);
        assert!(ids.iter().all(|d| f.allows(d)));
        // More than `max`, or a TAG left open: no list (the device list is walked instead).
        assert!(f.device_ids("t", 2, 5).is_none());
        assert!(f.device_ids("t", 3, 100).is_none());
        let only_device = TagFilter::new(&bin(device, Operator::Eq, lit("d1")), &segment_of);
        assert!(only_device.device_ids("t", 2, 100).is_none());
        assert_eq!(only_device.device_ids("t", 0, 100).map(|v| v.len()), Some(1));
    }

    #[test]
    fn test_no_constraint_from_what_does_not_imply_one() {
        let s = schema();
        let (device, v) = (col("device", &s).unwrap(), col("v", &s).unwrap());
        let cases = [
            // OR, NOT IN, inequality, a non-TAG column, a non-string literal.
            bin(bin(device.clone(), Operator::Eq, lit("d1")), Operator::Or, bin(v.clone(), Operator::Gt, lit(5i64))),
            in_list(device.clone(), vec![lit("d1")], &true, &s).unwrap(),
            bin(device.clone(), Operator::NotEq, lit("d1")),
            bin(device.clone(), Operator::Lt, lit("d1")),
            bin(v.clone(), Operator::Eq, lit(5i64)),
            bin(device.clone(), Operator::Eq, lit(ScalarValue::Utf8(None))),
            in_list(device.clone(), vec![lit("d1"), v.clone()], &false, &s).unwrap_or_else(|_| lit(true)),
        ];
        for e in cases {
            let f = TagFilter::new(&e, &segment_of);
            assert!(f.is_empty(), "{e}");
            assert!(f.allows(&dev(None, "d9")));
        }
    }
}
