//! The running state of one aggregate of one group, fed with units' statistics or decoded
//! rows, over any column type.
//!
//! The typed accumulators of [`crate::stats`] (`MinMax<f64>`, `FirstLast<Vec<u8>>`, …) are
//! wrapped in one enum per family, chosen once from the column's [`TsDataType`]; dispatch
//! happens once per unit or per run of decoded rows, never per value.

use std::ops::Range;

use arrow_buffer::NullBuffer;

use crate::error::{Result, TsFileError};
use crate::format::{Statistics, TsDataType, ValueStatistics};
use crate::read::column::ColumnValues;
use crate::stats::facts;
use crate::stats::{
    Count, Extremum, FirstLast, FloatSum, IntSum, Merge, MinMax, NullTreatment, Offer, Position, StatValue, TimeExtent, TimeSpan,
};

/// An aggregate over a device's rows. Column indices refer to the value columns of the
/// [`SummaryQuery`](super::SummaryQuery).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    /// `count(*)`: rows.
    Rows,
    /// `count(x)`: non-null values.
    Count(usize),
    /// `sum(x)`: an integer sum (wrapping, as DataFusion's) for INT32/INT64, float64 otherwise.
    Sum(usize),
    /// `avg(x)`: float64 sum and count.
    Avg(usize),
    /// `min(x)` in total order.
    Min(usize),
    /// `max(x)` in total order.
    Max(usize),
    /// `min(time)`.
    MinTime,
    /// `max(time)`.
    MaxTime,
    /// `first_value(x ORDER BY time)`.
    First(usize, NullTreatment),
    /// `last_value(x ORDER BY time)`.
    Last(usize, NullTreatment),
}

impl AggFunc {
    /// The value column the aggregate reads, if any.
    pub fn column(self) -> Option<usize> {
        match self {
            AggFunc::Rows | AggFunc::MinTime | AggFunc::MaxTime => None,
            AggFunc::Count(c) | AggFunc::Sum(c) | AggFunc::Avg(c) | AggFunc::Min(c) | AggFunc::Max(c) => Some(c),
            AggFunc::First(c, _) | AggFunc::Last(c, _) => Some(c),
        }
    }
}

/// A value in the physical representation of its column's type (DATE as `YYYYMMDD`,
/// TIMESTAMP in file units).
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// SQL NULL.
    Null,
    /// BOOLEAN.
    Boolean(bool),
    /// INT32, DATE.
    Int32(i32),
    /// INT64, TIMESTAMP.
    Int64(i64),
    /// FLOAT.
    Float(f32),
    /// DOUBLE.
    Double(f64),
    /// TEXT, STRING.
    Bytes(Vec<u8>),
}

/// The answer of one aggregate.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// `count`: a number of rows or values.
    Count(u64),
    /// `sum`, `min`, `max`, `min(time)`, `max(time)` (NULL over no values).
    Value(Cell),
    /// `avg`: the float64 sum of `count` values (`count == 0`: NULL).
    Mean {
        /// Non-null values.
        count: u64,
        /// Their float64 sum.
        sum: f64,
    },
    /// `first_value`/`last_value`: the value and the time of its row (`None`: no row).
    Positioned(Option<(i64, Cell)>),
}

/// Runs a block with `$a` bound to the typed accumulator inside any variant of a typed enum.
macro_rules! typed_enum {
    ($name:ident, $acc:ident) => {
        /// A typed accumulator for any column type.
        #[derive(Debug, Clone, PartialEq)]
        enum $name {
            Boolean($acc<bool>),
            Int32($acc<i32>),
            Int64($acc<i64>),
            Float($acc<f32>),
            Double($acc<f64>),
            Bytes($acc<Vec<u8>>),
        }
    };
}

typed_enum!(TypedMinMax, MinMax);
typed_enum!(TypedFirstLast, FirstLast);

macro_rules! each {
    ($name:ident, $e:expr, $a:ident => $body:expr) => {
        match $e {
            $name::Boolean($a) => $body,
            $name::Int32($a) => $body,
            $name::Int64($a) => $body,
            $name::Float($a) => $body,
            $name::Double($a) => $body,
            $name::Bytes($a) => $body,
        }
    };
}

