//! A write's second lane: the statements a write only sends to SQLite (a meeting's cascade, its
//! transcript segments, search documents, the revision) run on a helper thread while the writing
//! thread goes on in memory (settling slots, rebuilding entities), on the same connection and in
//! the same transaction.
//!
//! The connection sits behind a lock the two threads hand back and forth: the helper holds it for
//! one job at a time; the writing thread takes it for a statement whose answer it needs, after the
//! jobs sent before have run (so it reads what they wrote, and the statements run in the order the
//! write made them). A job's error is the write's: the jobs after it are skipped, the writing
//! thread gets the error at its next statement or when the write ends, and the transaction rolls
//! back as for any failed write.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use rusqlite::Connection;

use crate::sqlite::{ConnRef, SqliteTx};
use crate::{StoreError, StoreResult};

/// Statements sent to the helper: run on its view of the transaction.
pub(crate) type Job = Box<dyn FnOnce(&mut SqliteTx<'_>) -> StoreResult<()> + Send>;

/// What the writing thread and the helper share for one write.
pub(crate) struct Shared<'c> {
    connection: Mutex<&'c mut Connection>,
    owner: &'c str,
    state: Mutex<State>,
    idle: Condvar,
    /// Statements the helper ran.
    statements: AtomicU64,
}

#[derive(Default)]
struct State {
    /// Jobs sent and not yet run (or skipped).
    pending: usize,
    /// The first job's error; the jobs after it are skipped.
    error: Option<StoreError>,
}

fn unpoisoned<T>(lock: Result<T, PoisonError<T>>) -> T {
    // The helper catches a job's panic, so a lock is poisoned only by a bug in this module; its
    // state is a counter and an error, which stay meaningful.
    lock.unwrap_or_else(PoisonError::into_inner)
}

impl<'c> Shared<'c> {
    pub(crate) fn new(connection: &'c mut Connection, owner: &'c str) -> Shared<'c> {
        Shared {
            connection: Mutex::new(connection),
            owner,
            state: Mutex::new(State::default()),
            idle: Condvar::new(),
            statements: AtomicU64::new(0),
        }
    }

    /// Waits until every job sent has run; the first error among them, if any (taken: the write
    /// fails with it once).
    fn settled(&self) -> StoreResult<()> {
        let mut state = unpoisoned(self.state.lock());
        while state.pending > 0 {
            state = unpoisoned(self.idle.wait(state));
        }
        match state.error.take() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// The connection, for the writing thread, after every job sent before has run.
    fn take(&self) -> StoreResult<Held<'_, 'c>> {
        self.settled()?;
        Ok(Held(unpoisoned(self.connection.lock())))
    }

    /// How many statements the helper ran.
    pub(crate) fn statements(&self) -> u64 {
        self.statements.load(Ordering::Relaxed)
    }

    /// The helper's loop: runs the jobs in the order they were sent until the sender is dropped.
    pub(crate) fn serve(&self, jobs: Receiver<Job>) {
        for job in jobs {
            let failed = unpoisoned(self.state.lock()).error.is_some();
            if !failed {
                let mut tx = SqliteTx::on(
                    ConnRef::Locked(Box::new(Held(unpoisoned(self.connection.lock())))),
                    self.owner,
                );
                let outcome =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(&mut tx)))
                        .unwrap_or_else(|panic| {
                            Err(StoreError::Backend(format!(
                                "a statement of the write failed unexpectedly: {}",
                                crate::panic_message(&panic)
                            )))
                        });
                self.statements
                    .fetch_add(tx.statements.get(), Ordering::Relaxed);
                drop(tx);
                if let Err(error) = outcome {
                    unpoisoned(self.state.lock()).error.get_or_insert(error);
                }
            }
            let mut state = unpoisoned(self.state.lock());
            state.pending -= 1;
            if state.pending == 0 {
                self.idle.notify_all();
            }
        }
    }
}

/// The connection while one thread holds it.
pub(crate) struct Held<'s, 'c>(MutexGuard<'s, &'c mut Connection>);

impl std::ops::Deref for Held<'_, '_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        &self.0
    }
}

/// What the writing thread's end of the lane asks of the shared part (a trait, so that the
/// transaction's type does not carry the connection's lifetime).
pub(crate) trait Hub {
    fn take(&self) -> StoreResult<Box<dyn std::ops::Deref<Target = Connection> + '_>>;
    fn queued(&self);
    fn unqueued(&self);
    fn settled(&self) -> StoreResult<()>;
}

impl Hub for Shared<'_> {
    fn take(&self) -> StoreResult<Box<dyn std::ops::Deref<Target = Connection> + '_>> {
        Ok(Box::new(Shared::take(self)?))
    }

    fn queued(&self) {
        unpoisoned(self.state.lock()).pending += 1;
    }

    fn unqueued(&self) {
        unpoisoned(self.state.lock()).pending -= 1;
    }

    fn settled(&self) -> StoreResult<()> {
        Shared::settled(self)
    }
}

/// The writing thread's end of the lane: starts the helper when it first has a job for it.
pub(crate) struct Lane<'s> {
    shared: &'s dyn Hub,
    sender: Option<Sender<Job>>,
    spawn: &'s dyn Fn(Receiver<Job>) -> std::io::Result<()>,
}

impl<'s> Lane<'s> {
    /// `spawn` starts a scoped thread that calls [`Shared::serve`] with the receiver.
    pub(crate) fn new(
        shared: &'s dyn Hub,
        spawn: &'s dyn Fn(Receiver<Job>) -> std::io::Result<()>,
    ) -> Lane<'s> {
        Lane {
            shared,
            sender: None,
            spawn,
        }
    }

    /// The connection, after every job sent before has run.
    pub(crate) fn take(&self) -> StoreResult<Box<dyn std::ops::Deref<Target = Connection> + 's>> {
        self.shared.take()
    }

    /// Sends a job to the helper (the caller has let go of the connection).
    pub(crate) fn send(&mut self, job: Job) -> StoreResult<()> {
        let sender = match &mut self.sender {
            Some(sender) => sender,
            None => {
                let (sender, receiver) = channel();
                (self.spawn)(receiver).map_err(|error| {
                    StoreError::Backend(format!("starting the write's statement thread: {error}"))
                })?;
                self.sender.insert(sender)
            }
        };
        self.shared.queued();
        sender.send(job).map_err(|_| {
            // The helper is gone only if its thread could not run: nothing was queued.
            self.shared.unqueued();
            StoreError::Backend("the write's statement thread stopped".into())
        })
    }

    /// Ends the lane: every job has run (the helper's thread ends); the first error among them,
    /// if any.
    pub(crate) fn finish(&mut self) -> StoreResult<()> {
        self.sender = None;
        self.shared.settled()
    }
}
