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

pub use crate::plan::TagFilter;

/// The TAG constraints of `predicate`; `segment_of` maps a column name to its TAG segment
/// (`None` for a column that is not a TAG).
pub fn tag_filter_of(predicate: &Arc<dyn PhysicalExpr>, segment_of: &dyn Fn(&str) -> Option<usize>) -> TagFilter {
    let mut filter = TagFilter::default();
    collect(&mut filter, predicate, segment_of);
    filter
}

fn collect(filter: &mut TagFilter, e: &Arc<dyn PhysicalExpr>, segment_of: &dyn Fn(&str) -> Option<usize>) {
    if let Some(b) = e.downcast_ref::<BinaryExpr>() {
        match b.op() {
            Operator::And => {
                collect(filter, b.left(), segment_of);
                collect(filter, b.right(), segment_of);
            }
            // A TAG both sides constrain takes either side's values (DataFusion writes a
            // short `IN` list as equalities joined by OR).
            Operator::Or => {
                let (left, right) = (tag_filter_of(b.left(), segment_of), tag_filter_of(b.right(), segment_of));
                for (seg, values) in left.constraints() {
                    if let Some(more) = right.values(seg) {
                        filter.restrict(seg, values.union(more).cloned().collect());
                    }
                }
            }
            Operator::Eq => {
                let pair = match (tag_segment(b.left(), segment_of), string_literal(b.right())) {
                    (Some(seg), Some(v)) => Some((seg, v)),
                    _ => tag_segment(b.right(), segment_of).zip(string_literal(b.left())),
                };
                if let Some((seg, v)) = pair {
                    filter.restrict(seg, HashSet::from([v]));
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
        filter.restrict(seg, values);
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
    use crate::format::DeviceId;
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
        let f = tag_filter_of(&e, &segment_of);
        assert!(f.allows(&dev(Some("r1"), "d1")));
        assert!(!f.allows(&dev(Some("r2"), "d1")));
        assert!(!f.allows(&dev(Some("r1"), "d2")));
        assert!(!f.allows(&dev(None, "d1")), "a null tag equals nothing");

        // IN lists intersect with equalities on the same tag; a NULL item matches nothing.
        let list = in_list(device.clone(), vec![lit("d1"), lit("d2"), lit(ScalarValue::Utf8(None))], &false, &s).unwrap();
        let f = tag_filter_of(&list, &segment_of);
        assert!(f.allows(&dev(None, "d1")) && f.allows(&dev(None, "d2")) && !f.allows(&dev(None, "d3")));
        let both = bin(list, Operator::And, bin(device.clone(), Operator::Eq, lit("d2")));
        let f = tag_filter_of(&both, &segment_of);
        assert!(!f.allows(&dev(None, "d1")) && f.allows(&dev(None, "d2")));
        // Contradicting equalities allow nothing.
        let none = bin(bin(device.clone(), Operator::Eq, lit("d1")), Operator::And, bin(device.clone(), Operator::Eq, lit("d2")));
        let f = tag_filter_of(&none, &segment_of);
        assert!(!f.is_empty() && !f.allows(&dev(None, "d1")) && !f.allows(&dev(None, "d2")));
        // Equalities on one TAG joined by OR (a short IN list as DataFusion writes it) allow
        // either value; OR over two different TAGs allows any device.
        let either = bin(
            bin(bin(device.clone(), Operator::Eq, lit("d1")), Operator::And, bin(region.clone(), Operator::Eq, lit("r1"))),
            Operator::Or,
            bin(device.clone(), Operator::Eq, lit("d3")),
        );
        let f = tag_filter_of(&either, &segment_of);
        assert!(f.allows(&dev(Some("r9"), "d1")) && f.allows(&dev(None, "d3")) && !f.allows(&dev(Some("r1"), "d2")));
        let across =
            bin(bin(device.clone(), Operator::Eq, lit("d1")), Operator::Or, bin(region.clone(), Operator::Eq, lit("r1")));
        assert!(tag_filter_of(&across, &segment_of).is_empty());
    }

    #[test]
    fn test_device_ids_when_every_tag_is_fixed() {
        let s = schema();
        let (region, device) = (col("region", &s).unwrap(), col("device", &s).unwrap());
        let regions = in_list(region.clone(), vec![lit("r2"), lit("r1")], &false, &s).unwrap();
        let e = bin(regions, Operator::And, in_list(device.clone(), vec![lit("d1"), lit("d2"), lit("d3")], &false, &s).unwrap());
        let f = tag_filter_of(&e, &segment_of);
        let ids = f.device_ids("t", 2, 6).unwrap();
        let paths: Vec<String> = ids.iter().map(|d| d.path()).collect();
        assert_eq!(paths, ["t.r1.d1", "t.r1.d2", "t.r1.d3", "t.r2.d1", "t.r2.d2", "t.r2.d3"]);
        assert!(ids.iter().all(|d| f.allows(d)));
        // More than `max`, or a TAG left open: no list (the device list is walked instead).
        assert!(f.device_ids("t", 2, 5).is_none());
        assert!(f.device_ids("t", 3, 100).is_none());
        let only_device = tag_filter_of(&bin(device, Operator::Eq, lit("d1")), &segment_of);
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
            let f = tag_filter_of(&e, &segment_of);
            assert!(f.is_empty(), "{e}");
            assert!(f.allows(&dev(None, "d9")));
        }
    }
}
