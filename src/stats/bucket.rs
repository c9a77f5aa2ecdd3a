//! Fixed-stride time buckets: `date_bin(stride, time, origin)` exactly as DataFusion 55 bins.
//!
//! DataFusion bins a timestamp in nanoseconds: it scales the value to nanoseconds
//! (`value * ns_per_unit`, checked), computes `origin + floor((t - origin) / stride) * stride`
//! with checked `i64` steps (floor division also for times before the origin and negative
//! times), and scales back with a truncating division. A step that overflows makes the result
//! NULL. [`TimeBuckets::bucket_start`] does the same and returns `None` exactly there, so a
//! bucket answered from statistics is the bucket DataFusion would put the rows in.
//!
//! [`TimeBuckets::new`] takes stride and origin in the file's own units (`ns_per_unit = 1`:
//! pure floor division); [`TimeBuckets::with_unit`] takes DataFusion's nanosecond stride and
//! origin and the nanoseconds per file unit (1 for ns, 1_000 for µs, 1_000_000 for ms).
//!
//! Only fixed strides: month and year intervals (DataFusion's `Interval::Months`) do not have a
//! fixed length and are not handled here; the caller decodes. A stride must be positive
//! (DataFusion rejects zero; a negative stride is refused here too).
//!
//! The bucket function is monotone (non-decreasing) in the timestamp, and defined on an
//! interval of timestamps, so a unit lies wholly inside one bucket iff its first and last
//! timestamps have the same bucket. A unit ending exactly on the next bucket's start is in two
//! buckets.

use crate::error::{Result, TsFileError};
use crate::stats::window::TimeSpan;

/// Where a unit's time span lies among buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BucketPlacement {
    /// Every timestamp is in the bucket starting at this time (in file units): answer the
    /// bucket from statistics.
    OneBucket(i64),
    /// The span crosses bucket edges: the first and last bucket starts (decode the unit).
    Several {
        /// The bucket of the span's first timestamp.
        first: i64,
        /// The bucket of the span's last timestamp.
        last: i64,
    },
    /// DataFusion's `date_bin` overflows (returns NULL) at an end of the span: decode.
    Unrepresentable,
}

/// A fixed-stride bucketing of timestamps, as `date_bin(stride, time, origin)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeBuckets {
    /// Stride in nanoseconds (or file units when `ns_per_unit == 1`); positive.
    stride: i64,
    /// Origin in the same units as `stride`.
    origin: i64,
    /// Nanoseconds per file timestamp unit (1 when stride and origin are in file units).
    ns_per_unit: i64,
}

impl TimeBuckets {
    /// Buckets of `stride` file units starting at `origin` (file units).
    pub fn new(stride: i64, origin: i64) -> Result<TimeBuckets> {
        TimeBuckets::with_unit(stride, origin, 1)
    }

    /// DataFusion's buckets: `stride_ns` and `origin_ns` in nanoseconds, file timestamps of
    /// `ns_per_unit` nanoseconds each.
    pub fn with_unit(stride_ns: i64, origin_ns: i64, ns_per_unit: i64) -> Result<TimeBuckets> {
        if stride_ns <= 0 {
            return Err(TsFileError::InvalidArgument(format!("date_bin stride must be positive, got {stride_ns}")));
        }
        if ns_per_unit <= 0 {
            return Err(TsFileError::InvalidArgument(format!("nanoseconds per time unit must be positive, got {ns_per_unit}")));
        }
        Ok(TimeBuckets { stride: stride_ns, origin: origin_ns, ns_per_unit })
    }

    /// `stride=<ns>ns, origin=<ns>ns` for plans and messages.
    pub fn describe(self) -> String {
        format!("stride={}ns, origin={}ns", self.stride, self.origin)
    }

    /// The start (file units) of the bucket holding `t`, or `None` where DataFusion's
    /// `date_bin` overflows and yields NULL.
    pub fn bucket_start(self, t: i64) -> Option<i64> {
        let scaled = t.checked_mul(self.ns_per_unit)?;
        let diff = scaled.checked_sub(self.origin)?;
        let binned = self.origin.checked_add(floor_distance(diff, self.stride)?)?;
        binned.checked_div(self.ns_per_unit)
    }

    /// Where `span` lies among the buckets.
    pub fn place(self, span: TimeSpan) -> BucketPlacement {
        match (self.bucket_start(span.start()), self.bucket_start(span.end())) {
            (Some(first), Some(last)) if first == last => BucketPlacement::OneBucket(first),
            (Some(first), Some(last)) => BucketPlacement::Several { first, last },
            _ => BucketPlacement::Unrepresentable,
        }
    }

