//! What a store keeps in memory per owner for reads (the graph index, SQLite's entity pages), built
//! off the readers' path.
//!
//! Each is kept per owner and owner version (`owner_versions`: every write transaction that changes
//! an owner's rows bumps its count before it commits, so the count a read snapshot sees names that
//! owner's state in the snapshot exactly, whichever connection or process wrote it, and one owner's
//! write leaves every other owner's in place). Building one scans the owner's whole data: a tenth of
//! a second at scale 1, seconds to tens of seconds at scale 100. So reads never build: once a version
//! has answered enough reads by queries (two graph reads, a thousand projections), the next asks a
//! thread of the store's own to build it from a snapshot of its own, and reads answer from queries
//! (the same answers) until it is there. A one-shot process (`lore graph`, `lore show`) never asks.
//! Writes always query.

use std::collections::HashMap;
use std::sync::{mpsc, Arc, Condvar, Mutex};

use crate::{StoreError, StoreResult};

/// Owners kept at once; past it the others are dropped (bounds memory on a busy server; a build in
/// progress keeps its owner).
const MAX_OWNERS: usize = 32;

/// What a build made that readers do not need: freed on the build thread once the value is in use.
pub type Leftovers = Option<Box<dyn Send>>;

/// A value built for readers.
pub trait Settle: Send + Sync + 'static {
    /// Takes what the build needed and reads do not, to be freed after the value is in use.
    fn leftovers(&mut self) -> Leftovers {
        None
    }
}

/// Builds one owner's value from a snapshot of its own: the owner version it saw, and the value.
pub type BuildFn<T> = Box<dyn FnMut(&str) -> StoreResult<(i64, T)> + Send>;

struct Slot<T> {
    /// The newest owner version a read or a build has seen.
    version: i64,
    /// The value at `version`, once built.
    index: Option<Arc<T>>,
    /// Graph reads answered by queries at `version`.
    reads: u32,
    /// A build for this owner is queued or running.
    building: bool,
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Slot {
            version: 0,
            index: None,
            reads: 0,
            building: false,
        }
    }
}

struct Shared<T> {
    slots: Mutex<HashMap<String, Slot<T>>>,
    /// Notified whenever a build ends.
    ended: Condvar,
    /// Reads of one version answered by queries before a build is asked for.
    ask_after: u32,
}

/// One store's values of one kind, per owner, and the thread that builds them.
pub struct OwnerBuilds<T> {
    shared: Arc<Shared<T>>,
    requests: mpsc::Sender<Request<T>>,
}

/// What the build thread is asked to do.
enum Request<T> {
    /// Build the owner's value.
    Build(String),
    /// Drop a value a newer version replaced. Freeing a large one takes long (millions of
    /// allocations: seconds for a graph index at scale 100), so no read pays for it.
    Drop(Arc<T>),
}

impl<T: Settle> OwnerBuilds<T> {
    /// Starts the build thread (named `thread`); it ends when the store (the only sender) is
    /// dropped. Reads ask for a build on the `ask_after`th read of a version without one.
    pub fn start(thread: &str, ask_after: u32, mut build: BuildFn<T>) -> StoreResult<Self> {
        let shared = Arc::new(Shared {
            slots: Mutex::new(HashMap::new()),
            ended: Condvar::new(),
            ask_after,
        });
        let (requests, queued) = mpsc::channel::<Request<T>>();
        let thread_shared = shared.clone();
        std::thread::Builder::new()
            .name(thread.into())
            .spawn(move || {
                while let Ok(request) = queued.recv() {
                    match request {
                        Request::Build(owner) => {
                            build_until_current(&thread_shared, &owner, &mut build);
                        }
                        Request::Drop(value) => drop(value),
                    }
                }
            })
            .map_err(|error| StoreError::Backend(format!("cannot start {thread}: {error}")))?;
        Ok(OwnerBuilds { shared, requests })
    }

    /// The owner's value at `version` if it is built; otherwise counts the read and, on the
    /// `ask_after`th of the version, asks for a build. `None`: answer from queries.
    pub fn get(&self, owner: &str, version: i64) -> Option<Arc<T>> {
        self.lookup(owner, version, self.shared.ask_after)
    }

    /// Asks for the owner's value at `version` now, unless it is built or being built (a server's
    /// start, so that its first reads find it).
    pub fn prefetch(&self, owner: &str, version: i64) {
        self.lookup(owner, version, 1);
    }

    fn lookup(&self, owner: &str, version: i64, ask_after: u32) -> Option<Arc<T>> {
        let mut slots = self.shared.slots.lock().ok()?;
        if !slots.contains_key(owner) && slots.len() >= MAX_OWNERS {
            for slot in slots.values_mut().filter(|slot| !slot.building) {
                self.retire(slot.index.take());
            }
            slots.retain(|_, slot| slot.building);
        }
        let slot = slots.entry(owner.to_string()).or_default();
        if version < slot.version {
            // This snapshot is older than one already seen: its index is gone, queries answer.
            return None;
        }
        if version > slot.version {
            slot.version = version;
            slot.reads = 0;
            self.retire(slot.index.take());
        }
        if let Some(index) = &slot.index {
            return Some(index.clone());
        }
        slot.reads = slot.reads.saturating_add(1);
        if slot.reads >= ask_after && !slot.building {
            slot.building = self
                .requests
                .send(Request::Build(owner.to_string()))
                .is_ok();
        }
        None
    }

    /// Hands a value no read needs any more to the build thread to be dropped there (should the
    /// thread be gone, it is dropped here after all).
    fn retire(&self, value: Option<Arc<T>>) {
        if let Some(value) = value {
            let _ = self.requests.send(Request::Drop(value));
        }
    }