/// The state of one aggregate.
#[derive(Debug, Clone, PartialEq)]
pub struct AggState {
    func: AggFunc,
    acc: Acc,
    /// A decoded NaN was folded into a float `min`/`max` (units from statistics hold none:
    /// their bounds are trusted only without NaN).
    nan_folded: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Acc {
    Count(Count),
    IntSum(IntSum),
    FloatSum(FloatSum),
    MinMax(TypedMinMax),
    Time(TimeExtent),
    FirstLast(TypedFirstLast),
}

/// A column's decoded rows as the states read them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rows<'a> {
    /// Timestamps, one per row.
    pub times: &'a [i64],
    /// The values of every value column, with validity (`None`: every row valid).
    pub columns: &'a [(ColumnValues, Option<NullBuffer>)],
}

impl AggState {
    /// An empty state of `func` over value columns of `types`.
    pub fn new(func: AggFunc, types: &[TsDataType]) -> Result<AggState> {
        let ty = match func.column() {
            None => None,
            Some(c) => Some(*types.get(c).ok_or_else(|| TsFileError::InvalidArgument(format!("no value column {c}")))?),
        };
        let unsupported = || TsFileError::InvalidArgument(format!("{func:?} of a {ty:?} column"));
        let acc = match (func, ty) {
            (AggFunc::Rows | AggFunc::Count(_), _) => Acc::Count(Count::new()),
            (AggFunc::Sum(_), Some(TsDataType::Int32 | TsDataType::Int64)) => Acc::IntSum(IntSum::new()),
            (AggFunc::Sum(_), Some(TsDataType::Float | TsDataType::Double)) => Acc::FloatSum(FloatSum::new()),
            (AggFunc::Avg(_), Some(TsDataType::Int32 | TsDataType::Int64 | TsDataType::Float | TsDataType::Double)) => {
                Acc::FloatSum(FloatSum::new())
            }
            (AggFunc::Min(_), Some(t)) => Acc::MinMax(min_max(t, Extremum::Min).ok_or_else(unsupported)?),
            (AggFunc::Max(_), Some(t)) => Acc::MinMax(min_max(t, Extremum::Max).ok_or_else(unsupported)?),
            (AggFunc::MinTime | AggFunc::MaxTime, _) => Acc::Time(TimeExtent::new()),
            (AggFunc::First(_, n), Some(t)) => Acc::FirstLast(first_last(t, Position::First, n).ok_or_else(unsupported)?),
            (AggFunc::Last(_, n), Some(t)) => Acc::FirstLast(first_last(t, Position::Last, n).ok_or_else(unsupported)?),
            _ => return Err(unsupported()),
        };
        Ok(AggState { func, acc, nan_folded: false })
    }

    /// True when DataFusion's *grouped* `min`/`max` of a FLOAT/DOUBLE column may give another
    /// answer than this state's total-order one. DataFusion 55's groups accumulator for
    /// floats (`primitive_max_accumulator!` in `min_max.rs`) starts from the type's finite
    /// extreme (`f64::MIN` for `max`) and replaces the current value when `partial_cmp` says
    /// the new one is better *or* the two are unordered: a NaN anywhere makes the answer
    /// depend on row order, equal zeros keep whichever sign came first, and a group whose
    /// only values are −∞ has `max` `f64::MIN` (`min` of +∞ only: `f64::MAX`). Its
    /// ungrouped accumulator (Arrow's kernels) is the total order this state computes.
    pub fn float_extreme_order_dependent(&self) -> bool {
        let Acc::MinMax(m) = &self.acc else { return false };
        let (answer, which) = match m {
            TypedMinMax::Float(a) => (a.clone().finish().map(f64::from), a.which()),
            TypedMinMax::Double(a) => (a.clone().finish(), a.which()),
            _ => return false,
        };
        let unpassable = match which {
            Extremum::Max => f64::NEG_INFINITY,
            Extremum::Min => f64::INFINITY,
        };
        self.nan_folded || answer.is_some_and(|v| v == 0.0 || v.is_nan() || v == unpassable)
    }