    /// The bucket holding every timestamp of `span`, if there is one.
    pub fn single_bucket(self, span: TimeSpan) -> Option<i64> {
        match self.place(span) {
            BucketPlacement::OneBucket(b) => Some(b),
            _ => None,
        }
    }
}

/// `floor(diff / stride) * stride` with DataFusion's checked steps (`stride > 0`).
fn floor_distance(diff: i64, stride: i64) -> Option<i64> {
    let remainder = diff.checked_rem(stride)?;
    let toward_zero = diff.checked_sub(remainder)?;
    if diff < 0 && remainder != 0 {
        toward_zero.checked_sub(stride)
    } else {
        Some(toward_zero)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(a: i64, b: i64) -> TimeSpan {
        TimeSpan::new(a, b).unwrap()
    }

    #[test]
    fn test_rejects_non_positive_stride_and_unit() {
        assert!(TimeBuckets::new(0, 0).is_err());
        assert!(TimeBuckets::new(-5, 0).is_err());
        assert!(TimeBuckets::with_unit(5, 0, 0).is_err());
    }

    #[test]
    fn test_floor_for_negative_times_and_before_origin() {
        let b = TimeBuckets::new(10, 3).unwrap();
        assert_eq!(b.bucket_start(3), Some(3));
        assert_eq!(b.bucket_start(12), Some(3));
        assert_eq!(b.bucket_start(13), Some(13));
        assert_eq!(b.bucket_start(2), Some(-7));
        assert_eq!(b.bucket_start(-7), Some(-7));
        assert_eq!(b.bucket_start(-8), Some(-17));
    }

    #[test]
    fn test_stride_one_and_huge_stride() {
        let one = TimeBuckets::new(1, 0).unwrap();
        assert_eq!(one.bucket_start(-42), Some(-42));
        assert_eq!(one.place(span(5, 5)), BucketPlacement::OneBucket(5));
        assert_eq!(one.place(span(5, 6)), BucketPlacement::Several { first: 5, last: 6 });
        let huge = TimeBuckets::new(i64::MAX, 0).unwrap();
        assert_eq!(huge.place(span(0, i64::MAX - 1)), BucketPlacement::OneBucket(0));
        assert_eq!(huge.bucket_start(i64::MAX), Some(i64::MAX));
        assert_eq!(huge.bucket_start(-1), Some(-i64::MAX));
    }

    #[test]
    fn test_span_ending_on_next_bucket_start_is_two_buckets() {
        let b = TimeBuckets::new(100, 0).unwrap();
        assert_eq!(b.place(span(0, 99)), BucketPlacement::OneBucket(0));
        assert_eq!(b.place(span(0, 100)), BucketPlacement::Several { first: 0, last: 100 });
        assert_eq!(b.place(span(-100, -1)), BucketPlacement::OneBucket(-100));
        assert_eq!(b.single_bucket(span(-1, 0)), None);
    }

    #[test]
    fn test_extreme_timestamps() {
        let b = TimeBuckets::new(10, 0).unwrap();
        // floor(i64::MIN / 10) * 10 is below i64::MIN: DataFusion yields NULL.
        assert_eq!(b.bucket_start(i64::MIN), None);
        assert_eq!(b.place(span(i64::MIN, 0)), BucketPlacement::Unrepresentable);
        assert_eq!(b.bucket_start(i64::MAX), Some(i64::MAX - 7));
        // t - origin overflows.
        let late = TimeBuckets::new(10, 5).unwrap();
        assert_eq!(late.bucket_start(i64::MIN), None);
        let early = TimeBuckets::new(10, -5).unwrap();
        assert_eq!(early.bucket_start(i64::MAX), None);
        assert_eq!(TimeBuckets::new(1, 0).unwrap().bucket_start(i64::MIN), Some(i64::MIN));
    }

    #[test]
    fn test_with_unit_scales_like_datafusion() {
        // Milliseconds, 1 s buckets.
        let b = TimeBuckets::with_unit(1_000_000_000, 0, 1_000_000).unwrap();
        assert_eq!(b.bucket_start(1_999), Some(1_000));
        assert_eq!(b.bucket_start(-1), Some(-1_000));
        // value * 1e6 overflows nanoseconds: NULL in DataFusion.
        assert_eq!(b.bucket_start(i64::MAX / 1_000), None);
        // A stride that is not a whole number of ms: truncating division back to ms.
        let odd = TimeBuckets::with_unit(1_500_000, 0, 1_000_000).unwrap();
        assert_eq!(odd.bucket_start(2), Some(1));
        assert_eq!(odd.bucket_start(-1), Some(-1));
    }
}
