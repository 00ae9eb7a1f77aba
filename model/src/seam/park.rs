//! Two assemblies in flight, driven step by step (SPEC EVT-5): a call parks in its reducer while
//! another node's calls run, then continues.
//!
//! ```text
//! driver                          call thread (world.call)
//!   arm the slot ---------------->  ... Started ... reducer invoked:
//!   wait for "parked or done" <---  take the slot, say "parked", wait for "resume"
//!   run the other calls
//!   say "resume" ---------------->  reducer continues ... Completed, Composed
//!   join  <-----------------------  the record
//! ```
//!
//! Nothing waits on time: each side blocks on the other's message, so the interleaving is the
//! same on every run and on both implementations (each world is driven the same way). A call
//! that never reaches its reducer finishes first; the other calls then run after it.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

use super::node::{CallPlan, CallRecord, NodeWorld};
use super::BoxedUpstream;
use crate::message::Message;
use crate::reducers::{UpstreamError, UpstreamReducer};

/// The two halves of one park: the reducer says "parked" and waits for "resume".
struct Park {
    parked: Sender<()>,
    resume: Receiver<()>,
}

/// Where a [`ParkingReducer`] finds the park it takes at its next invocation (empty: it does
/// not park).
#[derive(Clone, Default)]
pub struct ParkSlot(Arc<Mutex<Option<Park>>>);

impl std::fmt::Debug for ParkSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParkSlot").finish_non_exhaustive()
    }
}

impl ParkSlot {
    fn put(&self, park: Option<Park>) -> Option<Park> {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        std::mem::replace(&mut *slot, park)
    }
}

/// A reducer that, armed through its slot, parks at its next invocation until resumed, then
/// answers as `inner`.
pub struct ParkingReducer {
    /// The reducer answering.
    pub inner: BoxedUpstream<'static>,
    /// Where the park is armed.
    pub slot: ParkSlot,
}

impl std::fmt::Debug for ParkingReducer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParkingReducer").finish_non_exhaustive()
    }
}

impl UpstreamReducer for ParkingReducer {
    fn reduce(&mut self, messages: &[Message]) -> Result<Option<Vec<Message>>, UpstreamError> {
        if let Some(park) = self.slot.put(None) {
            // A closed channel means the driver is gone: go on rather than wait forever.
            let _ = park.parked.send(());
            let _ = park.resume.recv();
        }
        self.inner.reduce(messages)
    }
}

/// Calls `plan` on `world`, whose reducer is a [`ParkingReducer`] on `slot`: at the reducer's
/// first invocation the call parks and `during` runs (on the calling thread), then the call
/// continues to its end. Returns the call's record, whether it parked, and `during`'s answer
/// (computed after the call when it never reached its reducer).
pub fn call_parked<R>(
    world: &mut dyn NodeWorld,
    plan: &CallPlan,
    slot: &ParkSlot,
    during: impl FnOnce() -> R,
) -> (CallRecord, bool, R) {
    let (parked_tx, parked_rx) = channel();
    let (resume_tx, resume_rx) = channel();
    let done_tx = parked_tx.clone();
    slot.put(Some(Park {
        parked: parked_tx,
        resume: resume_rx,
    }));
    std::thread::scope(|s| {
        let call = s.spawn(move || {
            let record = world.call(plan);
            let _ = done_tx.send(());
            record
        });
        // "parked" from the reducer, or "done" from a call that never reached it.
        let _ = parked_rx.recv();
        let parked = slot.put(None).is_none();
        let answer = during();
        let _ = resume_tx.send(());
        match call.join() {
            Ok(record) => (record, parked, answer),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}