    /// Fold in a unit (page, chunk or series) from its time statistics `rows` and the value
    /// statistics of each value column (`None`: the column has no value in the unit). A unit
    /// whose statistics contradict themselves (`start_time > end_time`, a value count above
    /// the rows: [`crate::stats::facts`]) is never folded in: decode it.
    pub fn offer_unit(&mut self, rows: &Statistics, values: &[Option<&Statistics>]) -> Offer {
        if !facts::time_consistent(rows) {
            return Offer::Decode;
        }
        let empty;
        let column = match self.func.column() {
            None => None,
            Some(c) => match values.get(c) {
                Some(Some(s)) => Some(*s),
                Some(None) => {
                    empty = Statistics { count: 0, start_time: 0, end_time: 0, values: ValueStatistics::None };
                    Some(&empty)
                }
                None => return Offer::Decode,
            },
        };
        let v = column.unwrap_or(rows);
        if !facts::count_fits(v, Some(rows.count)) {
            return Offer::Decode;
        }
        match &mut self.acc {
            Acc::Count(c) => c.offer_unit(v),
            Acc::IntSum(s) => s.offer_unit(v),
            Acc::FloatSum(s) => s.offer_unit(v),
            Acc::MinMax(m) => each!(TypedMinMax, m, a => a.offer_unit(v)),
            Acc::Time(t) => t.offer_unit(rows),
            Acc::FirstLast(f) => each!(TypedFirstLast, f, a => a.offer_unit(TimeSpan::of(rows), v)),
        }
    }

    /// Fold in decoded rows `range` of `rows`.
    pub(crate) fn offer_rows(&mut self, rows: Rows<'_>, range: Range<usize>) -> Result<()> {
        let times = rows.times.get(range.clone()).ok_or_else(|| rows_error(&range))?;
        let column = match self.func.column() {
            None => None,
            Some(c) => Some(rows.columns.get(c).ok_or_else(|| rows_error(&range))?),
        };
        let column = column.map(|(values, nulls)| Column { values, nulls: nulls.as_ref() });
        match (&mut self.acc, column) {
            (Acc::Count(c), None) => {
                c.offer_values(times.len() as u64);
            }
            (Acc::Count(c), Some(col)) => {
                c.offer_values(col.valid_in(&range)? as u64);
            }
            (Acc::Time(t), _) => {
                if let (Some(lo), Some(hi)) = (times.iter().min(), times.iter().max()) {
                    t.offer_time(*lo);
                    t.offer_time(*hi);
                }
            }
            (Acc::IntSum(s), Some(col)) => col.for_each_integer(&range, |v| s.offer_value(v))?,
            (Acc::FloatSum(s), Some(col)) => col.for_each_float(&range, |v| s.offer_value(v))?,
            (Acc::MinMax(m), Some(col)) => {
                self.nan_folded |= col.any_nan(&range)?;
                fold_extreme(m, col, &range)?
            }
            (Acc::FirstLast(f), Some(col)) => fold_positioned(f, col, times, &range)?,
            _ => return Err(TsFileError::InvalidArgument(format!("{:?} needs a value column", self.func))),
        }
        Ok(())
    }

    /// The answer, or `NeedDecode` when the rows tie on time with different values
    /// (`first_value`/`last_value`), where DataFusion's choice is unspecified.
    pub fn finish(self) -> Merge<Answer> {
        let answer = match self.acc {
            Acc::Count(c) => Answer::Count(c.value()),
            Acc::IntSum(s) => Answer::Value(s.finish().map_or(Cell::Null, Cell::Int64)),
            Acc::FloatSum(s) => match self.func {
                AggFunc::Avg(_) => Answer::Mean { count: s.count(), sum: s.sum().unwrap_or(0.0) },
                _ => Answer::Value(s.sum().map_or(Cell::Null, Cell::Double)),
            },
            Acc::MinMax(m) => Answer::Value(match m {
                TypedMinMax::Boolean(a) => a.finish().map_or(Cell::Null, Cell::Boolean),
                TypedMinMax::Int32(a) => a.finish().map_or(Cell::Null, Cell::Int32),
                TypedMinMax::Int64(a) => a.finish().map_or(Cell::Null, Cell::Int64),
                TypedMinMax::Float(a) => a.finish().map_or(Cell::Null, Cell::Float),
                TypedMinMax::Double(a) => a.finish().map_or(Cell::Null, Cell::Double),
                TypedMinMax::Bytes(a) => a.finish().map_or(Cell::Null, Cell::Bytes),
            }),
            Acc::Time(t) => {
                let v = if self.func == AggFunc::MinTime { t.min() } else { t.max() };
                Answer::Value(v.map_or(Cell::Null, Cell::Int64))
            }
            Acc::FirstLast(f) => {
                let best = match f {
                    TypedFirstLast::Boolean(a) => positioned(a, Cell::Boolean),
                    TypedFirstLast::Int32(a) => positioned(a, Cell::Int32),
                    TypedFirstLast::Int64(a) => positioned(a, Cell::Int64),
                    TypedFirstLast::Float(a) => positioned(a, Cell::Float),
                    TypedFirstLast::Double(a) => positioned(a, Cell::Double),
                    TypedFirstLast::Bytes(a) => positioned(a, Cell::Bytes),
                };
                match best {
                    Some(b) => Answer::Positioned(b),
                    None => return Merge::NeedDecode,
                }
            }
        };
        Merge::Exact(answer)
    }
}

