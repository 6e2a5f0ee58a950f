//! The in-memory graph index, built off the readers' path.
//!
//! A store keeps one [`GraphIndex`] per owner and owner version (`owner_versions`: every write
//! transaction that changes an owner's rows bumps its count before it commits, so the count a read
//! snapshot sees names that owner's state in the snapshot exactly, whichever connection or process
//! wrote it). Building an index scans the owner's whole graph: 0.1 s at scale 1, tens of seconds at
//! scale 100. So reads never build: the second graph read of a version that finds no index asks a
//! thread of the store's own to build one, from a snapshot of its own, and answers from queries
//! (the same answers) until the index is there. A one-shot process (`lore graph`) reads once and
//! never asks. Writes always query.

use std::collections::HashMap;
use std::sync::{mpsc, Arc, Condvar, Mutex};

use crate::{GraphIndex, StoreError, StoreResult};

/// Graph reads of one version answered by queries before a build is asked for.
pub const BUILD_AFTER_READS: u32 = 2;

/// Owners whose index is kept at once; past it the others are dropped (bounds memory on a busy
/// server; a build in progress keeps its owner).
const MAX_OWNERS: usize = 32;

/// Builds one owner's index from a snapshot of its own: the owner version it saw, and the index.
pub type BuildFn = Box<dyn FnMut(&str) -> StoreResult<(i64, GraphIndex)> + Send>;

#[derive(Default)]
struct Slot {
    /// The newest owner version a read or a build has seen.
    version: i64,
    /// The index at `version`, once built.
    index: Option<Arc<GraphIndex>>,
    /// Graph reads answered by queries at `version`.
    reads: u32,
    /// A build for this owner is queued or running.
    building: bool,
}

#[derive(Default)]
struct Shared {
    slots: Mutex<HashMap<String, Slot>>,
    /// Notified whenever a build ends.
    ended: Condvar,
}

/// One store's graph indexes and the thread that builds them.
pub struct GraphBuilds {
    shared: Arc<Shared>,
    requests: mpsc::Sender<String>,
}

impl GraphBuilds {
    /// Starts the build thread; it ends when the store (the only sender) is dropped.
    pub fn start(mut build: BuildFn) -> StoreResult<GraphBuilds> {
        let shared = Arc::new(Shared::default());
        let (requests, queued) = mpsc::channel::<String>();
        let thread_shared = shared.clone();
        std::thread::Builder::new()
            .name("lore-graph-index".into())
            .spawn(move || {
                while let Ok(owner) = queued.recv() {
                    build_until_current(&thread_shared, &owner, &mut build);
                }
            })
            .map_err(|error| {
                StoreError::Backend(format!("cannot start the graph index thread: {error}"))
            })?;
        Ok(GraphBuilds { shared, requests })
    }

    /// The owner's index at `version` if it is built; otherwise counts the read and, on the
    /// [`BUILD_AFTER_READS`]th of the version, asks for a build. `None`: answer from queries.
    pub fn get(&self, owner: &str, version: i64) -> Option<Arc<GraphIndex>> {
        self.lookup(owner, version, BUILD_AFTER_READS)
    }

    /// Asks for the owner's index at `version` now, unless it is built or being built (a server's
    /// start, so that its first graph reads find it).
    pub fn prefetch(&self, owner: &str, version: i64) {
        self.lookup(owner, version, 1);
    }

    fn lookup(&self, owner: &str, version: i64, ask_after: u32) -> Option<Arc<GraphIndex>> {
        let mut slots = self.shared.slots.lock().ok()?;
        if !slots.contains_key(owner) && slots.len() >= MAX_OWNERS {
            slots.retain(|_, slot| slot.building);
        }
        let slot = slots.entry(owner.to_string()).or_default();
        if version < slot.version {
            // This snapshot is older than one already seen: its index is gone, queries answer.
            return None;
        }
        if version > slot.version {
            slot.version = version;
            slot.index = None;
            slot.reads = 0;
        }
        if let Some(index) = &slot.index {
            return Some(index.clone());
        }
        slot.reads = slot.reads.saturating_add(1);
        if slot.reads >= ask_after && !slot.building {
            slot.building = self.requests.send(owner.to_string()).is_ok();
        }
        None
    }

    /// Whether the owner's index at `version` is built (for reports and tests).
    pub fn holds(&self, owner: &str, version: i64) -> bool {
        self.shared.slots.lock().is_ok_and(|slots| {
            slots
                .get(owner)
                .is_some_and(|slot| slot.version == version && slot.index.is_some())
        })
    }

    /// Waits until no build is queued or running (benchmarks and tests).
    pub fn wait_idle(&self) {
        let Ok(slots) = self.shared.slots.lock() else {
            return;
        };
        let idle = self
            .shared
            .ended
            .wait_while(slots, |slots| slots.values().any(|slot| slot.building));
        drop(idle);
    }
}

