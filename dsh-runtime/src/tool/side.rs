//! The [`SideChannel`]: what a body sends to the final result besides its output.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use tokio_util::sync::CancellationToken;

use crate::content::ContentBlock;

/// Context a body sends to the final result.
#[derive(Debug, Default)]
pub struct SideChannel {
    pub(super) deferred: Mutex<Vec<String>>,
    pub(super) attached: Mutex<Vec<ContentBlock>>,
    pub(super) concludes_turn: AtomicBool,
    /// Whether anything was ever deferred or attached (set under the lock of the list it
    /// went to), so that taking both lists of a body that sent nothing takes no lock.
    pub(super) sent: AtomicBool,
    /// The body's cancellation token, when the pipeline let it be created lazily (a child
    /// of the caller's token, made the first time the body asks for it).
    pub(super) child: OnceLock<CancellationToken>,
}

impl SideChannel {
    /// Take the deferred contexts, in the order they were deferred.
    pub fn take_deferred(&self) -> Vec<String> {
        if !self.sent.load(Ordering::Acquire) {
            return Vec::new();
        }
        std::mem::take(&mut *self.deferred.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Take the attached content blocks, in the order they were attached.
    pub fn take_attached(&self) -> Vec<ContentBlock> {
        if !self.sent.load(Ordering::Acquire) {
            return Vec::new();
        }
        std::mem::take(&mut *self.attached.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Whether the body asked to conclude the turn.
    pub fn concludes_turn(&self) -> bool {
        self.concludes_turn.load(Ordering::Acquire)
    }
}