/// A first/last answer with its time, `None` on an ambiguous tie.
fn positioned<T: StatValue>(a: FirstLast<T>, cell: impl Fn(T) -> Cell) -> Option<Option<(i64, Cell)>> {
    match a.finish_with_time() {
        Merge::Exact(best) => Some(best.map(|(t, v)| (t, v.map_or(Cell::Null, &cell)))),
        Merge::NeedDecode => None,
    }
}

fn rows_error(range: &Range<usize>) -> TsFileError {
    TsFileError::InvalidArgument(format!("decoded rows {range:?} out of bounds"))
}

fn min_max(t: TsDataType, which: Extremum) -> Option<TypedMinMax> {
    Some(match t {
        TsDataType::Boolean => TypedMinMax::Boolean(MinMax::new(which)),
        TsDataType::Int32 | TsDataType::Date => TypedMinMax::Int32(MinMax::new(which)),
        TsDataType::Int64 | TsDataType::Timestamp => TypedMinMax::Int64(MinMax::new(which)),
        TsDataType::Float => TypedMinMax::Float(MinMax::new(which)),
        TsDataType::Double => TypedMinMax::Double(MinMax::new(which)),
        TsDataType::Text | TsDataType::String => TypedMinMax::Bytes(MinMax::new(which)),
        _ => return None,
    })
}

fn first_last(t: TsDataType, p: Position, n: NullTreatment) -> Option<TypedFirstLast> {
    Some(match t {
        TsDataType::Boolean => TypedFirstLast::Boolean(FirstLast::new(p, n)),
        TsDataType::Int32 | TsDataType::Date => TypedFirstLast::Int32(FirstLast::new(p, n)),
        TsDataType::Int64 | TsDataType::Timestamp => TypedFirstLast::Int64(FirstLast::new(p, n)),
        TsDataType::Float => TypedFirstLast::Float(FirstLast::new(p, n)),
        TsDataType::Double => TypedFirstLast::Double(FirstLast::new(p, n)),
        TsDataType::Text | TsDataType::String => TypedFirstLast::Bytes(FirstLast::new(p, n)),
        _ => return None,
    })
}

/// One decoded column.
#[derive(Clone, Copy)]
struct Column<'a> {
    values: &'a ColumnValues,
    nulls: Option<&'a NullBuffer>,
}

impl Column<'_> {
    fn valid(&self, i: usize) -> bool {
        self.nulls.is_none_or(|n| n.is_valid(i))
    }

    fn check(&self, range: &Range<usize>) -> Result<()> {
        if range.end > self.values.len() || self.nulls.is_some_and(|n| range.end > n.len()) {
            return Err(rows_error(range));
        }
        Ok(())
    }

    /// Non-null values in `range`.
    fn valid_in(&self, range: &Range<usize>) -> Result<usize> {
        self.check(range)?;
        Ok(match self.nulls {
            None => range.len(),
            Some(n) => range.len() - n.slice(range.start, range.len()).null_count(),
        })
    }

    /// True when a valid float value in `range` is NaN (false for other types).
    fn any_nan(&self, range: &Range<usize>) -> Result<bool> {
        self.check(range)?;
        Ok(match self.values {
            ColumnValues::Float(v) => range.clone().any(|i| self.valid(i) && v[i].is_nan()),
            ColumnValues::Double(v) => range.clone().any(|i| self.valid(i) && v[i].is_nan()),
            _ => false,
        })
    }

    fn for_each_integer(&self, range: &Range<usize>, mut f: impl FnMut(i64)) -> Result<()> {
        self.check(range)?;
        match self.values {
            ColumnValues::Int32(v) => range.clone().filter(|&i| self.valid(i)).for_each(|i| f(i64::from(v[i]))),
            ColumnValues::Int64(v) => range.clone().filter(|&i| self.valid(i)).for_each(|i| f(v[i])),
            _ => return Err(TsFileError::InvalidArgument("integer sum of a non-integer column".into())),
        }
        Ok(())
    }

    fn for_each_float(&self, range: &Range<usize>, mut f: impl FnMut(f64)) -> Result<()> {
        self.check(range)?;
        match self.values {
            ColumnValues::Int32(v) => range.clone().filter(|&i| self.valid(i)).for_each(|i| f(f64::from(v[i]))),
            ColumnValues::Int64(v) => range.clone().filter(|&i| self.valid(i)).for_each(|i| f(v[i] as f64)),
            ColumnValues::Float(v) => range.clone().filter(|&i| self.valid(i)).for_each(|i| f(f64::from(v[i]))),
            ColumnValues::Double(v) => range.clone().filter(|&i| self.valid(i)).for_each(|i| f(v[i])),
            _ => return Err(TsFileError::InvalidArgument("float sum of a non-numeric column".into())),
        }
        Ok(())
    }

    /// The index of the best valid value in `range` by `better(a, b)` (a replaces b).
    fn best_index<'v, T: ?Sized + 'v>(
        &self,
        range: &Range<usize>,
        get: impl Fn(usize) -> &'v T,
        better: impl Fn(&T, &T) -> bool,
    ) -> Option<usize> {
        let mut best: Option<usize> = None;
        for i in range.clone().filter(|&i| self.valid(i)) {
            if best.is_none_or(|b| better(get(i), get(b))) {
                best = Some(i);
            }
        }
        best
    }
}