/// Builds the owner's index; builds again while reads have moved to a newer version and still want
/// one. A failed build leaves the reads to queries and is asked for again by later reads.
fn build_until_current(shared: &Shared, owner: &str, build: &mut BuildFn) {
    loop {
        // A build that panics is a failed build: the thread and the reads go on.
        let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| build(owner)))
            .unwrap_or_else(|_| Err(StoreError::Backend("the graph index build panicked".into())));
        let Ok(mut slots) = shared.slots.lock() else {
            return;
        };
        let slot = slots.entry(owner.to_string()).or_default();
        let again = match built {
            Ok((version, index)) if version >= slot.version => {
                if version > slot.version {
                    slot.version = version;
                    slot.reads = 0;
                }
                slot.index = Some(Arc::new(index));
                false
            }
            // Reads already see a newer version: build again if they still ask for one.
            Ok(_) => slot.index.is_none() && slot.reads >= BUILD_AFTER_READS,
            Err(_) => {
                slot.reads = 0;
                false
            }
        };
        if !again {
            slot.building = false;
            drop(slots);
            shared.ended.notify_all();
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

    use super::*;

    /// A build thread whose builds see `version` (or fail while it is negative) and are counted.
    fn builds(version: Arc<AtomicI64>, count: Arc<AtomicUsize>) -> GraphBuilds {
        GraphBuilds::start(Box::new(move |_owner| {
            count.fetch_add(1, Ordering::SeqCst);
            match version.load(Ordering::SeqCst) {
                -1 => Err(StoreError::Backend("unreadable".into())),
                -2 => panic!("a bug in the build"),
                at => Ok((at, GraphIndex::default())),
            }
        }))
        .unwrap()
    }

    #[test]
    fn the_second_read_of_a_version_asks_and_a_newer_version_drops_the_index() {
        let (version, count) = (Arc::new(AtomicI64::new(3)), Arc::new(AtomicUsize::new(0)));
        let graphs = builds(version.clone(), count.clone());
        assert!(graphs.get("alice", 3).is_none());
        graphs.wait_idle();
        assert_eq!(count.load(Ordering::SeqCst), 0, "one read must not build");
        assert!(graphs.get("alice", 3).is_none());
        graphs.wait_idle();
        assert_eq!(count.load(Ordering::SeqCst), 1);
        assert!(graphs.holds("alice", 3) && graphs.get("alice", 3).is_some());
        // Another owner has nothing, and an older snapshot of this one answers from queries.
        assert!(!graphs.holds("bob", 3) && graphs.get("bob", 3).is_none());
        assert!(graphs.get("alice", 2).is_none() && graphs.holds("alice", 3));
        // A write: the index at 3 no longer answers for 4.
        version.store(4, Ordering::SeqCst);
        assert!(graphs.get("alice", 4).is_none() && !graphs.holds("alice", 4));
        assert!(graphs.get("alice", 4).is_none());
        graphs.wait_idle();
        assert!(graphs.holds("alice", 4));
    }

    #[test]
    fn a_build_behind_the_reads_builds_again() {
        // The build thread's first snapshot is older than the reads' (5, while they see 6).
        let seen = Arc::new(Mutex::new(vec![6, 5]));
        let builds_seen = seen.clone();
        let graphs = GraphBuilds::start(Box::new(move |_owner| {
            let version = builds_seen.lock().unwrap().pop().unwrap_or(6);
            Ok((version, GraphIndex::default()))
        }))
        .unwrap();
        graphs.get("alice", 6);
        graphs.get("alice", 6);
        graphs.wait_idle();
        assert!(graphs.holds("alice", 6));
        assert!(seen.lock().unwrap().is_empty(), "built once only");
    }

    #[test]
    fn failed_and_panicking_builds_leave_reads_to_queries_and_are_asked_again() {
        for broken in [-1, -2] {
            let (version, count) = (
                Arc::new(AtomicI64::new(broken)),
                Arc::new(AtomicUsize::new(0)),
            );
            let graphs = builds(version.clone(), count.clone());
            graphs.get("alice", 1);
            graphs.get("alice", 1);
            graphs.wait_idle();
            assert!(!graphs.holds("alice", 1));
            assert_eq!(count.load(Ordering::SeqCst), 1);
            version.store(1, Ordering::SeqCst);
            graphs.get("alice", 1);
            graphs.get("alice", 1);
            graphs.wait_idle();
            assert!(graphs.holds("alice", 1), "{broken}");
        }
    }

    #[test]
    fn prefetch_asks_at_once() {
        let (version, count) = (Arc::new(AtomicI64::new(1)), Arc::new(AtomicUsize::new(0)));
        let graphs = builds(version, count.clone());
        graphs.prefetch("alice", 1);
        graphs.wait_idle();
        assert!(graphs.holds("alice", 1));
        graphs.prefetch("alice", 1);
        graphs.wait_idle();
        assert_eq!(count.load(Ordering::SeqCst), 1);
    }
}
