//! A counting global allocator for the integration binary: each thread counts its own live
//! and peak heap bytes, so tests running in parallel do not disturb each other's figures.
//!
//! Frees are charged to the thread that frees, which is the allocating thread for the
//! synchronous library reads measured here ([`measure`] runs its closure on the caller's
//! thread). The counters are plain `Cell`s in a const-initialised `thread_local!` without a
//! destructor, so touching them never allocates.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Forwards to [`System`] and counts per thread.
pub struct Counting;

#[global_allocator]
static GLOBAL: Counting = Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn add(delta: isize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| {
            if now > peak.get() {
                peak.set(now);
            }
        });
    });
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged and only
// updates thread-local counters afterwards.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as `GlobalAlloc::alloc`.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as `GlobalAlloc::alloc_zeroed`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as `GlobalAlloc::dealloc`.
        unsafe { System.dealloc(ptr, layout) };
        add(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as `GlobalAlloc::realloc`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            add(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Run `f` on this thread and return its result and the peak of live heap bytes it added
/// above what was live when it started.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let out = f();
    let peak = PEAK.with(Cell::get);
    (out, usize::try_from(peak - start).unwrap_or(0))
}

#[test]
fn test_measure_counts_this_thread_only() {
    let (v, peak) = measure(|| vec![0u8; 3 << 20]);
    assert_eq!(v.len(), 3 << 20);
    assert!((3 << 20..4 << 20).contains(&peak), "{peak}");
    // Another thread's allocation is not counted here.
    let (_, peak) = measure(|| std::thread::spawn(|| vec![0u8; 8 << 20].len()).join().unwrap());
    assert!(peak < 1 << 20, "{peak}");
}