/// Value `i` of decoded strings (empty if the offsets were inconsistent, which the decoder
/// never produces).
fn bytes_at(v: &crate::encoding::BinaryValues, i: usize) -> &[u8] {
    let bounds = v.offsets.get(i).zip(v.offsets.get(i + 1));
    bounds.and_then(|(a, b)| v.data.get(usize::try_from(*a).ok()?..usize::try_from(*b).ok()?)).unwrap_or_default()
}

/// Fold the extreme of a run into a min/max accumulator: one owned value per run.
fn fold_extreme(m: &mut TypedMinMax, col: Column<'_>, range: &Range<usize>) -> Result<()> {
    col.check(range)?;
    let mismatch = || TsFileError::InvalidArgument("min/max accumulator of another type than its column".into());
    macro_rules! prim {
        ($acc:expr, $v:expr) => {{
            let which = extremum_of($acc);
            let better = |a: &_, b: &_| StatValue::total_cmp(a, b) == wanted(which);
            if let Some(i) = col.best_index(range, |i| &$v[i], better) {
                $acc.offer_value($v[i]);
            }
        }};
    }
    match (m, col.values) {
        (TypedMinMax::Int32(a), ColumnValues::Int32(v)) => prim!(a, v),
        (TypedMinMax::Int64(a), ColumnValues::Int64(v)) => prim!(a, v),
        (TypedMinMax::Float(a), ColumnValues::Float(v)) => prim!(a, v),
        (TypedMinMax::Double(a), ColumnValues::Double(v)) => prim!(a, v),
        (TypedMinMax::Boolean(a), ColumnValues::Boolean(v)) => {
            for i in range.clone().filter(|&i| col.valid(i)) {
                a.offer_value(v.get_bit(i));
            }
        }
        (TypedMinMax::Bytes(a), ColumnValues::Binary(v)) => {
            let which = extremum_of(a);
            let better = |x: &[u8], y: &[u8]| x.cmp(y) == wanted(which);
            if let Some(i) = col.best_index(range, |i| bytes_at(v, i), better) {
                a.offer_value(bytes_at(v, i).to_vec());
            }
        }
        _ => return Err(mismatch()),
    }
    Ok(())
}

fn extremum_of<T: StatValue>(m: &MinMax<T>) -> Extremum {
    m.which()
}

fn wanted(which: Extremum) -> std::cmp::Ordering {
    match which {
        Extremum::Min => std::cmp::Ordering::Less,
        Extremum::Max => std::cmp::Ordering::Greater,
    }
}