    /// The owner's value at `version` if it is built, without counting a read (reports, tests).
    pub fn held(&self, owner: &str, version: i64) -> Option<Arc<T>> {
        let slots = self.shared.slots.lock().ok()?;
        let slot = slots.get(owner)?;
        (slot.version == version).then(|| slot.index.clone())?
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
fn build_until_current<T: Settle>(shared: &Shared<T>, owner: &str, build: &mut BuildFn<T>) {
    loop {
        // A build that panics is a failed build: the thread and the reads go on.
        let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| build(owner)))
            .unwrap_or_else(|_| Err(StoreError::Backend("a build panicked".into())));
        let mut leftovers = None;
        let Ok(mut slots) = shared.slots.lock() else {
            return;
        };
        let slot = slots.entry(owner.to_string()).or_default();
        let again = match built {
            Ok((version, mut index)) if version >= slot.version => {
                if version > slot.version {
                    slot.version = version;
                    slot.reads = 0;
                }
                leftovers = index.leftovers();
                slot.index = Some(Arc::new(index));
                false
            }
            // Reads already see a newer version: build again if they still ask for one.
            Ok(_) => slot.index.is_none() && slot.reads >= shared.ask_after,
            Err(_) => {
                slot.reads = 0;
                false
            }
        };
        if !again {
            slot.building = false;
            drop(slots);
            shared.ended.notify_all();
            // On this thread, which made them (freed by another, they slowed its next build).
            drop(leftovers);
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

    use super::*;

    type Index = Vec<u8>;

    impl Settle for Index {}

    /// A build thread whose builds see `version` (or fail while it is negative) and are counted.
    fn builds(version: Arc<AtomicI64>, count: Arc<AtomicUsize>) -> OwnerBuilds<Index> {
        OwnerBuilds::start(
            "test-builds",
            2,
            Box::new(move |_owner| {
                count.fetch_add(1, Ordering::SeqCst);
                match version.load(Ordering::SeqCst) {
                    -1 => Err(StoreError::Backend("unreadable".into())),
                    -2 => panic!("a bug in the build"),
                    at => Ok((at, Index::default())),
                }
            }),
        )
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
        assert!(graphs.held("alice", 3).is_some() && graphs.get("alice", 3).is_some());
        // Another owner has nothing, and an older snapshot of this one answers from queries.
        assert!(graphs.held("bob", 3).is_none() && graphs.get("bob", 3).is_none());
        assert!(graphs.get("alice", 2).is_none() && graphs.held("alice", 3).is_some());
        // A write: the index at 3 no longer answers for 4.
        version.store(4, Ordering::SeqCst);
        assert!(graphs.get("alice", 4).is_none() && graphs.held("alice", 4).is_none());
        assert!(graphs.get("alice", 4).is_none());
        graphs.wait_idle();
        assert!(graphs.held("alice", 4).is_some());
    }

    #[test]
    fn a_build_behind_the_reads_builds_again() {
        // The build thread's first snapshot is older than the reads' (5, while they see 6).
        let seen = Arc::new(Mutex::new(vec![6, 5]));
        let builds_seen = seen.clone();
        let graphs = OwnerBuilds::start(
            "test-builds",
            2,
            Box::new(move |_owner| {
                let version = builds_seen.lock().unwrap().pop().unwrap_or(6);
                Ok((version, Index::default()))
            }),
        )
        .unwrap();
        graphs.get("alice", 6);
        graphs.get("alice", 6);
        graphs.wait_idle();
        assert!(graphs.held("alice", 6).is_some());
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
            assert!(graphs.held("alice", 1).is_none());
            assert_eq!(count.load(Ordering::SeqCst), 1);
            version.store(1, Ordering::SeqCst);
            graphs.get("alice", 1);
            graphs.get("alice", 1);
            graphs.wait_idle();
            assert!(graphs.held("alice", 1).is_some(), "{broken}");
        }
    }

    /// A value that records the thread it is dropped on.
    struct Recorded(Arc<Mutex<Vec<String>>>);

    impl Settle for Recorded {}

    impl Drop for Recorded {
        fn drop(&mut self) {
            let thread = std::thread::current().name().unwrap_or("").to_string();
            self.0.lock().unwrap().push(thread);
        }
    }

    #[test]
    fn a_replaced_value_is_dropped_on_the_build_thread_not_by_the_read() {
        let dropped = Arc::new(Mutex::new(Vec::new()));
        let record = dropped.clone();
        let version = Arc::new(AtomicI64::new(1));
        let seen = version.clone();
        let builds = OwnerBuilds::start(
            "test-drops",
            1,
            Box::new(move |_owner| Ok((seen.load(Ordering::SeqCst), Recorded(record.clone())))),
        )
        .unwrap();
        builds.get("alice", 1);
        builds.wait_idle();
        assert!(builds.held("alice", 1).is_some());
        // A read at a newer version replaces it: the read only hands it over.
        version.store(2, Ordering::SeqCst);
        builds.get("alice", 2);
        builds.wait_idle();
        assert!(builds.held("alice", 2).is_some());
        assert_eq!(*dropped.lock().unwrap(), vec!["test-drops".to_string()]);
    }

    #[test]
    fn prefetch_asks_at_once() {
        let (version, count) = (Arc::new(AtomicI64::new(1)), Arc::new(AtomicUsize::new(0)));
        let graphs = builds(version, count.clone());
        graphs.prefetch("alice", 1);
        graphs.wait_idle();
        assert!(graphs.held("alice", 1).is_some());
        graphs.prefetch("alice", 1);
        graphs.wait_idle();
        assert_eq!(count.load(Ordering::SeqCst), 1);
    }
}