/// Fold the rows of a run at its best time into a first/last accumulator (ties included,
/// so an ambiguity is seen); no allocation for the other rows.
fn fold_positioned(f: &mut TypedFirstLast, col: Column<'_>, times: &[i64], range: &Range<usize>) -> Result<()> {
    col.check(range)?;
    let (position, nulls) = each!(TypedFirstLast, &*f, a => (a.position(), a.null_treatment()));
    let counts = |i: usize| nulls == NullTreatment::Respect || col.valid(i);
    // `times` is the slice for `range`.
    let time_at = |i: usize| times[i - range.start];
    let mut best: Option<i64> = None;
    for i in range.clone().filter(|&i| counts(i)) {
        let t = time_at(i);
        let better = match (best, position) {
            (None, _) => true,
            (Some(b), Position::First) => t < b,
            (Some(b), Position::Last) => t > b,
        };
        if better {
            best = Some(t);
        }
    }
    let Some(best) = best else { return Ok(()) };
    for i in range.clone().filter(|&i| counts(i) && time_at(i) == best) {
        let valid = col.valid(i);
        match (&mut *f, col.values) {
            (TypedFirstLast::Boolean(a), ColumnValues::Boolean(v)) => a.offer_row(best, valid.then(|| v.get_bit(i))),
            (TypedFirstLast::Int32(a), ColumnValues::Int32(v)) => a.offer_row(best, valid.then(|| v[i])),
            (TypedFirstLast::Int64(a), ColumnValues::Int64(v)) => a.offer_row(best, valid.then(|| v[i])),
            (TypedFirstLast::Float(a), ColumnValues::Float(v)) => a.offer_row(best, valid.then(|| v[i])),
            (TypedFirstLast::Double(a), ColumnValues::Double(v)) => a.offer_row(best, valid.then(|| v[i])),
            (TypedFirstLast::Bytes(a), ColumnValues::Binary(v)) => a.offer_row(best, valid.then(|| bytes_at(v, i).to_vec())),
            _ => return Err(TsFileError::InvalidArgument("first/last accumulator of another type than its column".into())),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use arrow_buffer::BooleanBuffer;

    use crate::encoding::BinaryValues;

    fn stats(count: u64, start: i64, end: i64, values: ValueStatistics) -> Statistics {
        Statistics { count, start_time: start, end_time: end, values }
    }

    fn nulls(valid: &[bool]) -> Option<NullBuffer> {
        Some(NullBuffer::new(BooleanBuffer::from(valid.to_vec())))
    }

    fn answer(s: AggState) -> Answer {
        match s.finish() {
            Merge::Exact(a) => a,
            Merge::NeedDecode => panic!("undecided"),
        }
    }

    #[test]
    fn test_rows_fold_counts_sums_and_extremes_with_nulls() {
        let times = [1, 2, 3, 4];
        let columns = [(ColumnValues::Int64(vec![i64::MAX, 5, 1, -3]), nulls(&[true, true, false, true]))];
        let rows = Rows { times: &times, columns: &columns };
        let types = [TsDataType::Int64];
        let mut count = AggState::new(AggFunc::Count(0), &types).unwrap();
        let mut sum = AggState::new(AggFunc::Sum(0), &types).unwrap();
        let mut min = AggState::new(AggFunc::Min(0), &types).unwrap();
        let mut last = AggState::new(AggFunc::Last(0, NullTreatment::Respect), &types).unwrap();
        for s in [&mut count, &mut sum, &mut min, &mut last] {
            s.offer_rows(rows, 0..2).unwrap();
            s.offer_rows(rows, 2..4).unwrap();
        }
        assert_eq!(answer(count), Answer::Count(3));
        // Wrapping, as DataFusion's integer sum.
        assert_eq!(answer(sum), Answer::Value(Cell::Int64(i64::MAX.wrapping_add(5).wrapping_add(-3))));
        assert_eq!(answer(min), Answer::Value(Cell::Int64(-3)));
        assert_eq!(answer(last), Answer::Positioned(Some((4, Cell::Int64(-3)))));
        // Out-of-range rows are an error, not a panic.
        let mut c = AggState::new(AggFunc::Count(0), &types).unwrap();
        assert!(c.offer_rows(rows, 2..9).is_err());
    }

    #[test]
    fn test_float_extremes_are_total_order_and_units_with_nan_are_decoded() {
        let types = [TsDataType::Double];
        let times = [1, 2, 3];
        let columns = [(ColumnValues::Double(vec![-0.0, f64::NAN, 0.0]), None)];
        let rows = Rows { times: &times, columns: &columns };
        let mut max = AggState::new(AggFunc::Max(0), &types).unwrap();
        let mut min = AggState::new(AggFunc::Min(0), &types).unwrap();
        max.offer_rows(rows, 0..3).unwrap();
        min.offer_rows(rows, 0..3).unwrap();
        assert!(matches!(answer(max), Answer::Value(Cell::Double(v)) if v.is_nan()));
        assert!(matches!(answer(min), Answer::Value(Cell::Double(v)) if v == 0.0 && v.is_sign_negative()));
        // A unit whose sum is NaN may hide a NaN: decode it.
        let time = stats(3, 1, 3, ValueStatistics::None);
        let nan = stats(3, 1, 3, ValueStatistics::Double { min: 1.0, max: 2.0, first: 1.0, last: 2.0, sum: f64::NAN });
        let mut max = AggState::new(AggFunc::Max(0), &types).unwrap();
        assert_eq!(max.offer_unit(&time, &[Some(&nan)]), Offer::Decode);
        let ok = stats(3, 1, 3, ValueStatistics::Double { min: 1.0, max: 2.0, first: 1.0, last: 2.0, sum: 4.5 });
        assert_eq!(max.offer_unit(&time, &[Some(&ok)]), Offer::Used);
        assert_eq!(answer(max), Answer::Value(Cell::Double(2.0)));
    }

    #[test]
    fn test_last_value_respects_a_null_at_the_last_row_and_reports_ties() {
        let types = [TsDataType::Int32];
        let time = stats(5, 10, 50, ValueStatistics::None);
        // The value column's last non-null value is at 40, the last row at 50: NULL.
        let values = stats(4, 10, 40, ValueStatistics::Int32 { min: 1, max: 9, first: 1, last: 9, sum: 20 });
        let mut respect = AggState::new(AggFunc::Last(0, NullTreatment::Respect), &types).unwrap();
        let mut ignore = AggState::new(AggFunc::Last(0, NullTreatment::Ignore), &types).unwrap();
        assert_eq!(respect.offer_unit(&time, &[Some(&values)]), Offer::Used);
        assert_eq!(ignore.offer_unit(&time, &[Some(&values)]), Offer::Used);
        assert_eq!(answer(respect), Answer::Positioned(Some((50, Cell::Null))));
        assert_eq!(answer(ignore), Answer::Positioned(Some((40, Cell::Int32(9)))));
        // Two rows at the same last time with different values: undecided.
        let times = [7, 7];
        let columns = [(ColumnValues::Int32(vec![1, 2]), None)];
        let mut tie = AggState::new(AggFunc::Last(0, NullTreatment::Respect), &types).unwrap();
        tie.offer_rows(Rows { times: &times, columns: &columns }, 0..2).unwrap();
        assert_eq!(tie.finish(), Merge::NeedDecode);
    }

    #[test]
    fn test_string_extremes_and_absent_columns() {
        let types = [TsDataType::String];
        let mut bytes = BinaryValues::new();
        for v in [&b"pear"[..], b"", b"apple"] {
            bytes.data.extend_from_slice(v);
            bytes.offsets.push(bytes.data.len() as i32);
        }
        let times = [1, 2, 3];
        let columns = [(ColumnValues::Binary(bytes), None)];
        let mut min = AggState::new(AggFunc::Min(0), &types).unwrap();
        let mut max = AggState::new(AggFunc::Max(0), &types).unwrap();
        min.offer_rows(Rows { times: &times, columns: &columns }, 0..3).unwrap();
        max.offer_rows(Rows { times: &times, columns: &columns }, 0..3).unwrap();
        assert_eq!(answer(min), Answer::Value(Cell::Bytes(Vec::new())));
        assert_eq!(answer(max), Answer::Value(Cell::Bytes(b"pear".to_vec())));
        // A column without a series in a unit holds no value there.
        let time = stats(2, 1, 2, ValueStatistics::None);
        let mut count = AggState::new(AggFunc::Count(0), &types).unwrap();
        let mut rows = AggState::new(AggFunc::Rows, &types).unwrap();
        assert_eq!(count.offer_unit(&time, &[None]), Offer::Used);
        assert_eq!(rows.offer_unit(&time, &[None]), Offer::Used);
        assert_eq!((answer(count), answer(rows)), (Answer::Count(0), Answer::Count(2)));
        // Unsupported combinations are refused when the state is made.
        assert!(AggState::new(AggFunc::Sum(0), &types).is_err());
        assert!(AggState::new(AggFunc::Min(3), &types).is_err());
    }
}
